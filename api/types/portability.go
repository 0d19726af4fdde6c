package types

// ImportCounts are the records an import wrote.
type ImportCounts struct {
	Sources    int64 `json:"sources"`
	Tombstones int64 `json:"tombstones"`
	Cursors    int64 `json:"cursors"`
	Revisions  int64 `json:"revisions"`
	Entries    int64 `json:"entries"`
	Embeddings int64 `json:"embeddings"`
	Candidates int64 `json:"candidates"`
}

// ImportScopeResponse is the answer of POST /v1/scopes/{scope_id}/import.
type ImportScopeResponse struct {
	ScopeID       string       `json:"scope_id"`
	SourceScopeID string       `json:"source_scope_id"`
	Counts        ImportCounts `json:"counts"`
	OperationID   string       `json:"operation_id"`
	StatusURL     string       `json:"status_url"`
}
