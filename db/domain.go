package db

import (
	"context"
	"time"
)

// DomainQueries are the statements of the domain (Sources, cursors, Memory, Experience). Every adapter implements
// them on the same types that implement Queries.
type DomainQueries interface {
	// Sources and the per-scope journal (domain).
	SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error)
	SourceJournalHeadLock(ctx context.Context, scopeID string) (SourceJournalHead, error)
	SourceJournalHeadUpdate(ctx context.Context, h SourceJournalHead) error
	SourceJournalHeadGet(ctx context.Context, scopeID string) (SourceJournalHead, error)
	// SourceJournalHeadListPending is the discoverers' keyset over scopes: heads with scope_id > afterScopeID whose
	// position is beyond the named cursor (a missing cursor counts as 0), by scope_id.
	SourceJournalHeadListPending(ctx context.Context, cursorName, afterScopeID string, limit int32) ([]SourceJournalHead, error)
	SourceInsert(ctx context.Context, s Source) error
	SourceGetByID(ctx context.Context, scopeID, sourceID string) (Source, error)
	// SourceListRange returns the Sources with after < journal_position <= through, in journal order.
	SourceListRange(ctx context.Context, scopeID string, after, through int64) ([]Source, error)
	// SourceListAfter returns up to limit Sources with journal_position > after, in journal order.
	SourceListAfter(ctx context.Context, scopeID string, after int64, limit int32) ([]Source, error)

	// Source cursors (domain cursor: the last lock in the global order).
	SourceCursorGet(ctx context.Context, scopeID, cursorName string) (SourceCursor, error)
	SourceCursorLock(ctx context.Context, scopeID, cursorName string) (SourceCursor, error)
	SourceCursorInsert(ctx context.Context, c SourceCursor) error
	// SourceCursorAdvance compare-and-sets (position, generation) from (fromPosition, fromGeneration) to
	// (c.Position, c.Generation). Returns rows changed.
	SourceCursorAdvance(ctx context.Context, c SourceCursor, fromPosition, fromGeneration int64) (int64, error)

	// Memory entries.
	MemoryEntryInsert(ctx context.Context, e MemoryEntry) error
	MemoryEntryListByRevision(ctx context.Context, scopeID string, revision int64) ([]MemoryEntry, error)
	// MemoryEntrySearch returns entries of one revision whose content contains query (case-insensitive), by
	// entry_no; the adapter escapes LIKE wildcards.
	MemoryEntrySearch(ctx context.Context, scopeID string, revision int64, query string, limit int32) ([]MemoryEntry, error)

	// Experience candidates.
	ExperienceCandidateInsert(ctx context.Context, c ExperienceCandidate) error
	ExperienceCandidateGet(ctx context.Context, candidateID string) (ExperienceCandidate, error)
	// ExperienceCandidateList lists a scope's candidates, newest first; Status "" means any.
	ExperienceCandidateList(ctx context.Context, scopeID, status string, limit int32) ([]ExperienceCandidate, error)
	// ExperienceCandidateUpdateStatus sets status, state_version = expected+1 and updated_at where the version
	// equals expectedVersion and the candidate is pending. Returns rows changed.
	ExperienceCandidateUpdateStatus(ctx context.Context, candidateID string, expectedVersion int64, status string, at time.Time) (int64, error)
}
