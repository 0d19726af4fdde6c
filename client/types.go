package client

import (
	"encoding/json"
	"time"
)

// Operation statuses (OperationRecord.Status).
const (
	StatusQueued     = "queued"
	StatusRunning    = "running"
	StatusRetryWait  = "retry_wait"
	StatusCancelling = "cancelling"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
)

// Public operation kinds (OperationRecord.Kind).
const (
	KindMemoryFlush          = "memory_flush"
	KindExperienceIncubation = "experience_incubation"
	KindMemoryRedact         = "memory_redact"
	KindMemoryEmbed          = "memory_embed"
	KindScopeErase           = "scope_erase"
	KindScopeExport          = "scope_export"
	KindScopeImport          = "scope_import"
)

// Search modes (SearchParams.Mode, ContextParams.Mode; Memory.Mode and Context.Mode report the one that ran).
const (
	ModeFTS      = "fts"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// Flush answer statuses (FlushResult.Status).
const (
	FlushIdle      = "idle"
	FlushProcessed = "processed"
)

// CaptureSourceRequest is the body of POST /v1/sources. SourceID and SourceType are optional (the server assigns
// a random id and "content"); Metadata, when set, must be a JSON object.
type CaptureSourceRequest struct {
	ScopeID    string          `json:"scope_id"`
	SourceID   string          `json:"source_id,omitempty"`
	SourceType string          `json:"source_type,omitempty"`
	Content    string          `json:"content"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// CaptureSourceResult says where a Source sits in its scope's journal; Created is false for a repeated
// (scope_id, source_id), which returns the first capture's position.
type CaptureSourceResult struct {
	ScopeID         string `json:"scope_id"`
	SourceID        string `json:"source_id"`
	JournalPosition int64  `json:"journal_position"`
	Created         bool   `json:"created"`
}

// ForgetSourceResult is the answer of ForgetSource. OperationID is the memory_redact operation that removes the
// Source from Memory (follow it with WaitOperation), nil when nothing in Memory referenced it.
type ForgetSourceResult struct {
	ScopeID         string  `json:"scope_id"`
	SourceID        string  `json:"source_id"`
	JournalPosition int64   `json:"journal_position"`
	OperationID     *string `json:"operation_id"`
	Status          string  `json:"status"`
}

// EraseScopeResult is the answer of EraseScope: the scope_erase operation.
type EraseScopeResult struct {
	ScopeID     string `json:"scope_id"`
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
}

// ListSourcesParams selects a page of a scope's journal: positions after After, at most Limit (0 = server default).
type ListSourcesParams struct {
	ScopeID string
	After   int64
	Limit   int
}

// SourceRecord is one captured Source.
type SourceRecord struct {
	ScopeID         string          `json:"scope_id"`
	SourceID        string          `json:"source_id"`
	JournalPosition int64           `json:"journal_position"`
	SourceType      string          `json:"source_type"`
	Content         string          `json:"content"`
	Metadata        json.RawMessage `json:"metadata"`
	CreatedAt       time.Time       `json:"created_at"`
}

// SourceList is a page of a journal in journal order; NextAfter is nil on the last page.
type SourceList struct {
	Items     []SourceRecord `json:"items"`
	NextAfter *int64         `json:"next_after"`
}

// MemoryRevision names a committed Memory revision.
type MemoryRevision struct {
	Revision int64 `json:"revision"`
}

// FlushResult is the outcome of a memory flush: "idle" (nothing pending) or "processed". OperationID is nil when
// nothing had to be done.
type FlushResult struct {
	Status               string          `json:"status"`
	PreviousCursor       int64           `json:"previous_cursor"`
	CurrentCursor        int64           `json:"current_cursor"`
	HighWatermark        int64           `json:"high_watermark"`
	ProcessedSourceCount int64           `json:"processed_source_count"`
	Memory               *MemoryRevision `json:"memory"`
	OperationID          *string         `json:"operation_id"`
}

// IncubateResult is the outcome of an experience incubation: "idle" (nothing pending) or "processed", with the
// number of candidates the window proposed. OperationID is nil when nothing had to be done.
type IncubateResult struct {
	Status               string  `json:"status"`
	PreviousCursor       int64   `json:"previous_cursor"`
	CurrentCursor        int64   `json:"current_cursor"`
	HighWatermark        int64   `json:"high_watermark"`
	ProcessedSourceCount int64   `json:"processed_source_count"`
	CandidateCount       int64   `json:"candidate_count"`
	OperationID          *string `json:"operation_id"`
}

// FlushAccepted is the 202 answer of a flush that is still queued or running.
type FlushAccepted struct {
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
	StatusURL   string `json:"status_url"`
}

// MemoryFlushResult is OperationRecord.Result of a succeeded memory_flush.
type MemoryFlushResult struct {
	Type                 string          `json:"type"`
	PreviousCursor       int64           `json:"previous_cursor"`
	CurrentCursor        int64           `json:"current_cursor"`
	HighWatermark        int64           `json:"high_watermark"`
	ProcessedSourceCount int64           `json:"processed_source_count"`
	Memory               *MemoryRevision `json:"memory"`
}

// ExperienceIncubationResult is OperationRecord.Result of a succeeded experience_incubation.
type ExperienceIncubationResult struct {
	Type                 string `json:"type"`
	PreviousCursor       int64  `json:"previous_cursor"`
	CurrentCursor        int64  `json:"current_cursor"`
	HighWatermark        int64  `json:"high_watermark"`
	ProcessedSourceCount int64  `json:"processed_source_count"`
	CandidateCount       int64  `json:"candidate_count"`
}

// Memory is a scope's current Memory revision (GET /v1/memory) or its entries matching a query
// (GET /v1/memory/search). Revision and CreatedAt are nil while nothing was committed; Evicted is nil then too, and
// for a revision an older server build wrote.
type Memory struct {
	ScopeID   string        `json:"scope_id"`
	Revision  *int64        `json:"revision"`
	CreatedAt *time.Time    `json:"created_at"`
	Evicted   *Eviction     `json:"evicted"`
	Entries   []MemoryEntry `json:"entries"`
	// Mode is the ranking that ran (search only): ModeFTS, ModeSemantic or ModeHybrid.
	Mode string `json:"mode,omitempty"`
	// Degraded is true when a vector mode fell back to full text because the query could not be embedded in time
	// (search only).
	Degraded bool `json:"degraded,omitempty"`
}

// Eviction is what the 500-entry cap dropped when a revision was written: Count entries, EntryIDs their ids (least
// recently confirmed first).
type Eviction struct {
	Count    int     `json:"count"`
	EntryIDs []int64 `json:"entry_ids"`
}

// MemoryEntry is one fact with the journal positions it came from. EntryNo is its place in the revision; EntryID
// its stable id in the scope, kept while the entry is carried over, restated or superseded (nil for an entry an
// older server build wrote).
type MemoryEntry struct {
	EntryNo         int32   `json:"entry_no"`
	EntryID         *int64  `json:"entry_id"`
	Content         string  `json:"content"`
	SourcePositions []int64 `json:"source_positions"`
	// Score is the relevance to the query in the search's mode (SearchMemory only; higher is better).
	Score *float64 `json:"score,omitempty"`
	// Scores are the entry's scores by method (SearchMemory only).
	Scores *MethodScores `json:"scores,omitempty"`
}

// MethodScores are an entry's scores by ranking method; nil where that method did not match it or did not run.
type MethodScores struct {
	FTS      *float64 `json:"fts,omitempty"`      // BM25 relevance to the query's terms
	Semantic *float64 `json:"semantic,omitempty"` // cosine similarity of the entry's vector and the query's
}

// MemoryRevisionRecord is one Memory revision: the journal positions (WindowAfter, WindowThrough] it consumed, the
// operation that wrote it and what the entry cap evicted (nil for a revision an older server build wrote).
type MemoryRevisionRecord struct {
	Revision      int64     `json:"revision"`
	CreatedAt     time.Time `json:"created_at"`
	EntryCount    int32     `json:"entry_count"`
	WindowAfter   int64     `json:"window_after"`
	WindowThrough int64     `json:"window_through"`
	OperationID   string    `json:"operation_id"`
	Evicted       *Eviction `json:"evicted"`
}

// MemoryRevisionList is a page of revisions, newest first; NextCursor is nil on the last page.
type MemoryRevisionList struct {
	Items      []MemoryRevisionRecord `json:"items"`
	NextCursor *string                `json:"next_cursor"`
}

// MemoryDiff is what changed between two revisions.
type MemoryDiff struct {
	ScopeID string            `json:"scope_id"`
	From    int64             `json:"from"`
	To      int64             `json:"to"`
	Added   []MemoryEntry     `json:"added"`
	Removed []MemoryEntry     `json:"removed"`
	Changed []MemoryEntryPair `json:"changed"`
}

// MemoryEntryPair is one fact in both revisions (the same EntryID when both have ids) whose text or source
// positions differ.
type MemoryEntryPair struct {
	From MemoryEntry `json:"from"`
	To   MemoryEntry `json:"to"`
}

// Context is an assembled context (GET /v1/context); UsedTokens never exceeds MaxTokens.
type Context struct {
	ScopeID    string        `json:"scope_id"`
	Revision   *int64        `json:"revision"`
	MaxTokens  int           `json:"max_tokens"`
	UsedTokens int           `json:"used_tokens"`
	Omitted    int           `json:"omitted"`
	Items      []ContextItem `json:"items"`
	Mode       string        `json:"mode"`     // the ranking of the Memory entries
	Degraded   bool          `json:"degraded"` // a vector mode fell back to full text
}

// ContextItem is a Memory entry (Type "memory", EntryNo, EntryID unless an older server build wrote it) or an
// approved lesson (Type "lesson", CandidateID, Title).
type ContextItem struct {
	Type            string  `json:"type"`
	EntryNo         *int32  `json:"entry_no,omitempty"`
	EntryID         *int64  `json:"entry_id,omitempty"`
	CandidateID     *string `json:"candidate_id,omitempty"`
	Title           *string `json:"title,omitempty"`
	Content         string  `json:"content"`
	SourcePositions []int64 `json:"source_positions"`
	Score           float64 `json:"score"`
	Tokens          int     `json:"tokens"`
	// Scores are a memory item's scores by method, when it matched the query.
	Scores *MethodScores `json:"scores,omitempty"`
}

// OperationRecord is the public view of one operation.
type OperationRecord struct {
	OperationID  string          `json:"operation_id"`
	Kind         string          `json:"kind"`
	ScopeID      string          `json:"scope_id"`
	Status       string          `json:"status"`
	AttemptCount int32           `json:"attempt_count"`
	StateVersion int64           `json:"state_version"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	CompletedAt  *time.Time      `json:"completed_at"`
	AvailableAt  time.Time       `json:"available_at"`
	Result       json.RawMessage `json:"result"`
	Error        *OperationError `json:"error"`
}

// Terminal reports whether the operation reached succeeded, failed or cancelled.
func (r OperationRecord) Terminal() bool {
	switch r.Status {
	case StatusSucceeded, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// OperationError is the bounded failure of an operation.
type OperationError struct {
	Category string `json:"category"`
	Code     string `json:"code"`
}

// ListOperationsParams filters GET /v1/operations; zero values are omitted (Limit 0 = server default 50).
type ListOperationsParams struct {
	ScopeID string
	Kind    string
	Status  string
	Cursor  string
	Limit   int
}

// OperationList is a page of operations, newest first; NextCursor is nil on the last page.
type OperationList struct {
	Items      []OperationRecord `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}

// ListCandidatesParams filters GET /v1/experience/candidates; Status "" means any, Limit 0 the server default.
type ListCandidatesParams struct {
	ScopeID string
	Status  string
	Limit   int
}

// Candidate is one Experience candidate: a proposed lesson awaiting human review.
type Candidate struct {
	CandidateID    string    `json:"candidate_id"`
	ScopeID        string    `json:"scope_id"`
	OperationID    string    `json:"operation_id"`
	Title          string    `json:"title"`
	Lesson         string    `json:"lesson"`
	CitedPositions []int64   `json:"cited_positions"`
	Status         string    `json:"status"`
	StateVersion   int64     `json:"state_version"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// CandidateList is a page of candidates, newest first.
type CandidateList struct {
	Items []Candidate `json:"items"`
}

// Member is one live runtime member (no secrets).
type Member struct {
	MemberID         string       `json:"member_id"`
	Role             string       `json:"role"`
	BuildVersion     string       `json:"build_version"`
	SchemaVersions   VersionRange `json:"schema_versions"`
	PayloadVersions  VersionRange `json:"payload_versions"`
	BehaviorRevision string       `json:"behavior_revision"`
	StartedAt        time.Time    `json:"started_at"`
	HeartbeatAt      time.Time    `json:"heartbeat_at"`
	ExpiresAt        time.Time    `json:"expires_at"`
}

// VersionRange is an inclusive range of versions.
type VersionRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// Health is the answer of GET /health/ready: ready|degraded (200) or not_ready|misconfigured (503).
type Health struct {
	Status string         `json:"status"`
	Checks map[string]any `json:"checks"`
}

type expectedVersionBody struct {
	ExpectedVersion int64 `json:"expected_version"`
}

type flushBody struct {
	ScopeID string `json:"scope_id"`
}
