package handlers

import (
	"encoding/json"
	"time"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/opkinds"
)

func apiTime(t time.Time) types.Time { return types.Time(t) }

// optTime is nil for the zero time (SQL NULL).
func optTime(t time.Time) *types.Time {
	if t.IsZero() {
		return nil
	}
	v := types.Time(t)
	return &v
}

// rawJSON returns b as raw JSON, or fallback when b is empty or not valid JSON.
func rawJSON(b []byte, fallback string) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return json.RawMessage(fallback)
	}
	return json.RawMessage(b)
}

// visibleOperation reports whether principal p may see item: a known kind, a scope p may use, and for a system kind
// an admin (or a server without principals).
func visibleOperation(p *auth.Principal, item db.WorkItem) bool {
	if _, ok := opkinds.Public(item.Kind); !ok || !p.AllowsScope(item.ScopeID) {
		return false
	}
	return !opkinds.System(item.Kind) || p == nil || p.Admin()
}

// operationRecord maps a work item of a public kind (ok false for any other kind).
func operationRecord(w db.WorkItem) (types.OperationRecord, bool) {
	kind, ok := opkinds.Public(w.Kind)
	if !ok {
		return types.OperationRecord{}, false
	}
	r := types.OperationRecord{OperationID: w.WorkID, Kind: kind, ScopeID: w.ScopeID, Status: w.Status,
		AttemptCount: w.AttemptCount, StateVersion: w.StateVersion, CreatedAt: apiTime(w.CreatedAt),
		UpdatedAt: apiTime(w.UpdatedAt), CompletedAt: optTime(w.CompletedAt), AvailableAt: apiTime(w.AvailableAt),
		Result: rawJSON(w.ResultPayload, "null")}
	if w.ErrorCategory != "" || w.ErrorCode != "" {
		r.Error = &types.OperationError{Category: w.ErrorCategory, Code: w.ErrorCode}
	}
	return r, true
}
