package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// The statements of forgetting and erasing a scope and of the revision retention (db.ScopeLifecycleQueries).

func (q *queries) ExperienceCandidateListByScopeAfter(ctx context.Context, p db.ExperienceCandidateListByScopeAfterParams) ([]db.ExperienceCandidate, error) {
	rs, err := q.r.ExperienceCandidateListByScopeAfter(ctx, sqlitegen.ExperienceCandidateListByScopeAfterParams(p))
	return conv.Many(errs, rs, err, conv.ExperienceCandidateFromGen)
}

func (q *queries) ExperienceCandidateWithdraw(ctx context.Context, p db.ExperienceCandidateWithdrawParams) (int64, error) {
	return errs.Rows(q.w.ExperienceCandidateWithdraw(ctx, sqlitegen.ExperienceCandidateWithdrawParams{CandidateID: p.CandidateID, UpdatedAt: conv.TimeToGen[int64](p.UpdatedAt)}))
}

func (q *queries) ExperienceCandidateDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.w.ExperienceCandidateDeleteBatch(ctx, sqlitegen.ExperienceCandidateDeleteBatchParams(p)))
}

func (q *queries) SourceDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.w.SourceDeleteBatch(ctx, sqlitegen.SourceDeleteBatchParams(p)))
}

func (q *queries) MemoryEntryDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.w.MemoryEntryDeleteBatch(ctx, sqlitegen.MemoryEntryDeleteBatchParams(p)))
}

func (q *queries) MemoryRevisionDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.w.MemoryRevisionDeleteBatch(ctx, sqlitegen.MemoryRevisionDeleteBatchParams(p)))
}

func (q *queries) SourceCursorDeleteByScope(ctx context.Context, scopeID string) (int64, error) {
	return errs.Rows(q.w.SourceCursorDeleteByScope(ctx, scopeID))
}

func (q *queries) SourceJournalHeadDelete(ctx context.Context, scopeID string) (int64, error) {
	return errs.Rows(q.w.SourceJournalHeadDelete(ctx, scopeID))
}

func (q *queries) WorkLaneDeleteIdle(ctx context.Context, laneKey string) (int64, error) {
	return errs.Rows(q.w.WorkLaneDeleteIdle(ctx, laneKey))
}

func (q *queries) WorkItemListFinishedByScope(ctx context.Context, p db.WorkItemListFinishedByScopeParams) ([]string, error) {
	rs, err := q.r.WorkItemListFinishedByScope(ctx, sqlitegen.WorkItemListFinishedByScopeParams(p))
	return conv.Many(errs, rs, err, func(s string) string { return s })
}

func (q *queries) MemoryRevisionListExpired(ctx context.Context, p db.MemoryRevisionListExpiredParams) ([]db.MemoryRevisionRef, error) {
	rs, err := q.r.MemoryRevisionListExpired(ctx, sqlitegen.MemoryRevisionListExpiredParams(p))
	return conv.Many(errs, rs, err, func(r sqlitegen.MemoryRevisionListExpiredRow) db.MemoryRevisionRef { return db.MemoryRevisionRef(r) })
}

func (q *queries) MemoryEntryDeleteRevisionBatch(ctx context.Context, p db.MemoryEntryDeleteRevisionBatchParams) (int64, error) {
	return errs.Rows(q.w.MemoryEntryDeleteRevisionBatch(ctx, sqlitegen.MemoryEntryDeleteRevisionBatchParams(p)))
}

func (q *queries) MemoryRevisionDelete(ctx context.Context, p db.MemoryRevisionDeleteParams) (int64, error) {
	return errs.Rows(q.w.MemoryRevisionDelete(ctx, sqlitegen.MemoryRevisionDeleteParams(p)))
}

func (q *queries) MemoryEntryListByScopeAfter(ctx context.Context, p db.MemoryEntryListByScopeAfterParams) ([]db.MemoryEntry, error) {
	rs, err := q.r.MemoryEntryListByScopeAfter(ctx, sqlitegen.MemoryEntryListByScopeAfterParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEntryFromGen)
}

func (q *queries) MemoryEntryDelete(ctx context.Context, p db.MemoryEntryDeleteParams) (int64, error) {
	return errs.Rows(q.w.MemoryEntryDelete(ctx, sqlitegen.MemoryEntryDeleteParams(p)))
}

func (q *queries) MemoryEntryUpdatePositions(ctx context.Context, p db.MemoryEntryUpdatePositionsParams) (int64, error) {
	return errs.Rows(q.w.MemoryEntryUpdatePositions(ctx, sqlitegen.MemoryEntryUpdatePositionsParams(p)))
}

func (q *queries) MemoryRevisionSubtractEntries(ctx context.Context, p db.MemoryRevisionSubtractEntriesParams) (int64, error) {
	return errs.Rows(q.w.MemoryRevisionSubtractEntries(ctx, sqlitegen.MemoryRevisionSubtractEntriesParams(p)))
}
