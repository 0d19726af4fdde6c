package db

import (
	"context"
	"errors"
	"time"
)

// The composite steps of Queries run one statement after the other. Adapters without a cheaper way (MySQL, SQLite,
// and the PostgreSQL adapter outside a transaction) delegate to these functions, so every engine has the same
// semantics by construction (docs/protocol.md#round-trips).

// ChainWorkLaneItemLock runs WorkLaneLock then WorkItemLock.
func ChainWorkLaneItemLock(ctx context.Context, q Queries, p WorkLaneItemLockParams) (WorkLane, WorkItem, time.Time, error) {
	lane, _, err := q.WorkLaneLock(ctx, p.LaneKey)
	if err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	item, now, err := q.WorkItemLock(ctx, p.WorkID)
	return lane, item, now, err
}

// ChainWorkLaneKeyDeleteItemLock runs WorkLaneLock, WorkKeyDelete then WorkItemLock.
func ChainWorkLaneKeyDeleteItemLock(ctx context.Context, q Queries, p WorkLaneKeyDeleteItemLockParams) (WorkLane, WorkItem, time.Time, error) {
	lane, _, err := q.WorkLaneLock(ctx, p.LaneKey)
	if err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	if _, err := q.WorkKeyDelete(ctx, p.LogicalKey); err != nil {
		return lane, WorkItem{}, time.Time{}, err
	}
	item, now, err := q.WorkItemLock(ctx, p.WorkID)
	return lane, item, now, err
}

// ChainWorkItemUpdateStateInsertAttempt runs WorkItemUpdateState and, when it matched one row, WorkAttemptInsert.
func ChainWorkItemUpdateStateInsertAttempt(ctx context.Context, q Queries, p WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	n, err := q.WorkItemUpdateState(ctx, p.State)
	if err != nil || n != 1 {
		return n, err
	}
	return n, q.WorkAttemptInsert(ctx, p.Attempt)
}

// ChainWorkItemUpdateStateFinishAttempt runs WorkItemUpdateState and, when it matched one row, WorkAttemptFinish and
// the optional WorkLaneAdvanceHead.
func ChainWorkItemUpdateStateFinishAttempt(ctx context.Context, q Queries, p WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	n, err := q.WorkItemUpdateState(ctx, p.State)
	if err != nil || n != 1 {
		return n, err
	}
	if _, err := q.WorkAttemptFinish(ctx, p.Attempt); err != nil {
		return n, err
	}
	if p.AdvanceHead != nil {
		if err := q.WorkLaneAdvanceHead(ctx, *p.AdvanceHead); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ChainWorkKeyItemInsert runs WorkKeyInsertIfAbsent and, when it inserted, WorkLaneUpdate and WorkItemInsert.
func ChainWorkKeyItemInsert(ctx context.Context, q Queries, p WorkKeyItemInsertParams) (bool, error) {
	inserted, err := q.WorkKeyInsertIfAbsent(ctx, p.Key)
	if err != nil || !inserted {
		return inserted, err
	}
	if err := q.WorkLaneUpdate(ctx, p.Lane); err != nil {
		return true, err
	}
	return true, q.WorkItemInsert(ctx, p.Item)
}

// ChainWorkKeyItemInsertAtCommit runs WorkKeyItemInsert now and sets *inserted.
func ChainWorkKeyItemInsertAtCommit(ctx context.Context, q Queries, p WorkKeyItemInsertParams, inserted *bool) error {
	ok, err := q.WorkKeyItemInsert(ctx, p)
	*inserted = ok
	return err
}

// ChainMemoryEntryInsertMany runs MemoryEntryInsert for every entry.
func ChainMemoryEntryInsertMany(ctx context.Context, q Queries, es []MemoryEntry) error {
	for _, e := range es {
		if err := q.MemoryEntryInsert(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// ChainMemoryEmbeddingUpsertMany runs MemoryEmbeddingUpsert for every row.
func ChainMemoryEmbeddingUpsertMany(ctx context.Context, q Queries, es []MemoryEmbedding) error {
	for _, e := range es {
		if err := q.MemoryEmbeddingUpsert(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoTransaction is Savepoint called outside InTx.
var ErrNoTransaction = errors.New("db: savepoint outside a transaction")

// The savepoint statements (one name: savepoints do not nest).
const (
	SavepointSQL         = "SAVEPOINT pc_item"
	RollbackSavepointSQL = "ROLLBACK TO SAVEPOINT pc_item"
	ReleaseSavepointSQL  = "RELEASE SAVEPOINT pc_item"
)

// ChainSavepoint is Savepoint over an executor of the transaction: SAVEPOINT, fn, then RELEASE, or on fn's error
// ROLLBACK TO and RELEASE.
func ChainSavepoint(ctx context.Context, exec func(ctx context.Context, stmt string) error, q Queries, fn func(ctx context.Context, q Queries) error) (fnErr error, err error) {
	if err := exec(ctx, SavepointSQL); err != nil {
		return nil, err
	}
	if fnErr = fn(ctx, q); fnErr != nil {
		if err := exec(ctx, RollbackSavepointSQL); err != nil {
			return fnErr, err
		}
	}
	return fnErr, exec(ctx, ReleaseSavepointSQL)
}
