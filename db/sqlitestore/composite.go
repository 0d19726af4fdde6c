package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SQLite has no row locks: a write transaction (BEGIN IMMEDIATE) already holds the database write lock, so the
// locking reads of a composite step are one read of lane and item (WorkLaneItemLockJoined), which locks nothing
// less. The write steps run their statements one after the other (db.Chain…): SQLite is in-process, and it has no
// statement that writes two tables (docs/protocol.md#round-trips).

// WorkLaneItemLock reads lane and item in one statement. Either row missing: db.ErrNotFound.
func (q *queries) WorkLaneItemLock(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	r, err := q.w.WorkLaneItemReadLocked(ctx, sqlitegen.WorkLaneItemReadLockedParams{WorkID: p.WorkID, LaneKey: p.LaneKey})
	return conv.JoinedLaneItemFromGen(errs, r.LaneKey, r.NextSequence, r.HeadSequence, r.PcWorkItem, r.DbNow, err)
}

// WorkLaneKeyDeleteItemLock reads lane and item in one statement and deletes the key; the order of the two does not
// matter on SQLite, where nothing is locked row by row.
func (q *queries) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	lane, item, now, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: p.LaneKey, WorkID: p.WorkID})
	if err != nil {
		return lane, item, now, err
	}
	if _, err := q.WorkKeyDelete(ctx, p.LogicalKey); err != nil {
		return db.WorkLane{}, db.WorkItem{}, time.Time{}, err
	}
	return lane, item, now, nil
}

// Savepoint runs SAVEPOINT, fn and RELEASE (or ROLLBACK TO and RELEASE) as plain statements of the transaction.
func (q *queries) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	return db.ChainSavepoint(ctx, db.SQLExec(q.tx, interpretError), q, fn)
}

// WorkLaneItemLockSkipLocked is WorkLaneItemLock: inside BEGIN IMMEDIATE no other transaction holds a row.
func (q *queries) WorkLaneItemLockSkipLocked(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	return q.WorkLaneItemLock(ctx, p)
}
