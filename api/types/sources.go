package types

import "encoding/json"

// CaptureSourceRequest is the body of POST /v1/sources.
type CaptureSourceRequest struct {
	ScopeID    string          `json:"scope_id"`
	SourceID   string          `json:"source_id"`
	SourceType string          `json:"source_type"`
	Content    string          `json:"content"`
	Metadata   json.RawMessage `json:"metadata"`
}

// CaptureSourceResponse is the answer of POST /v1/sources (201 created, 200 for a repeated source id).
type CaptureSourceResponse struct {
	ScopeID         string `json:"scope_id"`
	SourceID        string `json:"source_id"`
	JournalPosition int64  `json:"journal_position"`
	Created         bool   `json:"created"`
}

// SourceRecord is one Source in GET /v1/sources.
type SourceRecord struct {
	ScopeID         string          `json:"scope_id"`
	SourceID        string          `json:"source_id"`
	JournalPosition int64           `json:"journal_position"`
	SourceType      string          `json:"source_type"`
	Content         string          `json:"content"`
	Metadata        json.RawMessage `json:"metadata"`
	CreatedAt       Time            `json:"created_at"`
}

// SourceList is the answer of GET /v1/sources: journal order; next_after is the position to pass as after for
// the next page, null on the last page. A page holds at most limit items and ends earlier at the byte cap
// (Deps.MaxListBytes); next_after then continues after its last item. Items are SourceRecord values.
type SourceList struct {
	Items     []json.RawMessage `json:"items"`
	NextAfter *int64            `json:"next_after"`
}
