package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// dbCases are the cases of the database clock and transactions (sql/queries/<engine>/db.sql).
var dbCases = []storeCase{
	{"DBNow/UTCAndAdvancesInsideTx", testDBNow},
	{"InTx/CommitsAndRollsBack", testInTx},
	{"InTx/InsertIfAbsentThenLock", testInsertIfAbsentThenLock},
}

func testDBNow(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := dbNow(t, s)
	requireUTC(t, now)
	requireNear(t, time.Now(), now, clockSlack)

	// Inside a transaction the clock still advances (clock_timestamp(), not the transaction start).
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		a, err := q.DBNow(ctx)
		require.NoError(t, err)
		requireUTC(t, a)
		requireNear(t, now, a, clockSlack)
		time.Sleep(20 * time.Millisecond)
		b, err := q.DBNow(ctx)
		require.NoError(t, err)
		require.True(t, b.After(a), "database clock must advance inside a transaction: %s then %s", a, b)
		return nil
	}))
}

func testInTx(t *testing.T, s db.Store) {
	ctx := context.Background()

	// Commit makes writes visible.
	committed := randHex(t, 64)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, err := q.WorkLaneInsertIfAbsent(ctx, committed)
		return err
	}))
	_, err := s.WorkLaneGet(ctx, committed)
	require.NoError(t, err)

	// An error rolls back and is returned unchanged.
	rolledBack := randHex(t, 64)
	sentinel := errors.New("boom")
	err = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		inserted, err := q.WorkLaneInsertIfAbsent(ctx, rolledBack)
		require.NoError(t, err)
		require.True(t, inserted)
		return sentinel
	})
	require.ErrorIs(t, err, sentinel)
	_, err = s.WorkLaneGet(ctx, rolledBack)
	require.ErrorIs(t, err, db.ErrNotFound)

	// A panic rolls back and propagates.
	panicked := randHex(t, 64)
	require.Panics(t, func() {
		_ = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			_, err := q.WorkLaneInsertIfAbsent(ctx, panicked)
			require.NoError(t, err)
			panic("boom")
		})
	})
	_, err = s.WorkLaneGet(ctx, panicked)
	require.ErrorIs(t, err, db.ErrNotFound)

	// The store is still usable afterwards (the connection was returned clean).
	_, err = s.DBNow(ctx)
	require.NoError(t, err)
}

// testInsertIfAbsentThenLock is the "create a missing row with insert-if-absent, then re-read it with a lock"
// pattern of docs/protocol.md#creating-rows, for each entity that uses it.
func testInsertIfAbsentThenLock(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := randHex(t, 64)
	leaseName := "lease-" + randHex(t, 8)
	principal := randHex(t, 64)
	windowStart := us(dbNow(t, s)).Truncate(time.Minute)

	run := func(wantInserted bool, wantNext int64, wantFence int64, wantCount int32) {
		t.Helper()
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			inserted, err := q.SchedulerLeaseInsertIfAbsent(ctx, leaseName)
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			lease, now, err := q.SchedulerLeaseLock(ctx, leaseName)
			require.NoError(t, err)
			require.Equal(t, wantFence, lease.Fence)
			lease.Fence++
			lease.UpdatedAt = now
			require.NoError(t, q.SchedulerLeaseUpdate(ctx, lease))

			inserted, err = q.WorkLaneInsertIfAbsent(ctx, laneKey)
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			lane, _, err := q.WorkLaneLock(ctx, laneKey)
			require.NoError(t, err)
			require.Equal(t, wantNext, lane.NextSequence)
			lane.NextSequence++
			require.NoError(t, q.WorkLaneUpdate(ctx, lane))

			inserted, err = q.RateLimitWindowInsertIfAbsent(ctx, db.RateLimitWindow{
				PrincipalKey: principal, PolicyID: "api", WindowStartedAt: windowStart,
				RequestCount: 1, ExpiresAt: windowStart.Add(time.Minute),
			})
			require.NoError(t, err)
			require.Equal(t, wantInserted, inserted)
			w, err := q.RateLimitWindowLock(ctx, db.RateLimitWindowLockParams{PrincipalKey: principal, PolicyID: "api", WindowStartedAt: windowStart})
			require.NoError(t, err)
			require.Equal(t, wantCount, w.RequestCount)
			if !inserted {
				n, err := q.RateLimitWindowIncrement(ctx, db.RateLimitWindowIncrementParams{PrincipalKey: principal, PolicyID: "api", WindowStartedAt: windowStart})
				require.NoError(t, err)
				require.EqualValues(t, 1, n)
			}
			return nil
		}))
	}
	run(true, 1, 0, 1)
	run(false, 2, 1, 1)
	run(false, 3, 2, 2)

	lane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 4, lane.NextSequence)
	lease, err := s.SchedulerLeaseGet(ctx, leaseName)
	require.NoError(t, err)
	require.EqualValues(t, 3, lease.Fence)
}
