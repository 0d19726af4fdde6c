package db

import (
	"context"
	"time"
)

// LifecycleQueries are the statements of the data lifecycle (docs/protocol.md#forgetting-and-erasing): forgetting
// a Source, erasing a scope, retention.
type LifecycleQueries interface {
	// SourceErase forgets one Source: content '' and metadata {} with erased_at set on the database clock, once
	// (an erased Source matches no row). Returns rows matched.
	SourceErase(ctx context.Context, p SourceEraseParams) (int64, error)
	// SourceEraseByPositions forgets the given Sources of one scope (retention), those not erased yet. Returns
	// rows matched.
	SourceEraseByPositions(ctx context.Context, p SourceEraseByPositionsParams) (int64, error)
	// SourceListErasable lists up to p.Limit Sources not erased, created before p.CreatedBefore and consumed by
	// every cursor of their scope, oldest first (retention candidates).
	SourceListErasable(ctx context.Context, p SourceListErasableParams) ([]SourcePosition, error)
}

// SourceEraseByPositionsParams addresses Sources of one scope.
type SourceEraseByPositionsParams struct {
	ScopeID   string
	Positions []int64
}

// SourceListErasableParams bounds SourceListErasable.
type SourceListErasableParams struct {
	CreatedBefore time.Time
	Limit         int32
}

// SourcePosition names one Source by its journal position.
type SourcePosition struct {
	ScopeID         string
	JournalPosition int64
}

// SourceEraseParams forgets one Source.
type SourceEraseParams struct {
	ScopeID  string
	SourceID string
}

// ScopeLifecycleQueries are the statements that forget and erase a scope's data (docs/protocol.md#erasing-a-scope)
// and the revision retention.
type ScopeLifecycleQueries interface {
	// ExperienceCandidateListByScopeAfter pages a scope's candidates by candidate_id (> p.AfterCandidateID).
	ExperienceCandidateListByScopeAfter(ctx context.Context, p ExperienceCandidateListByScopeAfterParams) ([]ExperienceCandidate, error)
	// ExperienceCandidateWithdraw sets a candidate withdrawn (state_version + 1) unless it already is. Returns rows
	// matched.
	ExperienceCandidateWithdraw(ctx context.Context, p ExperienceCandidateWithdrawParams) (int64, error)
	// The erase's batches: each deletes at most p.Limit rows of p.ScopeID. Return rows deleted.
	ExperienceCandidateDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	SourceDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	MemoryEntryDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	MemoryRevisionDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	SourceCursorDeleteByScope(ctx context.Context, scopeID string) (int64, error)
	// SourceJournalHeadDelete deletes a scope's journal head (the caller holds its lock).
	SourceJournalHeadDelete(ctx context.Context, scopeID string) (int64, error)
	// WorkLaneDeleteIdle deletes a lane that has no head (the caller holds its lock); 0 when it is not idle.
	WorkLaneDeleteIdle(ctx context.Context, laneKey string) (int64, error)
	// WorkItemListFinishedByScope lists up to p.Limit succeeded or cancelled items of a scope, except those of
	// p.ExceptKind.
	WorkItemListFinishedByScope(ctx context.Context, p WorkItemListFinishedByScopeParams) ([]string, error)

	// MemoryRevisionListExpired lists up to p.Limit revisions older than the newest p.Keep of their scope, by
	// scope and revision.
	MemoryRevisionListExpired(ctx context.Context, p MemoryRevisionListExpiredParams) ([]MemoryRevisionRef, error)
	// MemoryEntryDeleteRevisionBatch deletes at most p.Limit entries of one revision. Returns rows deleted.
	MemoryEntryDeleteRevisionBatch(ctx context.Context, p MemoryEntryDeleteRevisionBatchParams) (int64, error)
	// MemoryRevisionDelete deletes one revision row. Returns rows deleted.
	MemoryRevisionDelete(ctx context.Context, p MemoryRevisionDeleteParams) (int64, error)

	// The redaction's scrub of a forgotten Source from every revision: a keyset page of a scope's entries by
	// (revision, entry_no) after (p.AfterRevision, p.AfterEntryNo), one entry deleted or given new positions, and
	// a revision's entry_count lowered by the entries deleted from it. Writes return rows matched.
	MemoryEntryListByScopeAfter(ctx context.Context, p MemoryEntryListByScopeAfterParams) ([]MemoryEntry, error)
	MemoryEntryDelete(ctx context.Context, p MemoryEntryDeleteParams) (int64, error)
	MemoryEntryUpdatePositions(ctx context.Context, p MemoryEntryUpdatePositionsParams) (int64, error)
	MemoryRevisionSubtractEntries(ctx context.Context, p MemoryRevisionSubtractEntriesParams) (int64, error)
}

// MemoryEntryListByScopeAfterParams pages MemoryEntryListByScopeAfter (start at revision 0, entry 0).
type MemoryEntryListByScopeAfterParams struct {
	ScopeID       string
	AfterRevision int64
	AfterEntryNo  int32
	Limit         int32
}

// MemoryEntryDeleteParams names one entry.
type MemoryEntryDeleteParams struct {
	ScopeID  string
	Revision int64
	EntryNo  int32
}

// MemoryEntryUpdatePositionsParams gives one entry new source positions (a JSON array).
type MemoryEntryUpdatePositionsParams struct {
	SourcePositions []byte
	ScopeID         string
	Revision        int64
	EntryNo         int32
}

// MemoryRevisionSubtractEntriesParams lowers one revision's entry_count by Removed.
type MemoryRevisionSubtractEntriesParams struct {
	Removed  int32
	ScopeID  string
	Revision int64
}

// ExperienceCandidateListByScopeAfterParams pages ExperienceCandidateListByScopeAfter; start with
// AfterCandidateID = NilUUID.
type ExperienceCandidateListByScopeAfterParams struct {
	ScopeID          string
	AfterCandidateID string
	Limit            int32
}

// NilUUID sorts before every candidate and work id.
const NilUUID = "00000000-0000-0000-0000-000000000000"

// ExperienceCandidateWithdrawParams withdraws one candidate.
type ExperienceCandidateWithdrawParams struct {
	CandidateID string
	UpdatedAt   time.Time
}

// ScopeBatchParams bounds one batch of a scope's rows.
type ScopeBatchParams struct {
	ScopeID string
	Limit   int32
}

// WorkItemListFinishedByScopeParams bounds WorkItemListFinishedByScope.
type WorkItemListFinishedByScopeParams struct {
	ScopeID    string
	ExceptKind string
	Limit      int32
}

// MemoryRevisionListExpiredParams bounds MemoryRevisionListExpired.
type MemoryRevisionListExpiredParams struct {
	Keep  int64
	Limit int32
}

// MemoryRevisionRef names one Memory revision.
type MemoryRevisionRef struct {
	ScopeID  string
	Revision int64
}

// MemoryEntryDeleteRevisionBatchParams bounds one batch of a revision's entries.
type MemoryEntryDeleteRevisionBatchParams struct {
	ScopeID  string
	Revision int64
	Limit    int32
}

// MemoryRevisionDeleteParams names one revision.
type MemoryRevisionDeleteParams struct {
	ScopeID  string
	Revision int64
}
