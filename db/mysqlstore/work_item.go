package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func workItemFromGen(r mysqlgen.PcWorkItem) db.WorkItem {
	return db.WorkItem{
		WorkID:                 r.WorkID,
		LogicalKey:             r.LogicalKey,
		LaneKey:                r.LaneKey,
		LaneSequence:           r.LaneSequence,
		Kind:                   r.Kind,
		PayloadVersion:         r.PayloadVersion,
		ScopeID:                r.ScopeID,
		Payload:                r.Payload,
		Status:                 r.Status,
		AvailableAt:            r.AvailableAt.UTC(),
		LeaseOwner:             fromNullString(r.LeaseOwner),
		LeaseFence:             r.LeaseFence,
		LeaseExpiresAt:         fromNullTime(r.LeaseExpiresAt),
		AttemptCount:           r.AttemptCount,
		GenerationAttemptCount: r.GenerationAttemptCount,
		RecoveryGeneration:     r.RecoveryGeneration,
		MaxAttempts:            r.MaxAttempts,
		CancelRequested:        r.CancelRequested,
		ResultCode:             fromNullString(r.ResultCode),
		ResultPayload:          r.ResultPayload,
		ErrorCategory:          fromNullString(r.ErrorCategory),
		ErrorCode:              fromNullString(r.ErrorCode),
		StateVersion:           r.StateVersion,
		CreatedAt:              r.CreatedAt.UTC(),
		UpdatedAt:              r.UpdatedAt.UTC(),
		CompletedAt:            fromNullTime(r.CompletedAt),
	}
}

func (q *queries) WorkItemInsert(ctx context.Context, item db.WorkItem) error {
	return interpretError(q.q.WorkItemInsert(ctx, mysqlgen.WorkItemInsertParams{
		WorkID:                 item.WorkID,
		LogicalKey:             item.LogicalKey,
		LaneKey:                item.LaneKey,
		LaneSequence:           item.LaneSequence,
		Kind:                   item.Kind,
		PayloadVersion:         item.PayloadVersion,
		ScopeID:                item.ScopeID,
		Payload:                item.Payload,
		Status:                 item.Status,
		AvailableAt:            ts(item.AvailableAt),
		LeaseOwner:             nullString(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         nullTime(item.LeaseExpiresAt),
		AttemptCount:           item.AttemptCount,
		GenerationAttemptCount: item.GenerationAttemptCount,
		RecoveryGeneration:     item.RecoveryGeneration,
		MaxAttempts:            item.MaxAttempts,
		CancelRequested:        item.CancelRequested,
		ResultCode:             nullString(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          nullString(item.ErrorCategory),
		ErrorCode:              nullString(item.ErrorCode),
		StateVersion:           item.StateVersion,
		CreatedAt:              ts(item.CreatedAt),
		UpdatedAt:              ts(item.UpdatedAt),
		CompletedAt:            nullTime(item.CompletedAt),
	}))
}

func (q *queries) WorkItemLock(ctx context.Context, workID string) (db.WorkItem, time.Time, error) {
	if _, err := q.q.WorkItemTouch(ctx, workID); err != nil {
		return db.WorkItem{}, time.Time{}, interpretError(err)
	}
	r, err := q.q.WorkItemLock(ctx, workID)
	if err != nil {
		return db.WorkItem{}, time.Time{}, interpretError(err)
	}
	return workItemFromGen(r.PcWorkItem), r.DbNow.UTC(), nil
}

func (q *queries) WorkItemGet(ctx context.Context, workID string) (db.WorkItem, error) {
	r, err := q.q.WorkItemGet(ctx, workID)
	if err != nil {
		return db.WorkItem{}, interpretError(err)
	}
	return workItemFromGen(r), nil
}

func (q *queries) WorkItemUpdateState(ctx context.Context, item db.WorkItem, expectedVersion int64) (int64, error) {
	n, err := q.q.WorkItemUpdateState(ctx, mysqlgen.WorkItemUpdateStateParams{
		Status:                 item.Status,
		AvailableAt:            ts(item.AvailableAt),
		LeaseOwner:             nullString(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         nullTime(item.LeaseExpiresAt),
		AttemptCount:           item.AttemptCount,
		GenerationAttemptCount: item.GenerationAttemptCount,
		RecoveryGeneration:     item.RecoveryGeneration,
		MaxAttempts:            item.MaxAttempts,
		CancelRequested:        item.CancelRequested,
		ResultCode:             nullString(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          nullString(item.ErrorCategory),
		ErrorCode:              nullString(item.ErrorCode),
		StateVersion:           item.StateVersion,
		UpdatedAt:              ts(item.UpdatedAt),
		CompletedAt:            nullTime(item.CompletedAt),
		WorkID:                 item.WorkID,
		ExpectedVersion:        expectedVersion,
	})
	return n, interpretError(err)
}

func (q *queries) WorkItemExtendLease(ctx context.Context, p db.ExtendLeaseParams) (int64, error) {
	n, err := q.q.WorkItemExtendLease(ctx, mysqlgen.WorkItemExtendLeaseParams{
		LeaseExpiresAt: nullTime(p.LeaseExpiresAt),
		WorkID:         p.WorkID,
		LeaseOwner:     nullString(p.LeaseOwner),
		LeaseFence:     p.LeaseFence,
		AttemptCount:   p.AttemptCount,
	})
	return n, interpretError(err)
}

func (q *queries) WorkItemMinLiveSequenceAfter(ctx context.Context, laneKey string, after int64) (int64, error) {
	seq, err := q.q.WorkItemMinLiveSequenceAfter(ctx, mysqlgen.WorkItemMinLiveSequenceAfterParams{
		LaneKey:       laneKey,
		AfterSequence: after,
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return seq, nil
}

func (q *queries) WorkItemClaimCandidates(ctx context.Context, kinds []string, limit int32) ([]db.ClaimCandidate, error) {
	rows, err := q.q.WorkItemClaimCandidates(ctx, mysqlgen.WorkItemClaimCandidatesParams{
		Kinds: kinds, Limit: limit, Limit_2: limit, Limit_3: limit, Limit_4: limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ClaimCandidate, len(rows))
	for i, r := range rows {
		out[i] = db.ClaimCandidate{
			WorkID:         r.WorkID,
			LaneKey:        r.LaneKey,
			LogicalKey:     r.LogicalKey,
			LaneSequence:   r.LaneSequence,
			Kind:           r.Kind,
			PayloadVersion: r.PayloadVersion,
			Status:         r.Status,
		}
	}
	return out, nil
}

func (q *queries) WorkItemHeadKindVersions(ctx context.Context) ([]db.KindVersionCount, error) {
	rows, err := q.q.WorkItemHeadKindVersions(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.KindVersionCount, len(rows))
	for i, r := range rows {
		out[i] = db.KindVersionCount{Kind: r.Kind, PayloadVersion: r.PayloadVersion, Count: r.Count}
	}
	return out, nil
}

func (q *queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	rows, err := q.q.WorkItemList(ctx, mysqlgen.WorkItemListParams{
		Kinds:           p.Kinds,
		ScopeID:         p.ScopeID,
		Status:          p.Status,
		BeforeCreatedAt: nullTime(p.BeforeCreatedAt),
		BeforeWorkID:    p.BeforeWorkID,
		Limit:           p.Limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.WorkItem, len(rows))
	for i, r := range rows {
		out[i] = workItemFromGen(r)
	}
	return out, nil
}

func (q *queries) WorkItemPurgeCandidates(ctx context.Context, completedBefore time.Time, limit int32) ([]string, error) {
	ids, err := q.q.WorkItemPurgeCandidates(ctx, mysqlgen.WorkItemPurgeCandidatesParams{
		CompletedBefore: nullTime(completedBefore),
		Limit:           limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return ids, nil
}

func (q *queries) WorkItemDeleteTerminal(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	n, err := q.q.WorkItemDeleteTerminal(ctx, workIDs)
	return n, interpretError(err)
}

func (q *queries) WorkItemQueueStatistics(ctx context.Context) ([]db.QueueStatistic, error) {
	rows, err := q.q.WorkItemQueueStatistics(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.QueueStatistic, len(rows))
	for i, r := range rows {
		out[i] = db.QueueStatistic{Kind: r.Kind, Status: r.Status, Count: r.Count, OldestCreatedAt: r.OldestCreatedAt.UTC()}
	}
	return out, nil
}
