package db

import (
	"context"
	"time"
)

// DomainQueries are the statements of the domain (Sources, cursors, Memory, Experience). Every adapter implements
// them on the same types that implement Queries. A method with more than one argument besides ctx takes a
// <Method>Params struct.
type DomainQueries interface {
	// Sources and the per-scope journal (domain).
	SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error)
	SourceJournalHeadLock(ctx context.Context, scopeID string) (SourceJournalHead, error)
	SourceJournalHeadUpdate(ctx context.Context, h SourceJournalHead) error
	SourceJournalHeadGet(ctx context.Context, scopeID string) (SourceJournalHead, error)
	// SourceJournalHeadListPending is the discoverers' keyset over scopes: heads with scope_id > p.AfterScopeID
	// whose position is beyond the cursor p.CursorName (a missing cursor counts as 0), by scope_id.
	SourceJournalHeadListPending(ctx context.Context, p SourceJournalHeadListPendingParams) ([]SourceJournalHead, error)
	SourceInsert(ctx context.Context, s Source) error
	SourceGetByID(ctx context.Context, p SourceGetByIDParams) (Source, error)
	// SourceListRange returns the Sources with AfterPosition < journal_position <= ThroughPosition, in journal
	// order.
	SourceListRange(ctx context.Context, p SourceListRangeParams) ([]Source, error)
	// SourceListAfter returns up to p.Limit Sources with journal_position > p.AfterPosition, in journal order.
	SourceListAfter(ctx context.Context, p SourceListAfterParams) ([]Source, error)

	// Source cursors (domain cursor: the last lock in the global order).
	SourceCursorGet(ctx context.Context, p SourceCursorGetParams) (SourceCursor, error)
	SourceCursorLock(ctx context.Context, p SourceCursorLockParams) (SourceCursor, error)
	SourceCursorInsert(ctx context.Context, c SourceCursor) error
	// SourceCursorAdvance compare-and-sets (position, generation) from (p.FromPosition, p.FromGeneration) to
	// (p.Cursor.Position, p.Cursor.Generation). Returns rows changed.
	SourceCursorAdvance(ctx context.Context, p SourceCursorAdvanceParams) (int64, error)

	// Memory entries.
	MemoryEntryInsert(ctx context.Context, e MemoryEntry) error
	// MemoryEntryInsertMany is MemoryEntryInsert of every entry, in order (a composite step: PostgreSQL sends them
	// in pipelined batches inside a transaction; docs/protocol.md#round-trips). The first failure is returned.
	MemoryEntryInsertMany(ctx context.Context, es []MemoryEntry) error
	MemoryEntryListByRevision(ctx context.Context, p MemoryEntryListByRevisionParams) ([]MemoryEntry, error)

	// Experience candidates.
	ExperienceCandidateInsert(ctx context.Context, c ExperienceCandidate) error
	ExperienceCandidateGet(ctx context.Context, candidateID string) (ExperienceCandidate, error)
	// ExperienceCandidateList lists a scope's candidates, newest first; Status "" means any.
	ExperienceCandidateList(ctx context.Context, p ExperienceCandidateListParams) ([]ExperienceCandidate, error)
	// ExperienceCandidateUpdateStatus sets status, state_version = expected+1 and updated_at where the version
	// equals p.ExpectedVersion and the candidate is pending. Returns rows changed.
	ExperienceCandidateUpdateStatus(ctx context.Context, p ExperienceCandidateUpdateStatusParams) (int64, error)
}

// SourceJournalHeadListPendingParams pages SourceJournalHeadListPending.
type SourceJournalHeadListPendingParams struct {
	CursorName   string
	AfterScopeID string
	Limit        int32
}

// SourceGetByIDParams addresses one Source by its capture id.
type SourceGetByIDParams struct {
	ScopeID  string
	SourceID string
}

// SourceListRangeParams is the window (AfterPosition, ThroughPosition] of one scope's journal.
type SourceListRangeParams struct {
	ScopeID         string
	AfterPosition   int64
	ThroughPosition int64
}

// SourceListAfterParams pages one scope's journal.
type SourceListAfterParams struct {
	ScopeID       string
	AfterPosition int64
	Limit         int32
}

// SourceCursorGetParams addresses one cursor.
type SourceCursorGetParams struct {
	ScopeID    string
	CursorName string
}

// SourceCursorLockParams addresses one cursor.
type SourceCursorLockParams struct {
	ScopeID    string
	CursorName string
}

// SourceCursorAdvanceParams moves Cursor (its scope and name address the row) from (FromPosition,
// FromGeneration) to (Cursor.Position, Cursor.Generation).
type SourceCursorAdvanceParams struct {
	Cursor         SourceCursor
	FromPosition   int64
	FromGeneration int64
}

// MemoryEntryListByRevisionParams addresses one Memory revision.
type MemoryEntryListByRevisionParams struct {
	ScopeID  string
	Revision int64
}

// ExperienceCandidateListParams filters and bounds ExperienceCandidateList.
type ExperienceCandidateListParams struct {
	ScopeID string
	Status  string // "" = any
	Limit   int32
}

// ExperienceCandidateUpdateStatusParams is a compare-and-set of a pending candidate's status.
type ExperienceCandidateUpdateStatusParams struct {
	CandidateID     string
	ExpectedVersion int64
	Status          string
	UpdatedAt       time.Time
}
