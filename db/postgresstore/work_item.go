package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func workItemFromRow(r postgresgen.PcWorkItem) db.WorkItem {
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
		AvailableAt:            fromTime(r.AvailableAt),
		LeaseOwner:             fromTextPtr(r.LeaseOwner),
		LeaseFence:             r.LeaseFence,
		LeaseExpiresAt:         fromTimePtr(r.LeaseExpiresAt),
		AttemptCount:           r.AttemptCount,
		GenerationAttemptCount: r.GenerationAttemptCount,
		RecoveryGeneration:     r.RecoveryGeneration,
		MaxAttempts:            r.MaxAttempts,
		CancelRequested:        r.CancelRequested,
		ResultCode:             fromTextPtr(r.ResultCode),
		ResultPayload:          r.ResultPayload,
		ErrorCategory:          fromTextPtr(r.ErrorCategory),
		ErrorCode:              fromTextPtr(r.ErrorCode),
		StateVersion:           r.StateVersion,
		CreatedAt:              fromTime(r.CreatedAt),
		UpdatedAt:              fromTime(r.UpdatedAt),
		CompletedAt:            fromTimePtr(r.CompletedAt),
	}
}

func workItemsFromRows(rs []postgresgen.PcWorkItem) []db.WorkItem {
	out := make([]db.WorkItem, 0, len(rs))
	for _, r := range rs {
		out = append(out, workItemFromRow(r))
	}
	return out
}

func (s queries) WorkItemInsert(ctx context.Context, item db.WorkItem) error {
	return interpretError(s.q.WorkItemInsert(ctx, postgresgen.WorkItemInsertParams{
		WorkID:                 item.WorkID,
		LogicalKey:             item.LogicalKey,
		LaneKey:                item.LaneKey,
		LaneSequence:           item.LaneSequence,
		Kind:                   item.Kind,
		PayloadVersion:         item.PayloadVersion,
		ScopeID:                item.ScopeID,
		Payload:                item.Payload,
		Status:                 item.Status,
		AvailableAt:            toTime(item.AvailableAt),
		LeaseOwner:             toTextPtr(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         toTimePtr(item.LeaseExpiresAt),
		AttemptCount:           item.AttemptCount,
		GenerationAttemptCount: item.GenerationAttemptCount,
		RecoveryGeneration:     item.RecoveryGeneration,
		MaxAttempts:            item.MaxAttempts,
		CancelRequested:        item.CancelRequested,
		ResultCode:             toTextPtr(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          toTextPtr(item.ErrorCategory),
		ErrorCode:              toTextPtr(item.ErrorCode),
		StateVersion:           item.StateVersion,
		CreatedAt:              toTime(item.CreatedAt),
		UpdatedAt:              toTime(item.UpdatedAt),
		CompletedAt:            toTimePtr(item.CompletedAt),
	}))
}

func (s queries) WorkItemLock(ctx context.Context, workID string) (db.WorkItem, time.Time, error) {
	r, err := s.q.WorkItemLock(ctx, workID)
	if err != nil {
		return db.WorkItem{}, time.Time{}, interpretError(err)
	}
	return workItemFromRow(r.PcWorkItem), fromTime(r.DbNow), nil
}

func (s queries) WorkItemGet(ctx context.Context, workID string) (db.WorkItem, error) {
	r, err := s.q.WorkItemGet(ctx, workID)
	if err != nil {
		return db.WorkItem{}, interpretError(err)
	}
	return workItemFromRow(r), nil
}

func (s queries) WorkItemUpdateState(ctx context.Context, item db.WorkItem, expectedVersion int64) (int64, error) {
	rows, err := s.q.WorkItemUpdateState(ctx, postgresgen.WorkItemUpdateStateParams{
		Status:                 item.Status,
		AvailableAt:            toTime(item.AvailableAt),
		LeaseOwner:             toTextPtr(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         toTimePtr(item.LeaseExpiresAt),
		AttemptCount:           item.AttemptCount,
		GenerationAttemptCount: item.GenerationAttemptCount,
		RecoveryGeneration:     item.RecoveryGeneration,
		MaxAttempts:            item.MaxAttempts,
		CancelRequested:        item.CancelRequested,
		ResultCode:             toTextPtr(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          toTextPtr(item.ErrorCategory),
		ErrorCode:              toTextPtr(item.ErrorCode),
		StateVersion:           item.StateVersion,
		UpdatedAt:              toTime(item.UpdatedAt),
		CompletedAt:            toTimePtr(item.CompletedAt),
		WorkID:                 item.WorkID,
		ExpectedVersion:        expectedVersion,
	})
	return rows, interpretError(err)
}

func (s queries) WorkItemExtendLease(ctx context.Context, p db.ExtendLeaseParams) (int64, error) {
	rows, err := s.q.WorkItemExtendLease(ctx, postgresgen.WorkItemExtendLeaseParams{
		LeaseExpiresAt: toTime(p.LeaseExpiresAt),
		WorkID:         p.WorkID,
		LeaseOwner:     p.LeaseOwner,
		LeaseFence:     p.LeaseFence,
		AttemptCount:   p.AttemptCount,
	})
	return rows, interpretError(err)
}

func (s queries) WorkItemMinLiveSequenceAfter(ctx context.Context, laneKey string, after int64) (int64, error) {
	seq, err := s.q.WorkItemMinLiveSequenceAfter(ctx, postgresgen.WorkItemMinLiveSequenceAfterParams{
		LaneKey:       laneKey,
		AfterSequence: after,
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return seq, nil
}

func (s queries) WorkItemClaimCandidates(ctx context.Context, kinds []string, limit int32) ([]db.ClaimCandidate, error) {
	rs, err := s.q.WorkItemClaimCandidates(ctx, postgresgen.WorkItemClaimCandidatesParams{
		Kinds:   nonNilStrings(kinds),
		MaxRows: limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ClaimCandidate, 0, len(rs))
	for _, r := range rs {
		out = append(out, db.ClaimCandidate{
			WorkID:         r.WorkID,
			LaneKey:        r.LaneKey,
			LogicalKey:     r.LogicalKey,
			LaneSequence:   r.LaneSequence,
			Kind:           r.Kind,
			PayloadVersion: r.PayloadVersion,
			Status:         r.Status,
		})
	}
	return out, nil
}

func (s queries) WorkItemHeadKindVersions(ctx context.Context) ([]db.KindVersionCount, error) {
	rs, err := s.q.WorkItemHeadKindVersions(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.KindVersionCount, 0, len(rs))
	for _, r := range rs {
		out = append(out, db.KindVersionCount{Kind: r.Kind, PayloadVersion: r.PayloadVersion, Count: r.ItemCount})
	}
	return out, nil
}

func (s queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	arg := postgresgen.WorkItemListParams{
		Kinds:   nonNilStrings(p.Kinds),
		ScopeID: toTextPtr(p.ScopeID),
		Status:  toTextPtr(p.Status),
		MaxRows: p.Limit,
	}
	if !p.BeforeCreatedAt.IsZero() {
		arg.BeforeCreatedAt = toTimePtr(p.BeforeCreatedAt)
		arg.BeforeWorkID = &p.BeforeWorkID
	}
	rs, err := s.q.WorkItemList(ctx, arg)
	if err != nil {
		return nil, interpretError(err)
	}
	return workItemsFromRows(rs), nil
}

func (s queries) WorkItemPurgeCandidates(ctx context.Context, completedBefore time.Time, limit int32) ([]string, error) {
	ids, err := s.q.WorkItemPurgeCandidates(ctx, postgresgen.WorkItemPurgeCandidatesParams{
		CompletedBefore: toTime(completedBefore),
		MaxRows:         limit,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

func (s queries) WorkItemDeleteTerminal(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	rows, err := s.q.WorkItemDeleteTerminal(ctx, workIDs)
	return rows, interpretError(err)
}

func (s queries) WorkItemQueueStatistics(ctx context.Context) ([]db.QueueStatistic, error) {
	rs, err := s.q.WorkItemQueueStatistics(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.QueueStatistic, 0, len(rs))
	for _, r := range rs {
		out = append(out, db.QueueStatistic{
			Kind:            r.Kind,
			Status:          r.Status,
			Count:           r.ItemCount,
			OldestCreatedAt: fromTime(r.OldestCreatedAt),
		})
	}
	return out, nil
}

// nonNilStrings sends an empty array rather than NULL for a nil slice (both match nothing in = ANY).
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
