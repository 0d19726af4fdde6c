package db

import (
	"time"
)

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

// SourceCountErasedParams bounds the count of one scope's tombstones by a journal position.
type SourceCountErasedParams struct {
	ScopeID         string
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

// ExperienceCandidateListByStatusAfterParams pages ExperienceCandidateListByStatusAfter; start with the zero
// AfterCreatedAt and AfterCandidateID = NilUUID, then pass the last row's created_at and candidate_id.
type ExperienceCandidateListByStatusAfterParams struct {
	ScopeID          string
	Status           string
	AfterCreatedAt   time.Time
	AfterCandidateID string
	Limit            int32
}

// ExperienceCandidateUpdateStatusParams is a compare-and-set of a pending candidate's status.
type ExperienceCandidateUpdateStatusParams struct {
	CandidateID     string
	ExpectedVersion int64
	Status          string
	UpdatedAt       time.Time
}
