package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// rateLimitCases are the cases of pc_rate_limit_windows (rate_limit.sql).
var rateLimitCases = []storeCase{
	{"RateLimitWindowLock/InsertIncrementPurge", testRateLimitWindow},
}

func testRateLimitWindow(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	start := now.Truncate(time.Minute)
	principal := randHex(t, 64)
	w := db.RateLimitWindow{
		PrincipalKey: principal, PolicyID: "api", WindowStartedAt: start, RequestCount: 1,
		ExpiresAt: start.Add(time.Minute),
	}

	lock := func(principal, policy string, start time.Time) (db.RateLimitWindow, error) {
		var got db.RateLimitWindow
		err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			var err error
			got, err = q.RateLimitWindowLock(ctx, db.RateLimitWindowLockParams{PrincipalKey: principal, PolicyID: policy, WindowStartedAt: start})
			return err
		})
		return got, err
	}

	_, err := lock(principal, "api", start)
	require.ErrorIs(t, err, db.ErrNotFound)

	inserted, err := s.RateLimitWindowInsertIfAbsent(ctx, w)
	require.NoError(t, err)
	require.True(t, inserted)
	dup := w
	dup.RequestCount = 50
	inserted, err = s.RateLimitWindowInsertIfAbsent(ctx, dup)
	require.NoError(t, err)
	require.False(t, inserted)

	got, err := lock(principal, "api", start)
	require.NoError(t, err)
	require.Equal(t, w, got)

	// The key is all three columns.
	_, err = lock(principal, "other", start)
	require.ErrorIs(t, err, db.ErrNotFound)
	_, err = lock(principal, "api", start.Add(time.Minute))
	require.ErrorIs(t, err, db.ErrNotFound)

	for i := 0; i < 3; i++ {
		n, err := s.RateLimitWindowIncrement(ctx, db.RateLimitWindowIncrementParams{PrincipalKey: principal, PolicyID: "api", WindowStartedAt: start})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	got, err = lock(principal, "api", start)
	require.NoError(t, err)
	require.EqualValues(t, 4, got.RequestCount)
	n, err := s.RateLimitWindowIncrement(ctx, db.RateLimitWindowIncrementParams{PrincipalKey: principal, PolicyID: "api", WindowStartedAt: start.Add(time.Minute)})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)

	// Purge expired windows in batches; unexpired windows stay.
	for i := 1; i <= 3; i++ {
		old := db.RateLimitWindow{
			PrincipalKey: randHex(t, 64), PolicyID: "api", WindowStartedAt: start.Add(-time.Duration(i) * time.Hour),
			RequestCount: 1, ExpiresAt: start.Add(-time.Duration(i)*time.Hour + time.Minute),
		}
		inserted, err := s.RateLimitWindowInsertIfAbsent(ctx, old)
		require.NoError(t, err)
		require.True(t, inserted)
	}
	n, err = s.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: now, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = lock(principal, "api", start)
	require.NoError(t, err)
	require.EqualValues(t, 4, got.RequestCount)

	n, err = s.RateLimitWindowPurgeExpired(ctx, db.RateLimitWindowPurgeExpiredParams{ExpiredBefore: w.ExpiresAt.Add(time.Microsecond), Limit: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	_, err = lock(principal, "api", start)
	require.ErrorIs(t, err, db.ErrNotFound)
}
