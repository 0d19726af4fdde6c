package portability

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Names of the operations that record an export or an import (docs/portability.md#audit): the request is recorded
// in the operation ledger with who asked; a worker completes the record at once.
const (
	KindExport           = "powercontext.scope.export"
	PublicKindExport     = "scope_export"
	KindImport           = "powercontext.scope.import"
	PublicKindImport     = "scope_import"
	RecordPayloadVersion = 1
	// ResultRecorded is the result code of a record.
	ResultRecorded = "recorded"
)

// WorkKinds are the work kinds this package runs; app hands them to telemetry.
func WorkKinds() []string { return []string{KindExport, KindImport} }

// ExportRecord is the payload and result of a scope_export operation: who asked and whether vectors were included.
type ExportRecord struct {
	Type        string `json:"type"`
	RequestedBy string `json:"requested_by"`
	Embeddings  bool   `json:"embeddings"`
}

// ImportRecord is the payload and result of a scope_import operation: who asked, the scope the stream was
// exported from, and the counts imported (never content).
type ImportRecord struct {
	Type          string `json:"type"`
	RequestedBy   string `json:"requested_by"`
	SourceScopeID string `json:"source_scope_id"`
	Counts
}

// LaneKey is the lane of a scope's export and import records.
func LaneKey(scope string) string {
	h := sha256.Sum256([]byte("portability:" + scope))
	return hex.EncodeToString(h[:])
}

// RecordRequest enqueues one record operation of kind (KindExport or KindImport) for scope with payload.
func RecordRequest(kind, scope string, payload any, maxAttempts int32) coordinator.EnqueueRequest {
	key := sha256.Sum256([]byte(kind + "\x00" + uuid.NewString()))
	return coordinator.EnqueueRequest{LaneKey: LaneKey(scope), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
		return &coordinator.EnqueueSpec{Kind: kind, PayloadVersion: RecordPayloadVersion, ScopeID: scope,
			LogicalKey: hex.EncodeToString(key[:]), Payload: payload, MaxAttempts: max(maxAttempts, 1)}, nil
	}}
}

// RecordHandler completes record operations of one kind: the result is the payload.
type RecordHandler struct{ RecordKind string }

// Kind implements coordinator.Handler: the work kind it runs.
func (h RecordHandler) Kind() string { return h.RecordKind }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h RecordHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: RecordPayloadVersion, Max: RecordPayloadVersion}
}

// Prepare implements coordinator.Handler: nothing to do but to publish the payload as the result.
func (h RecordHandler) Prepare(_ context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	if item.PayloadVersion != RecordPayloadVersion || !json.Valid(item.Payload) {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: ResultRecorded, Payload: json.RawMessage(item.Payload)}}, nil
}
