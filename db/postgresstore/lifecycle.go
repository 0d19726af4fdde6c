package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The statements of forgetting and erasing a scope and of the revision retention (db.ScopeLifecycleQueries).

func (q queries) ExperienceCandidateListByScopeAfter(ctx context.Context, p db.ExperienceCandidateListByScopeAfterParams) ([]db.ExperienceCandidate, error) {
	rs, err := q.q.ExperienceCandidateListByScopeAfter(ctx, postgresgen.ExperienceCandidateListByScopeAfterParams(p))
	return conv.Many(errs, rs, err, conv.ExperienceCandidateFromGen)
}

func (q queries) ExperienceCandidateWithdraw(ctx context.Context, p db.ExperienceCandidateWithdrawParams) (int64, error) {
	return errs.Rows(q.q.ExperienceCandidateWithdraw(ctx, postgresgen.ExperienceCandidateWithdrawParams{CandidateID: p.CandidateID, UpdatedAt: conv.TimeToGen[time.Time](p.UpdatedAt)}))
}

func (q queries) ExperienceCandidateDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.q.ExperienceCandidateDeleteBatch(ctx, postgresgen.ExperienceCandidateDeleteBatchParams(p)))
}

func (q queries) SourceDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.q.SourceDeleteBatch(ctx, postgresgen.SourceDeleteBatchParams(p)))
}

func (q queries) MemoryEntryDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.q.MemoryEntryDeleteBatch(ctx, postgresgen.MemoryEntryDeleteBatchParams(p)))
}

func (q queries) MemoryRevisionDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.q.MemoryRevisionDeleteBatch(ctx, postgresgen.MemoryRevisionDeleteBatchParams(p)))
}

func (q queries) SourceCursorDeleteByScope(ctx context.Context, scopeID string) (int64, error) {
	return errs.Rows(q.q.SourceCursorDeleteByScope(ctx, scopeID))
}

func (q queries) SourceJournalHeadDelete(ctx context.Context, scopeID string) (int64, error) {
	return errs.Rows(q.q.SourceJournalHeadDelete(ctx, scopeID))
}

func (q queries) WorkLaneDeleteIdle(ctx context.Context, laneKey string) (int64, error) {
	return errs.Rows(q.q.WorkLaneDeleteIdle(ctx, laneKey))
}

func (q queries) WorkItemListFinishedByScope(ctx context.Context, p db.WorkItemListFinishedByScopeParams) ([]string, error) {
	rs, err := q.q.WorkItemListFinishedByScope(ctx, postgresgen.WorkItemListFinishedByScopeParams(p))
	return conv.Many(errs, rs, err, func(s string) string { return s })
}

func (q queries) MemoryRevisionListExpired(ctx context.Context, p db.MemoryRevisionListExpiredParams) ([]db.MemoryRevisionRef, error) {
	rs, err := q.q.MemoryRevisionListExpired(ctx, postgresgen.MemoryRevisionListExpiredParams(p))
	return conv.Many(errs, rs, err, func(r postgresgen.MemoryRevisionListExpiredRow) db.MemoryRevisionRef { return db.MemoryRevisionRef(r) })
}

func (q queries) MemoryEntryDeleteRevisionBatch(ctx context.Context, p db.MemoryEntryDeleteRevisionBatchParams) (int64, error) {
	return errs.Rows(q.q.MemoryEntryDeleteRevisionBatch(ctx, postgresgen.MemoryEntryDeleteRevisionBatchParams(p)))
}

func (q queries) MemoryRevisionDelete(ctx context.Context, p db.MemoryRevisionDeleteParams) (int64, error) {
	return errs.Rows(q.q.MemoryRevisionDelete(ctx, postgresgen.MemoryRevisionDeleteParams(p)))
}

func (q queries) MemoryEntryListByScopeAfter(ctx context.Context, p db.MemoryEntryListByScopeAfterParams) ([]db.MemoryEntry, error) {
	rs, err := q.q.MemoryEntryListByScopeAfter(ctx, postgresgen.MemoryEntryListByScopeAfterParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEntryFromGen)
}

func (q queries) MemoryEntryDelete(ctx context.Context, p db.MemoryEntryDeleteParams) (int64, error) {
	return errs.Rows(q.q.MemoryEntryDelete(ctx, postgresgen.MemoryEntryDeleteParams(p)))
}

func (q queries) MemoryEntryUpdatePositions(ctx context.Context, p db.MemoryEntryUpdatePositionsParams) (int64, error) {
	return errs.Rows(q.q.MemoryEntryUpdatePositions(ctx, postgresgen.MemoryEntryUpdatePositionsParams(p)))
}

func (q queries) MemoryRevisionSubtractEntries(ctx context.Context, p db.MemoryRevisionSubtractEntriesParams) (int64, error) {
	return errs.Rows(q.q.MemoryRevisionSubtractEntries(ctx, postgresgen.MemoryRevisionSubtractEntriesParams(p)))
}
