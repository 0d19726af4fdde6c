package mysqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The composite steps run their statements one after the other (db.Chain…): go-sql-driver sends one statement per
// round trip, and the adapter does not enable multi-statement queries.

func (q queries) WorkLaneItemLock(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	return db.ChainWorkLaneItemLock(ctx, q, p)
}

func (q queries) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	return db.ChainWorkLaneKeyDeleteItemLock(ctx, q, p)
}

func (q queries) WorkItemUpdateStateInsertAttempt(ctx context.Context, p db.WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	return db.ChainWorkItemUpdateStateInsertAttempt(ctx, q, p)
}

func (q queries) WorkItemUpdateStateFinishAttempt(ctx context.Context, p db.WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	return db.ChainWorkItemUpdateStateFinishAttempt(ctx, q, p)
}

// WorkKeyItemInsert locks an existing key first (and then writes nothing): on InnoDB an INSERT IGNORE that finds the
// key takes a shared lock on it, and two such transactions (of two lanes) asking for the exclusive lock afterwards
// would deadlock (docs/protocol.md#creating-rows). The caller's WorkKeyLock then finds the lock already held.
func (q queries) WorkKeyItemInsert(ctx context.Context, p db.WorkKeyItemInsertParams) (bool, error) {
	switch _, err := q.WorkKeyLock(ctx, p.Key.LogicalKey); {
	case err == nil:
		return false, nil
	case !errors.Is(err, db.ErrNotFound):
		return false, err
	}
	return db.ChainWorkKeyItemInsert(ctx, q, p)
}

// Savepoint runs SAVEPOINT, fn and RELEASE (or ROLLBACK TO and RELEASE) as plain statements of the transaction.
func (q queries) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	return db.ChainSavepoint(ctx, func(ctx context.Context, stmt string) error {
		_, err := q.tx.ExecContext(ctx, stmt)
		return interpretError(err)
	}, q, fn)
}

// WorkLaneItemLockSkipLocked runs the two SKIP LOCKED reads (no touch: the store reports SkipLocked false on
// OceanBase, where the touch would wait, so the batched claim never calls this there).
func (q queries) WorkLaneItemLockSkipLocked(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	r, err := q.q.WorkLaneLockSkipLocked(ctx, p.LaneKey)
	lane, _, err := conv.Locked(errs, mysqlgen.WorkLaneLockRow(r), r.DbNow, err, conv.WorkLaneLockFromGen)
	if err != nil {
		return lane, db.WorkItem{}, time.Time{}, err
	}
	ir, err := q.q.WorkItemLockSkipLocked(ctx, p.WorkID)
	item, now, err := conv.Locked(errs, ir.PcWorkItem, ir.DbNow, err, conv.WorkItemFromGen)
	return lane, item, now, err
}

// WorkKeyItemInsertAtCommit runs at once: the driver sends one statement per round trip anyway.
func (q queries) WorkKeyItemInsertAtCommit(ctx context.Context, p db.WorkKeyItemInsertParams, inserted *bool) error {
	return db.ChainWorkKeyItemInsertAtCommit(ctx, q, p, inserted)
}

// MemoryEntryInsertMany runs the inserts one by one.
func (q queries) MemoryEntryInsertMany(ctx context.Context, es []db.MemoryEntry) error {
	return db.ChainMemoryEntryInsertMany(ctx, q, es)
}

// MemoryEmbeddingUpsertMany runs the upserts one by one.
func (q queries) MemoryEmbeddingUpsertMany(ctx context.Context, es []db.MemoryEmbedding) error {
	return db.ChainMemoryEmbeddingUpsertMany(ctx, q, es)
}
