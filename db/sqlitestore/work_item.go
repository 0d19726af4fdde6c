package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func itemFromGen(r sqlitegen.PcWorkItem) db.WorkItem {
	return db.WorkItem{
		WorkID:                 r.WorkID,
		LogicalKey:             r.LogicalKey,
		LaneKey:                r.LaneKey,
		LaneSequence:           r.LaneSequence,
		Kind:                   r.Kind,
		PayloadVersion:         int32(r.PayloadVersion),
		ScopeID:                r.ScopeID,
		Payload:                r.Payload,
		Status:                 r.Status,
		AvailableAt:            fromMicros(r.AvailableAt),
		LeaseOwner:             fromNullString(r.LeaseOwner),
		LeaseFence:             r.LeaseFence,
		LeaseExpiresAt:         fromNullMicros(r.LeaseExpiresAt),
		AttemptCount:           int32(r.AttemptCount),
		GenerationAttemptCount: int32(r.GenerationAttemptCount),
		RecoveryGeneration:     int32(r.RecoveryGeneration),
		MaxAttempts:            int32(r.MaxAttempts),
		CancelRequested:        r.CancelRequested,
		ResultCode:             fromNullString(r.ResultCode),
		ResultPayload:          r.ResultPayload,
		ErrorCategory:          fromNullString(r.ErrorCategory),
		ErrorCode:              fromNullString(r.ErrorCode),
		StateVersion:           r.StateVersion,
		CreatedAt:              fromMicros(r.CreatedAt),
		UpdatedAt:              fromMicros(r.UpdatedAt),
		CompletedAt:            fromNullMicros(r.CompletedAt),
	}
}

func (q *queries) WorkItemInsert(ctx context.Context, item db.WorkItem) error {
	return interpretError(q.w.WorkItemInsert(ctx, sqlitegen.WorkItemInsertParams{
		WorkID:                 item.WorkID,
		LogicalKey:             item.LogicalKey,
		LaneKey:                item.LaneKey,
		LaneSequence:           item.LaneSequence,
		Kind:                   item.Kind,
		PayloadVersion:         int64(item.PayloadVersion),
		ScopeID:                item.ScopeID,
		Payload:                item.Payload,
		Status:                 item.Status,
		AvailableAt:            toMicros(item.AvailableAt),
		LeaseOwner:             toNullString(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         toNullMicros(item.LeaseExpiresAt),
		AttemptCount:           int64(item.AttemptCount),
		GenerationAttemptCount: int64(item.GenerationAttemptCount),
		RecoveryGeneration:     int64(item.RecoveryGeneration),
		MaxAttempts:            int64(item.MaxAttempts),
		CancelRequested:        item.CancelRequested,
		ResultCode:             toNullString(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          toNullString(item.ErrorCategory),
		ErrorCode:              toNullString(item.ErrorCode),
		StateVersion:           item.StateVersion,
		CreatedAt:              toMicros(item.CreatedAt),
		UpdatedAt:              toMicros(item.UpdatedAt),
		CompletedAt:            toNullMicros(item.CompletedAt),
	}))
}

// WorkItemLock is a plain read (the BEGIN IMMEDIATE transaction already holds the database write lock) that also
// returns the database clock read by the same statement.
func (q *queries) WorkItemLock(ctx context.Context, workID string) (db.WorkItem, time.Time, error) {
	r, err := q.w.WorkItemLock(ctx, workID)
	if err != nil {
		return db.WorkItem{}, time.Time{}, interpretError(err)
	}
	return itemFromGen(r.PcWorkItem), fromMicros(r.DbNow), nil
}

func (q *queries) WorkItemGet(ctx context.Context, workID string) (db.WorkItem, error) {
	r, err := q.r.WorkItemGet(ctx, workID)
	if err != nil {
		return db.WorkItem{}, interpretError(err)
	}
	return itemFromGen(r), nil
}

func (q *queries) WorkItemUpdateState(ctx context.Context, item db.WorkItem, expectedVersion int64) (int64, error) {
	return affected(q.w.WorkItemUpdateState(ctx, sqlitegen.WorkItemUpdateStateParams{
		Status:                 item.Status,
		AvailableAt:            toMicros(item.AvailableAt),
		LeaseOwner:             toNullString(item.LeaseOwner),
		LeaseFence:             item.LeaseFence,
		LeaseExpiresAt:         toNullMicros(item.LeaseExpiresAt),
		AttemptCount:           int64(item.AttemptCount),
		GenerationAttemptCount: int64(item.GenerationAttemptCount),
		RecoveryGeneration:     int64(item.RecoveryGeneration),
		MaxAttempts:            int64(item.MaxAttempts),
		CancelRequested:        item.CancelRequested,
		ResultCode:             toNullString(item.ResultCode),
		ResultPayload:          item.ResultPayload,
		ErrorCategory:          toNullString(item.ErrorCategory),
		ErrorCode:              toNullString(item.ErrorCode),
		StateVersion:           item.StateVersion,
		UpdatedAt:              toMicros(item.UpdatedAt),
		CompletedAt:            toNullMicros(item.CompletedAt),
		WorkID:                 item.WorkID,
		ExpectedVersion:        expectedVersion,
	}))
}

func (q *queries) WorkItemExtendLease(ctx context.Context, p db.ExtendLeaseParams) (int64, error) {
	return affected(q.w.WorkItemExtendLease(ctx, sqlitegen.WorkItemExtendLeaseParams{
		LeaseExpiresAt: toNullMicros(p.LeaseExpiresAt),
		WorkID:         p.WorkID,
		LeaseOwner:     toNullString(p.LeaseOwner),
		LeaseFence:     p.LeaseFence,
		AttemptCount:   int64(p.AttemptCount),
	}))
}

func (q *queries) WorkItemMinLiveSequenceAfter(ctx context.Context, laneKey string, after int64) (int64, error) {
	seq, err := q.r.WorkItemMinLiveSequenceAfter(ctx, sqlitegen.WorkItemMinLiveSequenceAfterParams{
		LaneKey:       laneKey,
		AfterSequence: after,
	})
	if err != nil {
		return 0, interpretError(err)
	}
	return seq, nil
}

func (q *queries) WorkItemClaimCandidates(ctx context.Context, kinds []string, limit int32) ([]db.ClaimCandidate, error) {
	rows, err := q.r.WorkItemClaimCandidates(ctx, sqlitegen.WorkItemClaimCandidatesParams{
		Kinds: kinds, RetryKinds: kinds, Limit: int64(limit), Limit_2: int64(limit), Limit_3: int64(limit), Limit_4: int64(limit),
	})
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.ClaimCandidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, db.ClaimCandidate{
			WorkID:         r.WorkID,
			LaneKey:        r.LaneKey,
			LogicalKey:     r.LogicalKey,
			LaneSequence:   r.LaneSequence,
			Kind:           r.Kind,
			PayloadVersion: int32(r.PayloadVersion),
			Status:         r.Status,
		})
	}
	return out, nil
}

func (q *queries) WorkItemHeadKindVersions(ctx context.Context) ([]db.KindVersionCount, error) {
	rows, err := q.r.WorkItemHeadKindVersions(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.KindVersionCount, 0, len(rows))
	for _, r := range rows {
		out = append(out, db.KindVersionCount{Kind: r.Kind, PayloadVersion: int32(r.PayloadVersion), Count: r.Count})
	}
	return out, nil
}

// WorkItemList passes kinds as a JSON array (read with json_each): sqlc.slice cannot be combined with named
// parameters on SQLite.
func (q *queries) WorkItemList(ctx context.Context, p db.WorkItemListParams) ([]db.WorkItem, error) {
	kinds := p.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	kindsJSON, err := json.Marshal(kinds)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: encode kinds: %w", err)
	}
	arg := sqlitegen.WorkItemListParams{
		KindsJson: string(kindsJSON),
		ScopeID:   toNullString(p.ScopeID),
		Status:    toNullString(p.Status),
		MaxRows:   int64(p.Limit),
	}
	if !p.BeforeCreatedAt.IsZero() {
		arg.BeforeCreatedAt = sql.NullInt64{Int64: toMicros(p.BeforeCreatedAt), Valid: true}
		arg.BeforeWorkID = p.BeforeWorkID
	}
	rows, err := q.r.WorkItemList(ctx, arg)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.WorkItem, 0, len(rows))
	for _, r := range rows {
		out = append(out, itemFromGen(r))
	}
	return out, nil
}

func (q *queries) WorkItemPurgeCandidates(ctx context.Context, completedBefore time.Time, limit int32) ([]string, error) {
	ids, err := q.r.WorkItemPurgeCandidates(ctx, sqlitegen.WorkItemPurgeCandidatesParams{
		CompletedBefore: toNullMicros(completedBefore),
		MaxRows:         int64(limit),
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
	return affected(q.w.WorkItemDeleteTerminal(ctx, workIDs))
}

func (q *queries) WorkItemQueueStatistics(ctx context.Context) ([]db.QueueStatistic, error) {
	rows, err := q.r.WorkItemQueueStatistics(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	out := make([]db.QueueStatistic, 0, len(rows))
	for _, r := range rows {
		out = append(out, db.QueueStatistic{
			Kind:            r.Kind,
			Status:          r.Status,
			Count:           r.Count,
			OldestCreatedAt: fromMicros(r.OldestCreatedAt),
		})
	}
	return out, nil
}
