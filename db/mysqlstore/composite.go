package mysqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// go-sql-driver sends one statement per round trip, and the adapter does not enable multi-statement queries (sqlc
// compiles one statement per query). On MariaDB and MySQL 8 the locking reads of a composite step are one joined
// SELECT … FOR UPDATE: InnoDB locks each row as the join reads it, and STRAIGHT_JOIN fixes the read order to the lock
// order (lane → key → item; TestJoinedLocksKeepTheLockOrder). OceanBase, whose locking reads start with a touch,
// and the write steps run their statements one after the other (db.Chain…) (docs/protocol.md#round-trips).

// WorkLaneItemLock locks lane then item in one statement (MariaDB, MySQL 8). Either row missing: db.ErrNotFound.
func (q queries) WorkLaneItemLock(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	if q.flavor.oceanBase {
		return db.ChainWorkLaneItemLock(ctx, q, p)
	}
	r, err := q.q.WorkLaneItemLockJoined(ctx, mysqlgen.WorkLaneItemLockJoinedParams{WorkID: p.WorkID, LaneKey: p.LaneKey})
	return conv.JoinedLaneItemFromGen(errs, r.LaneKey, r.NextSequence, r.HeadSequence, r.PcWorkItem, r.DbNow, err)
}

// WorkLaneKeyDeleteItemLock locks lane, key (when present) and item in one statement, then deletes the key it found
// (MariaDB, MySQL 8): the DELETE takes no new lock. The chain's DELETE ran before the item lock; here a key
// inserted by another transaction after the locking read is not deleted, which can only be another item's key.
func (q queries) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	if q.flavor.oceanBase {
		return db.ChainWorkLaneKeyDeleteItemLock(ctx, q, p)
	}
	r, err := q.q.WorkLaneKeyItemLockJoined(ctx, mysqlgen.WorkLaneKeyItemLockJoinedParams{LogicalKey: p.LogicalKey, WorkID: p.WorkID, LaneKey: p.LaneKey})
	lane, item, now, err := conv.JoinedLaneItemFromGen(errs, r.LaneKey, r.NextSequence, r.HeadSequence, r.PcWorkItem, r.DbNow, err)
	if err != nil || r.HasKey == 0 {
		return lane, item, now, err
	}
	if _, err := q.WorkKeyDelete(ctx, p.LogicalKey); err != nil {
		return db.WorkLane{}, db.WorkItem{}, time.Time{}, err
	}
	return lane, item, now, nil
}

// WorkItemUpdateStateFinishAttempt writes the item and finishes its attempt in one multi-table UPDATE, then advances
// the head if asked. The UPDATE joins the item's unfinished attempt: the chain's result differs only when another
// attempt of the item is unfinished, which the protocol never leaves (every path that starts an attempt finishes
// the previous one); it then matches nothing and the caller fails the transaction instead of finishing the wrong
// attempt. An attempt of another item (never asked for) runs the chain.
//
// On MariaDB the head advance joins the same UPDATE (WorkItemFinishAdvanceJoined): one statement
// for the whole finish. When that matches nothing (a stale version, or a missing lane, never left by the protocol)
// it wrote nothing, and the two statements below run to report which (0, or db.ErrNotFound from the advance). MySQL
// 8 documents the same form as allowed (the derived table is materialised), but there is no MySQL 8 here to test
// it, so it keeps the two statements.
func (q queries) WorkItemUpdateStateFinishAttempt(ctx context.Context, p db.WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	if p.Attempt.WorkID != p.State.Item.WorkID {
		return db.ChainWorkItemUpdateStateFinishAttempt(ctx, q, p)
	}
	st := conv.WorkItemUpdateStateToGen[mysqlgen.WorkItemUpdateStateParams](p.State)
	at := conv.WorkAttemptFinishToGen[mysqlgen.WorkAttemptFinishParams](p.Attempt)
	if p.AdvanceHead != nil && q.flavor.mariaDB {
		n, err := q.q.WorkItemFinishAdvanceJoined(ctx, mysqlgen.WorkItemFinishAdvanceJoinedParams{
			Status: st.Status, AvailableAt: st.AvailableAt, LeaseOwner: st.LeaseOwner, LeaseFence: st.LeaseFence,
			LeaseExpiresAt: st.LeaseExpiresAt, AttemptCount: st.AttemptCount, GenerationAttemptCount: st.GenerationAttemptCount,
			RecoveryGeneration: st.RecoveryGeneration, MaxAttempts: st.MaxAttempts, CancelRequested: st.CancelRequested,
			ResultCode: st.ResultCode, ResultPayload: st.ResultPayload, ErrorCategory: st.ErrorCategory, ErrorCode: st.ErrorCode,
			StateVersion: st.StateVersion, UpdatedAt: st.UpdatedAt, CompletedAt: st.CompletedAt,
			FinishedAt: at.FinishedAt, Outcome: nullable(at.Outcome), AttemptErrorCategory: nullable(at.ErrorCategory),
			AttemptErrorCode: nullable(at.ErrorCode), LaneKey: p.AdvanceHead.LaneKey, AfterSequence: p.AdvanceHead.AfterSequence,
			WorkID: st.WorkID, ExpectedVersion: st.ExpectedVersion, AttemptNo: int64(at.AttemptNo),
		})
		if err != nil {
			return 0, errs(err)
		}
		if n > 0 { // rows matched: the item and the lane, plus the attempt when there was one to finish
			return 1, nil
		}
	}
	n, err := q.q.WorkItemFinishJoined(ctx, mysqlgen.WorkItemFinishJoinedParams{
		Status: st.Status, AvailableAt: st.AvailableAt, LeaseOwner: st.LeaseOwner, LeaseFence: st.LeaseFence,
		LeaseExpiresAt: st.LeaseExpiresAt, AttemptCount: st.AttemptCount, GenerationAttemptCount: st.GenerationAttemptCount,
		RecoveryGeneration: st.RecoveryGeneration, MaxAttempts: st.MaxAttempts, CancelRequested: st.CancelRequested,
		ResultCode: st.ResultCode, ResultPayload: st.ResultPayload, ErrorCategory: st.ErrorCategory, ErrorCode: st.ErrorCode,
		StateVersion: st.StateVersion, UpdatedAt: st.UpdatedAt, CompletedAt: st.CompletedAt,
		FinishedAt: at.FinishedAt, Outcome: nullable(at.Outcome), AttemptErrorCategory: nullable(at.ErrorCategory),
		AttemptErrorCode: nullable(at.ErrorCode), WorkID: st.WorkID, ExpectedVersion: st.ExpectedVersion,
		AttemptNo: int64(at.AttemptNo),
	})
	if err != nil {
		return 0, errs(err)
	}
	if n == 0 {
		return 0, nil
	}
	// Rows matched: the item, plus its attempt when there was one to finish.
	if p.AdvanceHead != nil {
		if err := q.WorkLaneAdvanceHead(ctx, *p.AdvanceHead); err != nil {
			return 1, err
		}
	}
	return 1, nil
}

// nullable passes a NULL-able text parameter typed as any by sqlc (a CAST in the statement) as NULL or its value.
func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// WorkKeyItemInsert inserts the key, the lane position and the item, or writes nothing when the key exists. An
// INSERT IGNORE that finds the key would take a shared lock on it, and two such transactions (of two lanes) asking
// for the exclusive lock afterwards would deadlock (docs/protocol.md#creating-rows). So on MariaDB and MySQL 8 the
// key is inserted only when a consistent read finds it absent (WorkKeyInsertIfAbsentUnlocked: one statement, no lock on
// an existing key); a key committed by a concurrent transaction of another lane meanwhile (which the protocol
// refuses as an identity mismatch) fails it as a duplicate, and it is joined like any existing key. OceanBase locks
// an existing key first (WorkKeyLock) and then inserts. Either way the caller's WorkKeyLock takes the exclusive lock.
func (q queries) WorkKeyItemInsert(ctx context.Context, p db.WorkKeyItemInsertParams) (bool, error) {
	if q.flavor.oceanBase {
		switch _, err := q.WorkKeyLock(ctx, p.Key.LogicalKey); {
		case err == nil:
			return false, nil
		case !errors.Is(err, db.ErrNotFound):
			return false, err
		}
		return db.ChainWorkKeyItemInsert(ctx, q, p)
	}
	n, err := q.q.WorkKeyInsertIfAbsentUnlocked(ctx, mysqlgen.WorkKeyInsertIfAbsentUnlockedParams{
		LogicalKey: p.Key.LogicalKey, WorkID: p.Key.WorkID, LaneKey: p.Key.LaneKey, CreatedAt: conv.TimeToGen[time.Time](p.Key.CreatedAt),
	})
	switch err = errs(err); {
	case errors.Is(err, db.ErrConflict):
		return false, nil
	case err != nil:
		return false, err
	case n != 1:
		return false, nil
	}
	if err := q.WorkLaneUpdate(ctx, p.Lane); err != nil {
		return true, err
	}
	return true, q.WorkItemInsert(ctx, p.Item)
}

// Savepoint runs SAVEPOINT, fn and RELEASE (or ROLLBACK TO and RELEASE) as plain statements of the transaction.
func (q queries) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	inner := q
	inner.atCommit = nil // writes waiting for the COMMIT could not be rolled back to the savepoint
	return db.ChainSavepoint(ctx, db.SQLExec(q.tx, interpretError), inner, fn)
}

// WorkLaneItemLockSkipLocked locks lane then item with SKIP LOCKED in one statement (no touch: the store reports
// SkipLocked false on OceanBase, where the touch would wait, so the batched claim never calls this there).
func (q queries) WorkLaneItemLockSkipLocked(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	r, err := q.q.WorkLaneItemLockJoinedSkipLocked(ctx, mysqlgen.WorkLaneItemLockJoinedSkipLockedParams{WorkID: p.WorkID, LaneKey: p.LaneKey})
	return conv.JoinedLaneItemFromGen(errs, r.LaneKey, r.NextSequence, r.HeadSequence, r.PcWorkItem, r.DbNow, err)
}
