package postgresstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The set-based ledger steps (docs/protocol.md#set-based-claim, #set-based-completion): a claim pass is one
// statement, and a batch's completion is one pipelined batch of lock statements plus one finishing statement.

// WorkItemClaimMany runs the whole claim pass as one statement (data-modifying CTEs) in a transaction of its own,
// after WorkItemPinPlan: BEGIN, the plan settings, the claim and COMMIT go in one pipelined batch, one round trip.
func (s *Store) WorkItemClaimMany(ctx context.Context, p db.WorkItemClaimManyParams) (db.WorkItemClaimManyResult, error) {
	var rows []postgresgen.WorkItemClaimManyRow
	if err := s.oneShot(ctx, claimSteps(ctx, p, &rows)...); err != nil {
		return db.WorkItemClaimManyResult{}, err
	}
	return claimSetResult(p, rows)
}

// WorkItemClaimMany inside InTx: the plan settings and the claim in one pipelined batch of the transaction.
func (q queries) WorkItemClaimMany(ctx context.Context, p db.WorkItemClaimManyParams) (db.WorkItemClaimManyResult, error) {
	if q.tx == nil {
		return db.WorkItemClaimManyResult{}, db.ErrNoTransaction
	}
	var rows []postgresgen.WorkItemClaimManyRow
	if err := errors.Join(q.tx.pipeline(ctx, claimSteps(ctx, p, &rows)...)...); err != nil {
		return db.WorkItemClaimManyResult{}, interpretError(err)
	}
	return claimSetResult(p, rows)
}

// claimSteps are the statements of a claim pass: the plan settings (WorkItemPinPlan), then the claim, its rows
// into rows.
func claimSteps(ctx context.Context, p db.WorkItemClaimManyParams, rows *[]postgresgen.WorkItemClaimManyRow) []func(g *postgresgen.Queries) error {
	return []func(g *postgresgen.Queries) error{
		func(g *postgresgen.Queries) error { return g.WorkItemPinPlan(ctx) },
		func(g *postgresgen.Queries) (err error) {
			*rows, err = g.WorkItemClaimMany(ctx, claimSetArg(p))
			return err
		},
	}
}

func claimSetArg(p db.WorkItemClaimManyParams) postgresgen.WorkItemClaimManyParams {
	arg := postgresgen.WorkItemClaimManyParams{
		Kinds: make([]string, 0, len(p.Supported)), MinVersions: make([]int32, 0, len(p.Supported)),
		MaxVersions: make([]int32, 0, len(p.Supported)), Candidates: p.Candidates, Slots: p.Slots, Owner: p.Owner,
		LeaseMicros: p.Lease.Microseconds(), TraceIds: nonNil(p.TraceIDs), SpanIds: nonNil(p.SpanIDs),
	}
	for _, s := range p.Supported {
		arg.Kinds, arg.MinVersions, arg.MaxVersions = append(arg.Kinds, s.Kind), append(arg.MinVersions, s.Min), append(arg.MaxVersions, s.Max)
	}
	return arg
}

func claimSetResult(p db.WorkItemClaimManyParams, rows []postgresgen.WorkItemClaimManyRow) (db.WorkItemClaimManyResult, error) {
	var res db.WorkItemClaimManyResult
	claimed := countClaimed(rows)
	for _, r := range rows {
		res.Now = conv.TimeFromGen(r.DbNow)
		item := conv.WorkItemFromGen[time.Time](postgresgen.PcWorkItem{
			WorkID: r.WorkID, LogicalKey: r.LogicalKey, LaneKey: r.LaneKey, LaneSequence: r.LaneSequence, Kind: r.Kind,
			PayloadVersion: r.PayloadVersion, ScopeID: r.ScopeID, Payload: r.Payload, Status: r.Status,
			AvailableAt: r.AvailableAt, LeaseOwner: r.LeaseOwner, LeaseFence: r.LeaseFence,
			LeaseExpiresAt: r.LeaseExpiresAt, AttemptCount: r.AttemptCount,
			GenerationAttemptCount: r.GenerationAttemptCount, RecoveryGeneration: r.RecoveryGeneration,
			MaxAttempts: r.MaxAttempts, CancelRequested: r.CancelRequested, ResultCode: r.ResultCode,
			ResultPayload: r.ResultPayload, ErrorCategory: r.ErrorCategory, ErrorCode: r.ErrorCode,
			StateVersion: r.StateVersion, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, CompletedAt: r.CompletedAt,
		})
		if !r.Claimed {
			res.Expired = append(res.Expired, db.ClaimCandidate{WorkID: item.WorkID, LaneKey: item.LaneKey,
				LogicalKey: item.LogicalKey, LaneSequence: item.LaneSequence, Kind: item.Kind,
				PayloadVersion: item.PayloadVersion, Status: item.Status})
			continue
		}
		if r.AttemptsInserted != int64(claimed) {
			return db.WorkItemClaimManyResult{}, fmt.Errorf("postgresstore: claim set inserted %d attempts for %d claims", r.AttemptsInserted, claimed)
		}
		slot := int32(0)
		if int(r.Slot) <= len(p.TraceIDs) {
			slot = r.Slot
		}
		res.Claimed = append(res.Claimed, db.ClaimedItem{Item: item, Slot: slot,
			PreviousTraceID: conv.TextFromGen(r.PreviousTraceID), PreviousSpanID: conv.TextFromGen(r.PreviousSpanID)})
	}
	return res, nil
}

func countClaimed(rows []postgresgen.WorkItemClaimManyRow) int {
	n := 0
	for _, r := range rows {
		if r.Claimed {
			n++
		}
	}
	return n
}

// WorkLaneKeyItemLockMany sends the plan settings (WorkItemPinPlan, for the rest of the transaction), the lane, key
// and item lock statements and a clock read in one pipelined batch: they run one after the other on the server, so
// every lane is locked (ascending) before any key, and every key before any item, and the clock is read once all are
// held.
func (q queries) WorkLaneKeyItemLockMany(ctx context.Context, refs []db.WorkItemRef) ([]db.LockedItem, time.Time, error) {
	if q.tx == nil {
		return nil, time.Time{}, db.ErrNoTransaction
	}
	lanesIn, keysIn, itemsIn := db.RefKeys(refs)
	var (
		lanes []postgresgen.PcWorkLane
		keys  []postgresgen.PcWorkKey
		items []postgresgen.WorkItemLockManyRow
		now   time.Time
	)
	res := q.tx.pipeline(ctx,
		func(g *postgresgen.Queries) error { return g.WorkItemPinPlan(ctx) },
		func(g *postgresgen.Queries) (err error) { lanes, err = g.WorkLaneLockMany(ctx, lanesIn); return err },
		func(g *postgresgen.Queries) (err error) { keys, err = g.WorkKeyLockMany(ctx, keysIn); return err },
		func(g *postgresgen.Queries) (err error) { items, err = g.WorkItemLockMany(ctx, itemsIn); return err },
		func(g *postgresgen.Queries) (err error) { now, err = g.DBNow(ctx); return err },
	)
	if err := errors.Join(res...); err != nil {
		return nil, time.Time{}, interpretError(err)
	}
	laneOf := make(map[string]db.WorkLane, len(lanes))
	for _, l := range lanes {
		laneOf[l.LaneKey] = conv.WorkLaneFromGen(l)
	}
	hasKey := make(map[string]bool, len(keys))
	for _, k := range keys {
		hasKey[k.LogicalKey] = true
	}
	itemOf := make(map[string]db.WorkItem, len(items))
	for _, r := range items {
		itemOf[r.PcWorkItem.WorkID] = conv.WorkItemFromGen[time.Time](r.PcWorkItem)
	}
	return db.LockedItems(refs, laneOf, hasKey, itemOf), conv.TimeFromGen(now), nil
}

// WorkItemSucceedMany finishes the batch in one statement and checks that every part of it matched every item.
func (q queries) WorkItemSucceedMany(ctx context.Context, p db.WorkItemSucceedManyParams) (int64, error) {
	r, err := q.q.WorkItemSucceedMany(ctx, succeedArg(p))
	if err != nil {
		return 0, interpretError(err)
	}
	if r.AttemptsFinished != r.ItemsUpdated {
		return 0, fmt.Errorf("postgresstore: succeed set finished %d attempts for %d items", r.AttemptsFinished, r.ItemsUpdated)
	}
	return r.ItemsUpdated, nil
}

// WorkItemSucceedManyAtCommit queues WorkItemSucceedMany in front of the COMMIT, in its pipelined batch
// (lazyTx.atCommit), followed by WorkItemAssertSucceededMany: unless every item finished, that statement fails, the
// transaction is aborted and the COMMIT rolls it back. Outside a transaction it runs at once.
func (q queries) WorkItemSucceedManyAtCommit(ctx context.Context, p db.WorkItemSucceedManyParams) error {
	if q.tx == nil || len(p.Items) == 0 {
		return db.ChainWorkItemSucceedManyAtCommit(ctx, q, p)
	}
	arg := succeedArg(p)
	q.tx.atCommit = append(q.tx.atCommit,
		func(g *postgresgen.Queries) error {
			_, err := g.WorkItemSucceedMany(ctx, arg) // the counts are the guard's to check, before the COMMIT
			return err
		},
		func(g *postgresgen.Queries) error {
			err := g.WorkItemAssertSucceededMany(ctx, postgresgen.WorkItemAssertSucceededManyParams{WorkIds: arg.WorkIds,
				ExpectedVersions: arg.ExpectedVersions})
			if err != nil && !errors.Is(err, errRecorded) {
				return fmt.Errorf("%w: %w", db.ErrAtCommitShort, interpretError(err))
			}
			return err
		})
	return nil
}

func succeedArg(p db.WorkItemSucceedManyParams) postgresgen.WorkItemSucceedManyParams {
	arg := postgresgen.WorkItemSucceedManyParams{Now: conv.TimeToGen[time.Time](p.Now)}
	for _, it := range p.Items {
		arg.WorkIds = append(arg.WorkIds, it.WorkID)
		arg.ExpectedVersions = append(arg.ExpectedVersions, it.ExpectedVersion)
		arg.ResultCodes = append(arg.ResultCodes, it.ResultCode)
		arg.ResultPayloads = append(arg.ResultPayloads, it.ResultPayload)
	}
	return arg
}
