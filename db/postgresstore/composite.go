package postgresstore

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The composite steps (docs/protocol.md#round-trips). Inside a transaction the lock chains and the write chains are
// each one pipelined batch of the same generated statements (lazyTx.pipeline): one round trip instead of two or
// three, same statements, same order, same locks. WorkKeyItemInsert is one statement (data-modifying CTEs). In
// autocommit mode (on the Store) the steps run one after the other.

func (q queries) WorkLaneItemLock(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	if q.tx == nil {
		return db.ChainWorkLaneItemLock(ctx, q, p)
	}
	var (
		lane postgresgen.WorkLaneLockRow
		item postgresgen.WorkItemLockRow
	)
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) (err error) { lane, err = g.WorkLaneLock(ctx, p.LaneKey); return err },
		func(g *postgresgen.Queries) (err error) { item, err = g.WorkItemLock(ctx, p.WorkID); return err },
	)
	return lockedLaneItem(lane, item, res[0], res[1])
}

func (q queries) WorkLaneKeyDeleteItemLock(ctx context.Context, p db.WorkLaneKeyDeleteItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	if q.tx == nil {
		return db.ChainWorkLaneKeyDeleteItemLock(ctx, q, p)
	}
	var (
		lane postgresgen.WorkLaneLockRow
		item postgresgen.WorkItemLockRow
	)
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) (err error) { lane, err = g.WorkLaneLock(ctx, p.LaneKey); return err },
		func(g *postgresgen.Queries) error { _, err := g.WorkKeyDelete(ctx, p.LogicalKey); return err },
		func(g *postgresgen.Queries) (err error) { item, err = g.WorkItemLock(ctx, p.WorkID); return err },
	)
	if res[1] != nil && res[0] == nil {
		return db.WorkLane{}, db.WorkItem{}, time.Time{}, interpretError(res[1])
	}
	return lockedLaneItem(lane, item, res[0], res[2])
}

// lockedLaneItem converts the results of a lane lock and an item lock, the lane's error first.
func lockedLaneItem(lane postgresgen.WorkLaneLockRow, item postgresgen.WorkItemLockRow, laneErr, itemErr error) (db.WorkLane, db.WorkItem, time.Time, error) {
	l, _, err := conv.Locked(errs, lane, lane.DbNow, laneErr, conv.WorkLaneLockFromGen)
	if err != nil {
		return l, db.WorkItem{}, time.Time{}, err
	}
	i, now, err := conv.Locked(errs, item.PcWorkItem, item.DbNow, itemErr, conv.WorkItemFromGen)
	return l, i, now, err
}

func (q queries) WorkItemUpdateStateInsertAttempt(ctx context.Context, p db.WorkItemUpdateStateInsertAttemptParams) (int64, error) {
	if q.tx == nil {
		return db.ChainWorkItemUpdateStateInsertAttempt(ctx, q, p)
	}
	var n int64
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) (err error) {
			n, err = g.WorkItemUpdateState(ctx, conv.WorkItemUpdateStateToGen[postgresgen.WorkItemUpdateStateParams](p.State))
			return err
		},
		func(g *postgresgen.Queries) error {
			return g.WorkAttemptInsert(ctx, conv.WorkAttemptToGen[postgresgen.WorkAttemptInsertParams](p.Attempt))
		},
	)
	return n, interpretError(errors.Join(res...))
}

func (q queries) WorkItemUpdateStateFinishAttempt(ctx context.Context, p db.WorkItemUpdateStateFinishAttemptParams) (int64, error) {
	if q.tx == nil {
		return db.ChainWorkItemUpdateStateFinishAttempt(ctx, q, p)
	}
	var n, lanes int64
	steps := []func(g *postgresgen.Queries) error{
		func(g *postgresgen.Queries) (err error) {
			n, err = g.WorkItemUpdateState(ctx, conv.WorkItemUpdateStateToGen[postgresgen.WorkItemUpdateStateParams](p.State))
			return err
		},
		func(g *postgresgen.Queries) error {
			_, err := g.WorkAttemptFinish(ctx, conv.WorkAttemptFinishToGen[postgresgen.WorkAttemptFinishParams](p.Attempt))
			return err
		},
	}
	if p.AdvanceHead != nil {
		steps = append(steps, func(g *postgresgen.Queries) (err error) {
			lanes, err = g.WorkLaneAdvanceHead(ctx, postgresgen.WorkLaneAdvanceHeadParams(*p.AdvanceHead))
			return err
		})
	}
	res := q.tx.pipeline(ctx, steps...)
	if err := errors.Join(res...); err != nil {
		return n, interpretError(err)
	}
	if p.AdvanceHead != nil && lanes == 0 {
		return n, db.ErrNotFound
	}
	return n, nil
}

func (q queries) WorkKeyItemInsert(ctx context.Context, p db.WorkKeyItemInsertParams) (bool, error) {
	r, err := q.q.WorkKeyItemInsert(ctx, keyItemInsertArg(p))
	return keyItemInserted(r, err)
}

// WorkKeyItemInsertAtCommit queues the statement to go in front of the COMMIT, in its batch (lazyTx.atCommit).
func (q queries) WorkKeyItemInsertAtCommit(ctx context.Context, p db.WorkKeyItemInsertParams, inserted *bool) error {
	if q.tx == nil {
		return db.ChainWorkKeyItemInsertAtCommit(ctx, q, p, inserted)
	}
	arg := keyItemInsertArg(p)
	q.tx.atCommit = append(q.tx.atCommit, func(g *postgresgen.Queries) error {
		ok, err := keyItemInserted(g.WorkKeyItemInsert(ctx, arg))
		*inserted = ok
		return err
	})
	return nil
}

func keyItemInsertArg(p db.WorkKeyItemInsertParams) postgresgen.WorkKeyItemInsertParams {
	i := conv.WorkItemToGen[postgresgen.WorkItemInsertParams](p.Item)
	k := conv.WorkKeyToGen[postgresgen.WorkKeyInsertIfAbsentParams](p.Key)
	l := conv.WorkLaneUpdateToGen[postgresgen.WorkLaneUpdateParams](p.Lane)
	return postgresgen.WorkKeyItemInsertParams{
		KeyLogicalKey: k.LogicalKey, KeyWorkID: k.WorkID, KeyLaneKey: k.LaneKey, KeyCreatedAt: k.CreatedAt,
		LaneNextSequence: l.NextSequence, LaneHeadSequence: l.HeadSequence, LaneLaneKey: l.LaneKey,
		WorkID: i.WorkID, LogicalKey: i.LogicalKey, LaneKey: i.LaneKey, LaneSequence: i.LaneSequence, Kind: i.Kind,
		PayloadVersion: i.PayloadVersion, ScopeID: i.ScopeID, Payload: i.Payload, Status: i.Status,
		AvailableAt: i.AvailableAt, LeaseOwner: i.LeaseOwner, LeaseFence: i.LeaseFence,
		LeaseExpiresAt: i.LeaseExpiresAt, AttemptCount: i.AttemptCount,
		GenerationAttemptCount: i.GenerationAttemptCount, RecoveryGeneration: i.RecoveryGeneration,
		MaxAttempts: i.MaxAttempts, CancelRequested: i.CancelRequested, ResultCode: i.ResultCode,
		ResultPayload: i.ResultPayload, ErrorCategory: i.ErrorCategory, ErrorCode: i.ErrorCode,
		StateVersion: i.StateVersion, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, CompletedAt: i.CompletedAt,
	}
}

func keyItemInserted(r postgresgen.WorkKeyItemInsertRow, err error) (bool, error) {
	if err != nil {
		return false, interpretError(err)
	}
	if r.KeysInserted == 0 {
		return false, nil
	}
	if r.LanesUpdated == 0 {
		return true, db.ErrNotFound // as WorkLaneUpdate: the lane does not exist (the statement wrote key and item)
	}
	return true, nil
}

// Savepoint queues its statements in front of the next statement (lazyTx.savepoint): no round trip of its own.
func (q queries) Savepoint(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	if q.tx == nil {
		return nil, db.ErrNoTransaction
	}
	return q.tx.savepoint(ctx, q, fn)
}

// WorkLaneItemLockSkipLocked pipelines both SKIP LOCKED reads (the item's never waits either, so locking it when
// the lane was skipped is harmless: the transaction holds it without waiting for anything).
func (q queries) WorkLaneItemLockSkipLocked(ctx context.Context, p db.WorkLaneItemLockParams) (db.WorkLane, db.WorkItem, time.Time, error) {
	var (
		lane postgresgen.WorkLaneLockSkipLockedRow
		item postgresgen.WorkItemLockSkipLockedRow
	)
	if q.tx == nil {
		return db.WorkLane{}, db.WorkItem{}, time.Time{}, db.ErrNoTransaction
	}
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) (err error) {
			lane, err = g.WorkLaneLockSkipLocked(ctx, p.LaneKey)
			return err
		},
		func(g *postgresgen.Queries) (err error) {
			item, err = g.WorkItemLockSkipLocked(ctx, p.WorkID)
			return err
		},
	)
	return lockedLaneItem(postgresgen.WorkLaneLockRow(lane), postgresgen.WorkItemLockRow(item), res[0], res[1])
}

// manyBatch bounds the statements of one pipelined batch of a Many step (a revision holds at most 500 entries).
const manyBatch = 256

// MemoryEntryInsertMany pipelines the inserts inside a transaction, manyBatch per round trip.
func (q queries) MemoryEntryInsertMany(ctx context.Context, es []db.MemoryEntry) error {
	if q.tx == nil {
		return db.ChainMemoryEntryInsertMany(ctx, q, es)
	}
	return pipelineEach(ctx, q.tx, es, func(g *postgresgen.Queries, e db.MemoryEntry) error {
		return g.MemoryEntryInsert(ctx, conv.MemoryEntryToGen[postgresgen.MemoryEntryInsertParams](e))
	})
}

// MemoryEmbeddingUpsertMany pipelines the upserts inside a transaction, manyBatch per round trip.
func (q queries) MemoryEmbeddingUpsertMany(ctx context.Context, es []db.MemoryEmbedding) error {
	if q.tx == nil {
		return db.ChainMemoryEmbeddingUpsertMany(ctx, q, es)
	}
	return pipelineEach(ctx, q.tx, es, func(g *postgresgen.Queries, e db.MemoryEmbedding) error {
		return g.MemoryEmbeddingUpsert(ctx, conv.MemoryEmbeddingToGen[postgresgen.MemoryEmbeddingUpsertParams](e))
	})
}

// pipelineEach runs one statement per row, manyBatch rows per pipelined batch, and returns the first error.
func pipelineEach[T any](ctx context.Context, tx *lazyTx, rows []T, stmt func(g *postgresgen.Queries, row T) error) error {
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), manyBatch)]
		rows = rows[len(chunk):]
		steps := make([]func(g *postgresgen.Queries) error, len(chunk))
		for i, row := range chunk {
			steps[i] = func(g *postgresgen.Queries) error { return stmt(g, row) }
		}
		for _, err := range tx.pipeline(ctx, steps...) {
			if err != nil {
				return interpretError(err)
			}
		}
	}
	return nil
}
