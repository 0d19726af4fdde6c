package types

import "encoding/json"

// FlushRequest is the body of POST /v1/memory/flush.
type FlushRequest struct {
	ScopeID string `json:"scope_id"`
}

// FlushResponse is the 200 answer of a flush: nothing pending (idle) or done within the wait (processed).
type FlushResponse struct {
	Status               string          `json:"status"`
	PreviousCursor       int64           `json:"previous_cursor"`
	CurrentCursor        int64           `json:"current_cursor"`
	HighWatermark        int64           `json:"high_watermark"`
	ProcessedSourceCount int64           `json:"processed_source_count"`
	Memory               *MemoryRevision `json:"memory"`
	OperationID          *string         `json:"operation_id"`
}

// MemoryRevision names a committed Memory revision.
type MemoryRevision struct {
	Revision int64 `json:"revision"`
}

// FlushAccepted is the 202 answer of a flush still queued or running after the wait.
type FlushAccepted struct {
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
	StatusURL   string `json:"status_url"`
}

// MemoryResponse is a scope's current Memory (GET /v1/memory) or the matching entries of it
// (GET /v1/memory/search). revision and created_at are null while nothing was committed; evicted is null then too,
// and for a revision an older build wrote.
type MemoryResponse struct {
	ScopeID   string        `json:"scope_id"`
	Revision  *int64        `json:"revision"`
	CreatedAt *Time         `json:"created_at"`
	Evicted   *Eviction     `json:"evicted"`
	Entries   []MemoryEntry `json:"entries"`
}

// Eviction is what the 500-entry cap dropped when a revision was written (docs/memory.md#eviction): how many
// entries, and their ids, least recently confirmed first.
type Eviction struct {
	Count    int     `json:"count"`
	EntryIDs []int64 `json:"entry_ids"`
}

// MemoryEntry is one fact of a Memory revision with the journal positions it came from. entry_no is its place in
// the revision; entry_id its stable id in the scope (docs/memory.md#entry-ids), null for an entry an older build
// wrote.
type MemoryEntry struct {
	EntryNo         int32           `json:"entry_no"`
	EntryID         *int64          `json:"entry_id"`
	Content         string          `json:"content"`
	SourcePositions json.RawMessage `json:"source_positions"`
	// Score is the relevance to the query by the search's mode: BM25 (fts), cosine similarity (semantic) or the
	// reciprocal-rank-fusion sum (hybrid) (GET /v1/memory/search only).
	Score *float64 `json:"score,omitempty"`
	// Scores are the entry's scores by method (GET /v1/memory/search only).
	Scores *MethodScores `json:"scores,omitempty"`
}

// MethodScores are an entry's scores by ranking method: fts (BM25) when it matched the query's terms, semantic
// (cosine similarity) when its vector matched the query's; absent when that method did not match it or did not run.
type MethodScores struct {
	FTS      *float64 `json:"fts,omitempty" jsonschema:"BM25 relevance to q's words"`
	Semantic *float64 `json:"semantic,omitempty" jsonschema:"cosine similarity of the entry's embedding and q's"`
}

// MemorySearchResponse is the answer of GET /v1/memory/search: the matching entries of the current revision, the
// mode that ranked them, and whether a vector mode fell back to full text.
type MemorySearchResponse struct {
	MemoryResponse
	Mode     string `json:"mode"`
	Degraded bool   `json:"degraded"`
}

// MemoryRevisionRecord is one revision in GET /v1/memory/revisions: the window of journal positions
// (window_after, window_through] it consumed, the memory_flush or memory_redact operation that wrote it, and what
// the entry cap evicted (null for a revision an older build wrote).
type MemoryRevisionRecord struct {
	Revision      int64     `json:"revision"`
	CreatedAt     Time      `json:"created_at"`
	EntryCount    int32     `json:"entry_count"`
	WindowAfter   int64     `json:"window_after"`
	WindowThrough int64     `json:"window_through"`
	OperationID   string    `json:"operation_id"`
	Evicted       *Eviction `json:"evicted"`
}

// MemoryRevisionList is the answer of GET /v1/memory/revisions: newest first; next_cursor is null on the last page.
type MemoryRevisionList struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}

// MemoryDiff is the answer of GET /v1/memory/diff.
type MemoryDiff struct {
	ScopeID string            `json:"scope_id"`
	From    int64             `json:"from"`
	To      int64             `json:"to"`
	Added   []MemoryEntry     `json:"added"`
	Removed []MemoryEntry     `json:"removed"`
	Changed []MemoryDiffEntry `json:"changed"`
}

// MemoryDiffEntry is one fact in both revisions whose text or source positions differ.
type MemoryDiffEntry struct {
	From MemoryEntry `json:"from"`
	To   MemoryEntry `json:"to"`
}

// ContextResponse is the answer of GET /v1/context.
type ContextResponse struct {
	ScopeID    string        `json:"scope_id"`
	Revision   *int64        `json:"revision"`
	MaxTokens  int           `json:"max_tokens"`
	UsedTokens int           `json:"used_tokens"`
	Omitted    int           `json:"omitted"`
	Items      []ContextItem `json:"items"`
	// Mode is the method that ranked the Memory entries; Degraded says a vector mode fell back to full text.
	Mode     string `json:"mode"`
	Degraded bool   `json:"degraded"`
}

// ContextItem is one Memory entry (type memory, entry_no, entry_id unless an older build wrote it) or approved
// lesson (type lesson, candidate_id, title).
type ContextItem struct {
	Type            string          `json:"type"`
	EntryNo         *int32          `json:"entry_no,omitempty"`
	EntryID         *int64          `json:"entry_id,omitempty"`
	CandidateID     *string         `json:"candidate_id,omitempty"`
	Title           *string         `json:"title,omitempty"`
	Content         string          `json:"content"`
	SourcePositions json.RawMessage `json:"source_positions"`
	Score           float64         `json:"score"`
	Tokens          int             `json:"tokens"`
	// Scores are a memory item's scores by method (lessons are ranked by full text only).
	Scores *MethodScores `json:"scores,omitempty"`
}
