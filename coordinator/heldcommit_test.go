package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

// TestCommitHeldPastItsLeaseIsSafe (docs/protocol.md#database-time): a Complete that verified its claim while the
// lease was alive and then stalls with its locks held — past the lease's nominal end — still commits, and nobody
// recovers the item meanwhile: a claim pass on another pool either skips the locked lane or waits for it, then finds
// the item succeeded. The domain rows carry the verified time, which is before the expiry; the commit lands after.
func TestCommitHeldPastItsLeaseIsSafe(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		other := l
		if s.Engine() != db.EngineSQLite { // one process owns an embedded database
			other = coordinator.NewLedger(enginetest.OpenStore(t, enginetest.URLOf(t, s)))
		}
		enqueue(t, l, "held", "w1", 5)
		c := claim(t, l, "worker-slow", 1, 300*time.Millisecond)
		require.Len(t, c, 1)

		verified, release := make(chan time.Time, 1), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := l.Complete(ctx, c[0], coordinator.Result{Code: "processed"}, func(_ context.Context, _ db.Queries, _ db.WorkItem, now time.Time) error {
				verified <- now
				<-release // the connection stalls here with lane, key and item locked
				return nil
			})
			done <- err
		}()
		at := <-verified
		require.True(t, at.Before(c[0].LeaseExpiresAt), "verified while the lease was alive")
		testutil.WaitDBPast(t, other.Store(), c[0].LeaseExpiresAt.Add(100*time.Millisecond))

		// A claim pass on another pool now: the lease has nominally expired, but the item is locked.
		type pass struct {
			res coordinator.ClaimResult
			err error
		}
		passed := make(chan pass, 1)
		go func() {
			res, err := other.Claim(ctx, coordinator.ClaimRequest{Owner: "worker-fast", Supported: supported, Slots: 1, Lease: time.Minute})
			passed <- pass{res, err}
		}()
		select {
		case p := <-passed: // skipped the locked lane (SKIP LOCKED) without touching the item
			require.NoError(t, p.err)
			require.Empty(t, p.res.Claims)
			require.Zero(t, p.res.Expired)
			close(release)
		case <-time.After(300 * time.Millisecond): // waiting behind the held locks
			close(release)
			p := <-passed
			require.NoError(t, p.err)
			require.Empty(t, p.res.Claims, "the item was succeeded by the time the lock was free")
			require.Zero(t, p.res.Expired)
		}
		require.NoError(t, <-done, "the held commit lands after the nominal expiry")

		item, err := l.Get(ctx, c[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusSucceeded, item.Status)
		require.WithinDuration(t, at, item.CompletedAt, time.Millisecond, "completed_at is the verified time")
		attempts, err := l.Attempts(ctx, item.WorkID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "nobody recovered the item while it was locked")
		require.Equal(t, db.OutcomeSucceeded, attempts[0].Outcome)
	})
}
