package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// uiSessionCases are the cases of pc_ui_sessions (ui_session.sql).
var uiSessionCases = []storeCase{
	{"UISessionGetUnexpired/InsertGetDeletePurge", testUISession},
}

func testUISession(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	sess := db.UISession{SessionDigest: randHex(t, 64), PrincipalName: "ops", PrincipalBinding: randHex(t, 16),
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}

	_, err := s.UISessionGetUnexpired(ctx, sess.SessionDigest)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.UISessionInsert(ctx, sess))
	require.ErrorIs(t, s.UISessionInsert(ctx, sess), db.ErrConflict, "the digest is the primary key")
	got, err := s.UISessionGetUnexpired(ctx, sess.SessionDigest)
	require.NoError(t, err)
	require.Equal(t, sess, got)
	_, err = s.UISessionGetUnexpired(ctx, randHex(t, 64))
	require.ErrorIs(t, err, db.ErrNotFound)

	// Expiry is on the database clock: a row whose expires_at is already past (or exactly now) is not returned.
	expired := db.UISession{SessionDigest: randHex(t, 64), PrincipalName: "ops", PrincipalBinding: sess.PrincipalBinding,
		CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Millisecond)}
	require.NoError(t, s.UISessionInsert(ctx, expired))
	_, err = s.UISessionGetUnexpired(ctx, expired.SessionDigest)
	require.ErrorIs(t, err, db.ErrNotFound, "expired on database time")
	soon := db.UISession{SessionDigest: randHex(t, 64), PrincipalName: "ops", PrincipalBinding: sess.PrincipalBinding,
		CreatedAt: now, ExpiresAt: us(dbNow(t, s)).Add(300 * time.Millisecond)}
	require.NoError(t, s.UISessionInsert(ctx, soon))
	_, err = s.UISessionGetUnexpired(ctx, soon.SessionDigest)
	require.NoError(t, err, "not expired yet")
	for deadline := time.Now().Add(10 * time.Second); ; { // clock:process only bounds the wait
		if _, err = s.UISessionGetUnexpired(ctx, soon.SessionDigest); err != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the session never expired") // clock:process test deadline
		time.Sleep(50 * time.Millisecond)
	}
	require.ErrorIs(t, err, db.ErrNotFound)

	// Delete (logout): one row, then none.
	n, err := s.UISessionDelete(ctx, sess.SessionDigest)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.UISessionDelete(ctx, sess.SessionDigest)
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	_, err = s.UISessionGetUnexpired(ctx, sess.SessionDigest)
	require.ErrorIs(t, err, db.ErrNotFound)

	// Purge expired sessions in bounded batches, oldest first; unexpired sessions stay.
	live := db.UISession{SessionDigest: randHex(t, 64), PrincipalName: "ops", PrincipalBinding: sess.PrincipalBinding,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	require.NoError(t, s.UISessionInsert(ctx, live))
	for i := 1; i <= 3; i++ {
		require.NoError(t, s.UISessionInsert(ctx, db.UISession{SessionDigest: randHex(t, 64), PrincipalName: "ops",
			PrincipalBinding: sess.PrincipalBinding, CreatedAt: now.Add(-time.Duration(i+24) * time.Hour),
			ExpiresAt: now.Add(-time.Duration(i+12) * time.Hour)}))
	}
	// Only this case's rows: the cut-off is before every other expired row of the case.
	cutoff := now.Add(-12 * time.Hour)
	n, err = s.UISessionPurgeExpired(ctx, db.UISessionPurgeExpiredParams{ExpiredBefore: cutoff, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.UISessionPurgeExpired(ctx, db.UISessionPurgeExpiredParams{ExpiredBefore: cutoff, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.UISessionPurgeExpired(ctx, db.UISessionPurgeExpiredParams{ExpiredBefore: cutoff, Limit: 2})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	n, err = s.UISessionPurgeExpired(ctx, db.UISessionPurgeExpiredParams{ExpiredBefore: us(dbNow(t, s)), Limit: 100})
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(2), "the expired and the soon-expired sessions")
	got, err = s.UISessionGetUnexpired(ctx, live.SessionDigest)
	require.NoError(t, err)
	require.Equal(t, live, got, "an unexpired session is never purged")
}
