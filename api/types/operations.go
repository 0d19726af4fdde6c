package types

import "encoding/json"

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

// OperationList is the answer of GET /v1/operations: newest first; next_cursor is null on the last page. A page
// ends early at the byte cap (Deps.MaxListBytes) with next_cursor after its last item. Items are OperationRecord
// values.
type OperationList struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor *string           `json:"next_cursor"`
}
