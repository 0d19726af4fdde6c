package db

import (
	"time"
)

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
