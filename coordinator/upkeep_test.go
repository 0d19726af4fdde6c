package coordinator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

var maintenanceSupported = coordinator.Supported{coordinator.KindMaintenance: {Min: 1, Max: 1}}

// TestFailedMaintenanceRetriesOnTheNextSchedule: a maintenance run whose budget is spent stays failed (visible) until
// the scheduler's next maintenance enqueue, which re-queues the same item in a new recovery generation instead of
// joining it for good; a run that is not failed is joined as before.
func TestFailedMaintenanceRetriesOnTheNextSchedule(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		sched, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "s", Lease: time.Minute},
			coordinator.MaintenanceDiscoverer{Every: 100 * time.Millisecond})
		require.NoError(t, err)
		tickUntilEnqueued := func() db.WorkItem {
			t.Helper()
			scan, err := s.SchedulerScanGet(ctx, "maintenance")
			if err == nil {
				testutil.WaitDBPast(t, s, scan.NextRunAt)
			}
			require.NoError(t, sched.Tick(ctx))
			items, err := l.List(ctx, coordinator.ListParams{Kinds: []string{coordinator.KindMaintenance}, Limit: 10})
			require.NoError(t, err)
			require.Len(t, items, 1, "one maintenance item, ever")
			return items[0]
		}

		first := tickUntilEnqueued()
		require.Equal(t, db.StatusQueued, first.Status)
		for range 3 { // max_attempts 3, every attempt fails
			res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "w", Supported: maintenanceSupported, Slots: 1, Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, res.Claims, 1)
			_, err = l.Fail(ctx, res.Claims[0], coordinator.Failure{Category: "internal", Code: "unhandled_handler_error", Retryable: true}, 0)
			require.NoError(t, err)
		}
		failed, err := l.Get(ctx, first.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, failed.Status)

		again := tickUntilEnqueued()
		require.Equal(t, first.WorkID, again.WorkID, "the same item, re-queued")
		require.Equal(t, db.StatusQueued, again.Status)
		require.Equal(t, int32(1), again.RecoveryGeneration)
		require.Zero(t, again.GenerationAttemptCount)
		require.Empty(t, again.ErrorCode)
		require.Equal(t, failed.StateVersion+1, again.StateVersion)

		// Not failed: the next schedule joins it unchanged.
		joined := tickUntilEnqueued()
		require.Equal(t, again.StateVersion, joined.StateVersion)
		res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "w", Supported: maintenanceSupported, Slots: 1, Lease: time.Minute})
		require.NoError(t, err)
		require.Len(t, res.Claims, 1, "the re-queued run is claimable at once")
	})
}

type failingDiscoverer struct{ err error }

func (d *failingDiscoverer) Name() string            { return "flaky" }
func (d *failingDiscoverer) Interval() time.Duration { return time.Millisecond }
func (d *failingDiscoverer) Page(context.Context, string, int) ([]coordinator.EnqueueRequest, string, error) {
	return nil, "", d.err
}

// TestSchedulerReportsFailingTicks: three failed ticks in a row make the scheduler Failing; one good tick clears it.
func TestSchedulerReportsFailingTicks(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		d := &failingDiscoverer{err: errors.New("scan failed")}
		sched, err := coordinator.NewScheduler(coordinator.NewLedger(s), coordinator.SchedulerConfig{Owner: "s", Lease: time.Minute}, d)
		require.NoError(t, err)
		for i := 1; i <= coordinator.SchedulerFailingAfter; i++ {
			require.False(t, sched.Failing())
			require.Error(t, sched.Tick(ctx))
			require.Equal(t, i, sched.FailingTicks())
		}
		require.True(t, sched.Failing())
		d.err = nil
		require.NoError(t, sched.Tick(ctx))
		require.False(t, sched.Failing())
		require.Zero(t, sched.FailingTicks())

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		d.err = context.Canceled
		_ = sched.Tick(cancelled)
		require.Zero(t, sched.FailingTicks(), "a tick cut short by shutdown is no failure")
	})
}

// TestSkipFinishesAFailedItemAndUnblocksItsLane: skip runs the domain commit in its transaction and makes the failed
// head succeeded (result skipped, the failure kept), so the lane's next item becomes claimable; it refuses other
// statuses and stale versions, and a domain error changes nothing.
func TestSkipFinishesAFailedItemAndUnblocksItsLane(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		first := enqueue(t, l, "lane", "w1", 1)
		second := enqueue(t, l, "lane", "w2", 1)

		commits := 0
		skip := func(context.Context, db.Queries, db.WorkItem) (coordinator.Result, coordinator.DomainCommit, error) {
			return coordinator.Result{Code: "ignored", Payload: map[string]any{"skipped": true}}, func(context.Context, db.Queries, db.WorkItem, time.Time) error {
				commits++
				return nil
			}, nil
		}
		_, err := l.Skip(ctx, first.Item.WorkID, 1, skip)
		_, conflict := coordinator.IsStateConflict(err)
		require.True(t, conflict, "a queued item cannot be skipped")

		c := claim(t, l, "w", 1, time.Minute)
		require.Len(t, c, 1)
		failed, err := l.Fail(ctx, c[0], coordinator.Failure{Category: "provider", Code: "request_rejected"}, 0)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, failed.Status)

		_, err = l.Skip(ctx, failed.WorkID, failed.StateVersion-1, skip)
		_, conflict = coordinator.IsStateConflict(err)
		require.True(t, conflict, "a stale version is refused")
		boom := errors.New("domain says no")
		_, err = l.Skip(ctx, failed.WorkID, failed.StateVersion, func(context.Context, db.Queries, db.WorkItem) (coordinator.Result, coordinator.DomainCommit, error) {
			return coordinator.Result{}, func(context.Context, db.Queries, db.WorkItem, time.Time) error { return boom }, nil
		})
		require.ErrorIs(t, err, boom)
		still, err := l.Get(ctx, failed.WorkID)
		require.NoError(t, err)
		require.Equal(t, failed.StateVersion, still.StateVersion, "nothing changed")

		done, err := l.Skip(ctx, failed.WorkID, failed.StateVersion, skip)
		require.NoError(t, err)
		require.Equal(t, 1, commits)
		require.Equal(t, db.StatusSucceeded, done.Status)
		require.Equal(t, coordinator.ResultSkipped, done.ResultCode)
		require.JSONEq(t, `{"skipped":true}`, string(done.ResultPayload))
		require.Equal(t, "request_rejected", done.ErrorCode, "the failure says why it was skipped")
		next := claim(t, l, "w", 1, time.Minute)
		require.Len(t, next, 1, "the lane is unblocked")
		require.Equal(t, second.Item.WorkID, next[0].Item.WorkID)
		again := enqueue(t, l, "lane", "w1", 1)
		require.True(t, again.Created, "the skipped item's key is gone")
	})
}
