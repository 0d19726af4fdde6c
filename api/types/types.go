// Package types holds the request and response bodies of the HTTP API (the component schemas of api/openapi.yaml)
// that more than one layer uses: handlers writes them, and the MCP tools return them where their JSON shape is the
// same. It imports no package of this module, so any layer may use it; the mapping from domain values stays with
// the layer that does it. TestSchemasMatchOpenAPI checks every type here against the document.
//
// The struct tags carry jsonschema descriptions too: the MCP SDK infers a tool's output schema from its Go type.
package types

import (
	"encoding/json"
	"time"
)

// TimeLayout is RFC 3339 in UTC with exactly six fractional digits (2026-12-02T13:00:00.123456Z).
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on the wire.
type Time time.Time

// MarshalJSON writes the time in the API's one timestamp format.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(TimeLayout) + `"`), nil
}

// Eviction is what the 500-entry cap dropped when a revision was written (docs/memory.md#eviction): how many
// entries, and their ids, least recently confirmed first.
type Eviction struct {
	Count    int     `json:"count"`
	EntryIDs []int64 `json:"entry_ids"`
}

// MethodScores are an entry's scores by ranking method: fts (BM25) when it matched the query's terms, semantic
// (cosine similarity) when its vector matched the query's; absent when that method did not match it or did not run.
type MethodScores struct {
	FTS      *float64 `json:"fts,omitempty" jsonschema:"BM25 relevance to q's words"`
	Semantic *float64 `json:"semantic,omitempty" jsonschema:"cosine similarity of the entry's embedding and q's"`
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

// MemorySearchResponse is the answer of GET /v1/memory/search: the matching entries of the current revision, the
// mode that ranked them, and whether a vector mode fell back to full text.
type MemorySearchResponse struct {
	MemoryResponse
	Mode     string `json:"mode"`
	Degraded bool   `json:"degraded"`
}

// OperationRecord is the public view of one work item.
type OperationRecord struct {
	OperationID  string          `json:"operation_id"`
	Kind         string          `json:"kind"`
	ScopeID      string          `json:"scope_id"`
	Status       string          `json:"status"`
	AttemptCount int32           `json:"attempt_count"`
	StateVersion int64           `json:"state_version"`
	CreatedAt    Time            `json:"created_at"`
	UpdatedAt    Time            `json:"updated_at"`
	CompletedAt  *Time           `json:"completed_at"`
	AvailableAt  Time            `json:"available_at"`
	Result       json.RawMessage `json:"result"`
	Error        *OperationError `json:"error"`
}

// OperationError is the bounded failure of an operation.
type OperationError struct {
	Category string `json:"category"`
	Code     string `json:"code"`
}

// CaptureSourceResponse is the answer of POST /v1/sources (201 created, 200 for a repeated source id).
type CaptureSourceResponse struct {
	ScopeID         string `json:"scope_id"`
	SourceID        string `json:"source_id"`
	JournalPosition int64  `json:"journal_position"`
	Created         bool   `json:"created"`
}
