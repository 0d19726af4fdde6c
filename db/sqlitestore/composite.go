package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The composite steps run their statements one after the other (db.Chain…): SQLite is in-process, so a statement
// costs no network round trip and one statement per step keeps the queries plain.

func (q *queries) WorkLaneItemLock(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	return db.ChainWorkLaneItemLock(ctx, q, p)
}

func (q *queries) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	return db.ChainWorkLaneKeyDeleteItemLock(ctx, q, p)
}

func (q *queries) WorkItemUpdateStateInsertAttempt(ctx context.Context, p db.WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	return db.ChainWorkItemUpdateStateInsertAttempt(ctx, q, p)
}

func (q *queries) WorkItemUpdateStateFinishAttempt(ctx context.Context, p db.WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	return db.ChainWorkItemUpdateStateFinishAttempt(ctx, q, p)
}

func (q *queries) WorkKeyItemInsert(ctx context.Context, p db.WorkKeyItemInsertParams) (bool, error) {
	return db.ChainWorkKeyItemInsert(ctx, q, p)
}

// Savepoint runs SAVEPOINT, fn and RELEASE (or ROLLBACK TO and RELEASE) as plain statements of the transaction.
func (q *queries) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	return db.ChainSavepoint(ctx, func(ctx context.Context, stmt string) error {
		_, err := q.tx.ExecContext(ctx, stmt)
		return interpretError(err)
	}, q, fn)
}

// WorkLaneItemLockSkipLocked is WorkLaneItemLock: inside BEGIN IMMEDIATE no other transaction holds a row.
func (q *queries) WorkLaneItemLockSkipLocked(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	r, err := q.w.WorkLaneLockSkipLocked(ctx, p.LaneKey)
	lane, _, err := conv.Locked(errs, sqlitegen.WorkLaneLockRow(r), r.DbNow, err, conv.WorkLaneLockFromGen)
	if err != nil {
		return lane, db.WorkItem{}, time.Time{}, err
	}
	ir, err := q.w.WorkItemLockSkipLocked(ctx, p.WorkID)
	item, now, err := conv.Locked(errs, ir.PcWorkItem, ir.DbNow, err, conv.WorkItemFromGen)
	return lane, item, now, err
}

// WorkKeyItemInsertAtCommit runs at once (in-process calls: nothing to pipeline).
func (q *queries) WorkKeyItemInsertAtCommit(ctx context.Context, p db.WorkKeyItemInsertParams, inserted *bool) error {
	return db.ChainWorkKeyItemInsertAtCommit(ctx, q, p, inserted)
}

// MemoryEntryInsertMany runs the inserts one by one.
func (q *queries) MemoryEntryInsertMany(ctx context.Context, es []db.MemoryEntry) error {
	return db.ChainMemoryEntryInsertMany(ctx, q, es)
}

// MemoryEmbeddingUpsertMany runs the upserts one by one.
func (q *queries) MemoryEmbeddingUpsertMany(ctx context.Context, es []db.MemoryEmbedding) error {
	return db.ChainMemoryEmbeddingUpsertMany(ctx, q, es)
}
