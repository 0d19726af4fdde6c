package types

// ForgetSourceResponse is the answer of DELETE /v1/sources/{source_id}: 202 with the memory_redact operation that
// removes the Source from Memory, or 200 (operation_id null, status "forgotten") when Memory had not consumed it.
type ForgetSourceResponse struct {
	ScopeID         string  `json:"scope_id"`
	SourceID        string  `json:"source_id"`
	JournalPosition int64   `json:"journal_position"`
	OperationID     *string `json:"operation_id"`
	Status          string  `json:"status"`
	StatusURL       *string `json:"status_url"`
}

// EraseScopeResponse is the answer of DELETE /v1/scopes/{scope_id}: the scope_erase operation.
type EraseScopeResponse struct {
	ScopeID     string `json:"scope_id"`
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
	StatusURL   string `json:"status_url"`
}
