package handlers

import (
	"encoding/json"
	"time"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
)

// timeLayout is RFC 3339 in UTC with exactly six fractional digits (2026-12-02T13:00:00.123456Z).
const timeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on the wire.
type Time time.Time

// MarshalJSON writes the time in the API's one timestamp format.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timeLayout) + `"`), nil
}

func apiTime(t time.Time) Time { return Time(t) }

// optTime is nil for the zero time (SQL NULL).
func optTime(t time.Time) *Time {
	if t.IsZero() {
		return nil
	}
	v := Time(t)
	return &v
}

// rawJSON returns b as raw JSON, or fallback when b is empty or not valid JSON.
func rawJSON(b []byte, fallback string) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return json.RawMessage(fallback)
	}
	return json.RawMessage(b)
}

// Operation kinds by their ledger kind and their public name. A kind not listed is never shown. System kinds (the
// deployment's own upkeep, not any scope's work) are shown to admins only.
var (
	publicKindOf = map[string]string{memory.Kind: memory.PublicKind, experience.Kind: experience.PublicKind,
		coordinator.KindMaintenance: coordinator.PublicKindMaintenance, lifecycle.KindRedact: lifecycle.PublicKindRedact,
		lifecycle.KindErase: lifecycle.PublicKindErase, memory.KindEmbed: memory.PublicKindEmbed,
		portability.KindExport: portability.PublicKindExport, portability.KindImport: portability.PublicKindImport}
	internalKind = map[string]string{memory.PublicKind: memory.Kind, experience.PublicKind: experience.Kind,
		coordinator.PublicKindMaintenance: coordinator.KindMaintenance, lifecycle.PublicKindRedact: lifecycle.KindRedact,
		lifecycle.PublicKindErase: lifecycle.KindErase, memory.PublicKindEmbed: memory.KindEmbed,
		portability.PublicKindExport: portability.KindExport, portability.PublicKindImport: portability.KindImport}
	systemKind = map[string]bool{coordinator.KindMaintenance: true}
)

// visibleOperation reports whether principal p may see item: a known kind, a scope p may use, and for a system kind
// an admin (or a server without principals).
func visibleOperation(p *auth.Principal, item db.WorkItem) bool {
	if _, ok := publicKindOf[item.Kind]; !ok || !p.AllowsScope(item.ScopeID) {
		return false
	}
	return !systemKind[item.Kind] || p == nil || p.Admin()
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

// operationRecord maps a work item of a public kind (ok false for any other kind).
func operationRecord(w db.WorkItem) (OperationRecord, bool) {
	kind, ok := publicKindOf[w.Kind]
	if !ok {
		return OperationRecord{}, false
	}
	r := OperationRecord{OperationID: w.WorkID, Kind: kind, ScopeID: w.ScopeID, Status: w.Status,
		AttemptCount: w.AttemptCount, StateVersion: w.StateVersion, CreatedAt: apiTime(w.CreatedAt),
		UpdatedAt: apiTime(w.UpdatedAt), CompletedAt: optTime(w.CompletedAt), AvailableAt: apiTime(w.AvailableAt),
		Result: rawJSON(w.ResultPayload, "null")}
	if w.ErrorCategory != "" || w.ErrorCode != "" {
		r.Error = &OperationError{Category: w.ErrorCategory, Code: w.ErrorCode}
	}
	return r, true
}
