package coordinator

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/errclass"
)

// ErrSnoozeLimit means the item has been snoozed MaxSnoozes times in its recovery generation; Snooze changed nothing and
// the failure is to be recorded with Fail, which spends the retry budget (docs/protocol.md#snooze).
var ErrSnoozeLimit = errors.New("coordinator: snooze limit reached")

// DefaultMaxSnoozes is the default cap on snoozes per item and recovery generation.
const DefaultMaxSnoozes = 1000

// MaxSnoozeDelay bounds the delay a provider or limiter may name: a Retry-After further away than this is
// shortened to it, so a wrong header cannot park an item for a day.
const MaxSnoozeDelay = time.Hour

// Snoozer is implemented by handler errors that mean "not now" rather than "this attempt failed" (errclass.Snoozer):
// a shared limit is exhausted and retrying sooner cannot help. SnoozeAfter is the delay named, 0 when none was.
type Snoozer = errclass.Snoozer

// SnoozeHint reports whether err means "not now" and the delay named for it (0 when none was named). A
// provider/rate_limited handler error always does, with or without a Snoozer carrying the delay.
func SnoozeHint(err error) (time.Duration, bool) { return errclass.SnoozeHint(err) }

// Snooze returns a running item to retry_wait at now + delay (database time) without spending its retry budget:
// the attempt ends snoozed with failure f's pair, and generation_attempt_count goes back down by the one the claim
// added. It verifies the claim like Fail (lane → key → item, owner/fence/attempt/unexpired on the database clock);
// a pending cancel wins and the item becomes cancelled. When the item already has maxSnoozes snoozed attempts in its
// recovery generation it changes nothing and returns ErrSnoozeLimit: the caller then records the failure with Fail,
// which spends the budget, so an item cannot wait forever (docs/protocol.md#snooze).
func (l *Ledger) Snooze(ctx context.Context, c Claim, f Failure, delay time.Duration, maxSnoozes int32) (db.WorkItem, error) {
	if !f.bounded() {
		return db.WorkItem{}, invalidArgument("snooze needs a bounded category and code")
	}
	delay = min(max(delay, 0), MaxSnoozeDelay)
	return l.finishClaim(ctx, c, func(ctx context.Context, q *ledgerTx, item db.WorkItem, now time.Time) (db.WorkItem, error) {
		snoozed, err := q.WorkAttemptCountSnoozed(ctx, db.WorkAttemptCountSnoozedParams{WorkID: item.WorkID, RecoveryGeneration: item.RecoveryGeneration})
		if err != nil {
			return item, err
		}
		if snoozed >= int64(maxSnoozes) {
			return item, ErrSnoozeLimit
		}
		prevVersion := item.StateVersion
		item.Status = db.StatusRetryWait
		item.AvailableAt = now.Add(delay)
		item.LeaseOwner, item.LeaseExpiresAt = "", time.Time{}
		item.ErrorCategory, item.ErrorCode = f.Category, f.Code
		if item.GenerationAttemptCount > 0 {
			item.GenerationAttemptCount--
		}
		item.StateVersion++
		item.UpdatedAt = now
		if err := updateState(ctx, q, item, prevVersion); err != nil {
			return item, err
		}
		_, err = q.WorkAttemptFinish(ctx, db.WorkAttemptFinishParams{WorkID: item.WorkID, AttemptNo: item.AttemptCount,
			FinishedAt: now, Outcome: db.OutcomeSnoozed, ErrorCategory: f.Category, ErrorCode: f.Code})
		return item, err
	})
}

// snoozeDelay is the delay of a snoozed attempt: the named delay plus up to a quarter of it as jitter (a crowd denied
// by one limiter window does not all come back at the same instant), or, when nothing was named, the exponential
// backoff of the item's total claim count (which keeps growing while snoozes leave the budget untouched).
func (w *Worker) snoozeDelay(named time.Duration, c Claim) time.Duration {
	if named <= 0 {
		return FullJitter(w.cfg.RetryBase, w.cfg.RetryMax, c.AttemptNo)
	}
	return named + time.Duration(rand.Int64N(int64(named/4)+1))
}

// snooze records a "not now" failure without spending the retry budget (docs/protocol.md#snooze). It reports false
// when cause is not a snooze, snoozing is off, or the item reached the snooze cap: the caller then fails the attempt.
func (w *Worker) snooze(ctx context.Context, c Claim, cause error, finish func(string, string)) bool {
	named, ok := SnoozeHint(cause)
	if !ok || w.cfg.MaxSnoozes <= 0 {
		return false
	}
	f := Classify(cause)
	item, err := w.ledger.Snooze(ctx, c, f, w.snoozeDelay(named, c), w.cfg.MaxSnoozes)
	switch {
	case errors.Is(err, ErrSnoozeLimit):
		return false
	case err == nil && item.Status == db.StatusCancelled:
		finish(db.OutcomeCancelled, ErrorCategoryCancellation)
	case err == nil:
		finish(db.OutcomeSnoozed, f.Category)
	case errors.Is(err, ErrStaleWorkClaim):
		w.log.Warn().Str("work_id", c.Item.WorkID).Msg("claim lost before snooze")
		finish("stale", CategoryLeaseLost)
	default:
		w.log.Error().Str("work_id", c.Item.WorkID).Str("error_class", ErrorClass(err)).Msg("recording snooze failed")
		finish("error", CategoryInternal)
	}
	return true
}

// failDelay is the retry delay of a failure that spends the budget: the backoff, but never less than a delay the
// provider or limiter named (a rate-limited item past its snooze cap still waits as long as it was told to).
func (w *Worker) failDelay(c Claim, cause error) time.Duration {
	delay := w.backoff(c.Item.GenerationAttemptCount)
	if named, ok := SnoozeHint(cause); ok {
		delay = max(delay, min(named, MaxSnoozeDelay))
	}
	return delay
}
