package types

import "encoding/json"

// Candidate is one Experience candidate (a proposed lesson awaiting human review).
type Candidate struct {
	CandidateID    string          `json:"candidate_id"`
	ScopeID        string          `json:"scope_id"`
	OperationID    string          `json:"operation_id"`
	Title          string          `json:"title"`
	Lesson         string          `json:"lesson"`
	CitedPositions json.RawMessage `json:"cited_positions"`
	Status         string          `json:"status"`
	StateVersion   int64           `json:"state_version"`
	CreatedAt      Time            `json:"created_at"`
	UpdatedAt      Time            `json:"updated_at"`
}

// CandidateList is the answer of GET /v1/experience/candidates, newest first.
type CandidateList struct {
	Items []Candidate `json:"items"`
}

// ExpectedVersionRequest is the body of approve/reject and of operation cancel/retry.
type ExpectedVersionRequest struct {
	ExpectedVersion *int64 `json:"expected_version"`
}

// IncubateResponse is the 200 answer of a manual incubation: nothing pending (idle) or done within the wait
// (processed), with the number of pending candidates the window proposed.
type IncubateResponse struct {
	Status               string  `json:"status"`
	PreviousCursor       int64   `json:"previous_cursor"`
	CurrentCursor        int64   `json:"current_cursor"`
	HighWatermark        int64   `json:"high_watermark"`
	ProcessedSourceCount int64   `json:"processed_source_count"`
	CandidateCount       int     `json:"candidate_count"`
	OperationID          *string `json:"operation_id"`
}
