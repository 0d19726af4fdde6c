package coordinator_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

var rateLimited = coordinator.Failure{Category: coordinator.CategoryProvider, Code: coordinator.CodeRateLimited, Retryable: true}

func TestSnoozeKeepsTheRetryBudget(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		res := enqueue(t, l, "lane", "w1", 2)
		enqueue(t, l, "lane", "w2", 2)

		// Five snoozes in a row: each claim is a new attempt (and fence), none spends the budget of 2.
		for i := int32(1); i <= 5; i++ {
			c := claim(t, l, "worker", 1, time.Minute)
			require.Len(t, c, 1)
			require.Equal(t, res.Item.WorkID, c[0].Item.WorkID, "the snoozed item stays its lane's head")
			require.Equal(t, i, c[0].AttemptNo)
			require.Equal(t, int32(1), c[0].Item.GenerationAttemptCount)
			item, err := l.Snooze(ctx, c[0], rateLimited, 0, 5)
			require.NoError(t, err)
			require.Equal(t, db.StatusRetryWait, item.Status)
			require.Zero(t, item.GenerationAttemptCount, "a snooze gives back the attempt its claim took")
			require.Equal(t, i, item.AttemptCount)
			require.Equal(t, "rate_limited", item.ErrorCode)
			require.Empty(t, item.LeaseOwner)
		}
		attempts, err := l.Attempts(ctx, res.Item.WorkID)
		require.NoError(t, err)
		require.Len(t, attempts, 5)
		for _, a := range attempts {
			require.Equal(t, db.OutcomeSnoozed, a.Outcome)
			require.Equal(t, "provider", a.ErrorCategory)
			require.Equal(t, "rate_limited", a.ErrorCode)
		}

		// The cap: a sixth snooze changes nothing and the failure is recorded by Fail, which spends the budget.
		c := claim(t, l, "worker", 1, time.Minute)
		require.Len(t, c, 1)
		_, err = l.Snooze(ctx, c[0], rateLimited, 0, 5)
		require.ErrorIs(t, err, coordinator.ErrSnoozeLimit)
		item, err := l.Get(ctx, res.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusRunning, item.Status, "a refused snooze writes nothing")
		require.Equal(t, c[0].Item.StateVersion, item.StateVersion)
		failed, err := l.Fail(ctx, c[0], rateLimited, 0)
		require.NoError(t, err)
		require.Equal(t, db.StatusRetryWait, failed.Status)
		c = claim(t, l, "worker", 1, time.Minute)
		require.Len(t, c, 1)
		_, err = l.Snooze(ctx, c[0], rateLimited, 0, 5)
		require.ErrorIs(t, err, coordinator.ErrSnoozeLimit)
		failed, err = l.Fail(ctx, c[0], rateLimited, 0)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, failed.Status, "past the cap the budget of 2 is spent")

		// An operator retry starts a new generation: the snooze count starts again.
		retried, err := l.Retry(ctx, failed.WorkID, failed.StateVersion)
		require.NoError(t, err)
		c = claim(t, l, "worker", 1, time.Minute)
		require.Len(t, c, 1)
		require.Equal(t, retried.RecoveryGeneration, c[0].Item.RecoveryGeneration)
		item, err = l.Snooze(ctx, c[0], rateLimited, time.Hour, 5)
		require.NoError(t, err)
		require.Equal(t, db.StatusRetryWait, item.Status)
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		require.WithinDuration(t, now.Add(time.Hour), item.AvailableAt, time.Minute, "available at the named time, on database time")
		require.Empty(t, claim(t, l, "worker", 1, time.Minute), "a snoozed head is not due before its time, and its lane waits")
	})
}

func TestSnoozeIsFencedLikeFail(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		old, fresh := takenOver(t, s, l)

		_, err := l.Snooze(ctx, old[0], rateLimited, 0, 5)
		require.ErrorIs(t, err, coordinator.ErrStaleWorkClaim, "a deposed worker cannot snooze")
		item, err := l.Get(ctx, fresh[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusRunning, item.Status)
		require.Equal(t, fresh[0].Item.StateVersion, item.StateVersion)

		// A pending cancel wins over the snooze.
		_, err = l.Cancel(ctx, item.WorkID, item.StateVersion)
		require.NoError(t, err)
		cancelled, err := l.Snooze(ctx, fresh[0], rateLimited, 0, 5)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelled, cancelled.Status)
		attempts, err := l.Attempts(ctx, item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.OutcomeCancelled, attempts[len(attempts)-1].Outcome)

		_, err = l.Snooze(ctx, fresh[0], coordinator.Failure{}, 0, 5)
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
	})
}

// stormError is a "not now" failure naming a delay, as a provider's 429 with Retry-After is.
type stormError struct{ after time.Duration }

func (e stormError) Error() string              { return "handler error provider/rate_limited" }
func (e stormError) SnoozeAfter() time.Duration { return e.after }
func (e stormError) Unwrap() error {
	return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRateLimited, true)
}
func (h *stormHandler) Kind() string { return testKind }
func (h *stormHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}

// stormHandler answers "rate limited" to the first `denials` calls of every item, then succeeds.
type stormHandler struct {
	denials int
	mu      sync.Mutex
	calls   map[string]int
	done    chan struct{}
	commits atomic.Int32
}

func (h *stormHandler) Prepare(_ context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	h.mu.Lock()
	h.calls[item.WorkID]++
	n := h.calls[item.WorkID]
	h.mu.Unlock()
	if n <= h.denials {
		return coordinator.Prepared{}, stormError{after: 20 * time.Millisecond}
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}, Commit: func(context.Context, db.Queries, db.WorkItem, time.Time) error {
		h.commits.Add(1)
		notify(h.done)
		return nil
	}}, nil
}

// TestRateLimitStormDelaysButNeverFails: every item is refused by its rate limit four times its retry budget, and
// every item still succeeds — snoozes never spend the budget — in lane order.
func TestRateLimitStormDelaysButNeverFails(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := coordinator.NewLedger(s)
		const lanes, perLane, budget = 3, 2, 2
		var ids []string
		for i := range lanes {
			for j := range perLane {
				ids = append(ids, enqueue(t, l, fmt.Sprintf("lane-%d", i), fmt.Sprintf("w%d", j), budget).Item.WorkID)
			}
		}
		h := &stormHandler{denials: 4 * budget, calls: map[string]int{}, done: make(chan struct{}, lanes*perLane)}
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w1", Concurrency: 3, Poll: 10 * time.Millisecond,
			RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: zerolog.Nop()}, h)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		await(t, h.done, lanes*perLane, 60*time.Second, "the storm's items did not all succeed")
		cancel()
		require.NoError(t, <-done)
		require.EqualValues(t, lanes*perLane, h.commits.Load())
		for _, id := range ids {
			item, err := l.Get(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, db.StatusSucceeded, item.Status)
			require.Equal(t, int32(4*budget+1), item.AttemptCount)
			require.Equal(t, int32(1), item.GenerationAttemptCount, "only the successful attempt counted against the budget")
			attempts, err := l.Attempts(context.Background(), id)
			require.NoError(t, err)
			for _, a := range attempts[:len(attempts)-1] {
				require.Equal(t, db.OutcomeSnoozed, a.Outcome)
			}
			require.Equal(t, db.OutcomeSucceeded, attempts[len(attempts)-1].Outcome)
		}
	})
}
