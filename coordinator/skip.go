package coordinator

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
)

// ResultSkipped is the result code of an item an operator skipped.
const ResultSkipped = "skipped"

// SkipFunc decides, from the locked failed item, what skipping it writes: the result stored on the item and the
// domain commit that moves the domain past the item's work without doing it (for a window: advance the cursor and
// record the skip). It runs inside the skip's transaction, after the lane, key and item locks; the commit takes the
// domain cursor lock, the last of the global order. It must not call the Store outside q.
type SkipFunc func(ctx context.Context, q db.Queries, item db.WorkItem) (Result, DomainCommit, error)

// Skip is the operator's skip of a failed item (docs/protocol.md#state-machine): in one transaction it locks
// lane → key → item, checks expected_version and that the item is failed, runs the domain commit fn returns, and
// finishes the item as succeeded with result code skipped — its key is deleted and its lane's head moves on. A
// stale version or any other status is a *StateConflictError; a domain error rolls everything back.
func (l *Ledger) Skip(ctx context.Context, workID string, expectedVersion int64, fn SkipFunc) (db.WorkItem, error) {
	return l.operatorTransition(ctx, workID, expectedVersion, func(ctx context.Context, q db.Queries, lane db.WorkLane, hasKey bool, item db.WorkItem, now time.Time) (db.WorkItem, bool, error) {
		if item.Status != db.StatusFailed {
			return item, false, nil
		}
		result, commit, err := fn(ctx, q, item)
		if err != nil {
			return item, true, err
		}
		var payload []byte
		if result.Payload != nil {
			if payload, err = CanonicalJSON(result.Payload); err != nil {
				return item, true, err
			}
		}
		if commit != nil {
			if err := commit(ctx, q, item, now); err != nil {
				return item, true, err
			}
		}
		prevVersion := item.StateVersion
		item.Status = db.StatusSucceeded
		item.ResultCode, item.ResultPayload = ResultSkipped, payload
		item.StateVersion++
		item.UpdatedAt, item.CompletedAt = now, now
		// The failure stays on the item: it says why the work was skipped.
		if err := updateState(ctx, q, item, prevVersion); err != nil {
			return item, true, err
		}
		return item, true, finishLane(ctx, q, lane, hasKey, item)
	})
}
