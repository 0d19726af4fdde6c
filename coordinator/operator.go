package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Cancel is the operator's cancel with an expected state_version (docs/protocol.md#state-machine): queued, retry_wait and failed items
// become cancelled at once (key deleted, head advanced); a running item becomes cancelling and its worker
// converges. Anything else, or a stale version, is a *StateConflictError.
func (l *Ledger) Cancel(ctx context.Context, workID string, expectedVersion int64) (db.WorkItem, error) {
	return l.operatorTransition(ctx, workID, expectedVersion, func(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time) (db.WorkItem, bool, error) {
		prevVersion := item.StateVersion
		switch item.Status {
		case db.StatusQueued, db.StatusRetryWait, db.StatusFailed:
			item.Status = db.StatusCancelled
			item.CancelRequested = true
			item.StateVersion++
			item.UpdatedAt, item.CompletedAt = now, now
			if err := updateState(ctx, q, item, prevVersion); err != nil {
				return item, true, err
			}
			return item, true, finishLane(ctx, q, lane, hasKey, item)
		case db.StatusRunning:
			item.Status = db.StatusCancelling
			item.CancelRequested = true
			item.StateVersion++
			item.UpdatedAt = now
			return item, true, updateState(ctx, q, item, prevVersion)
		}
		return item, false, nil
	})
}

// Retry is the operator's retry of a failed item (docs/protocol.md#state-machine): queued again with a fresh retry budget in a new
// recovery generation, errors cleared, available now.
func (l *Ledger) Retry(ctx context.Context, workID string, expectedVersion int64) (db.WorkItem, error) {
	return l.operatorTransition(ctx, workID, expectedVersion, func(ctx context.Context, q db.Queries, _ db.WorkLane, _ bool, item db.WorkItem, now time.Time) (db.WorkItem, bool, error) {
		if item.Status != db.StatusFailed {
			return item, false, nil
		}
		item, err := requeueFailed(ctx, q, item, now)
		return item, true, err
	})
}

// requeueFailed is the retry transition of a failed item (the caller holds lane → key → item): queued again, in a
// new recovery generation with a fresh retry budget, errors cleared, available now.
func requeueFailed(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) (db.WorkItem, error) {
	prevVersion := item.StateVersion
	item.Status = db.StatusQueued
	item.GenerationAttemptCount = 0
	item.RecoveryGeneration++
	item.ErrorCategory, item.ErrorCode = "", ""
	item.AvailableAt = now
	item.CompletedAt = time.Time{}
	item.StateVersion++
	item.UpdatedAt = now
	return item, updateState(ctx, q, item, prevVersion)
}

type transitionFunc func(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time) (db.WorkItem, bool, error)

func (l *Ledger) operatorTransition(ctx context.Context, workID string, expectedVersion int64, fn transitionFunc) (db.WorkItem, error) {
	if !validWorkID(workID) {
		return db.WorkItem{}, ErrNotFound
	}
	// lane and logical key are immutable: read them unlocked to know which locks to take, in order.
	peek, err := l.store.WorkItemGet(ctx, workID)
	if err != nil {
		return db.WorkItem{}, err
	}
	var out db.WorkItem
	err = l.inTx(ctx, func(ctx context.Context, q *ledgerTx) error {
		lane, hasKey, item, now, err := lockLaneKeyItem(ctx, q, peek.LaneKey, peek.LogicalKey, workID)
		if err != nil {
			return err
		}
		if item.StateVersion != expectedVersion {
			return &StateConflictError{WorkID: workID, Status: item.Status, ActualVersion: item.StateVersion}
		}
		next, ok, err := fn(ctx, q, lane, hasKey, item, now)
		if err != nil {
			return err
		}
		if !ok {
			return &StateConflictError{WorkID: workID, Status: item.Status, ActualVersion: item.StateVersion}
		}
		out = next
		return nil
	})
	return out, err
}

// PurgeTerminal deletes up to limit succeeded or cancelled items completed before the given time, with their
// attempts. Failed items are never purged (they hold their lane). Returns the number of items deleted.
func (l *Ledger) PurgeTerminal(ctx context.Context, before time.Time, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	ids, err := l.store.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: before, Limit: int32(limit)})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	var n int64
	err = l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		var err error
		if n, err = q.WorkItemDeleteTerminal(ctx, ids); err != nil {
			return err
		}
		_, err = q.WorkAttemptDeleteByWorkIDs(ctx, ids)
		return err
	})
	return n, err
}

// UnsupportedHeadCount counts due lane heads this worker cannot execute; > 0 makes readiness "misconfigured".
func (l *Ledger) UnsupportedHeadCount(ctx context.Context, s Supported) (int64, error) {
	rows, err := l.store.WorkItemHeadKindVersions(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		if !s.Has(r.Kind, r.PayloadVersion) {
			n += r.Count
		}
	}
	return n, nil
}

// QueueStat is the depth and oldest age of one (kind, status).
type QueueStat struct {
	Kind      string
	Status    string
	Count     int64
	OldestAge time.Duration
}

// QueueStatistics reports depth and oldest age by (kind, status) on database time.
func (l *Ledger) QueueStatistics(ctx context.Context) ([]QueueStat, error) {
	rows, err := l.store.WorkItemQueueStatistics(ctx)
	if err != nil {
		return nil, err
	}
	now, err := l.store.DBNow(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]QueueStat, 0, len(rows))
	for _, r := range rows {
		age := now.Sub(r.OldestCreatedAt)
		if age < 0 {
			age = 0
		}
		out = append(out, QueueStat{Kind: r.Kind, Status: r.Status, Count: r.Count, OldestAge: age})
	}
	return out, nil
}

// IsStateConflict reports whether err is a *StateConflictError and returns it.
func IsStateConflict(err error) (*StateConflictError, bool) {
	var sc *StateConflictError
	ok := errors.As(err, &sc)
	return sc, ok
}
