package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/opkinds"
	"github.com/powercontext/powercontext/memory"
)

// Names of the tools over operations and the journal.
const (
	ToolFlushMemory        = "flush_memory"
	ToolIncubateExperience = "incubate_experience"
	ToolGetOperation       = "get_operation"
	ToolListSources        = "list_sources"
)

// Limits applied like the HTTP routes do (docs/api.md).
const (
	defaultFlushWait   = 10 * time.Second
	maxFlushWait       = 30 * time.Second
	defaultSourceLimit = 100
	maxSourceLimit     = 500
)

// FlushMemoryInput is the argument object of flush_memory.
type FlushMemoryInput struct {
	ScopeID     string   `json:"scope_id" jsonschema:"scope whose pending Sources to turn into Memory (1..256 bytes)"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"how long to wait for the result in seconds (clamped to 0..the server maximum, 30 by default; default 10); 0 returns the operation id at once"`
}

// FlushMemoryOutput is the result of flush_memory: status idle or processed with the revision, or pending with
// an operation_id to follow with get_operation.
type FlushMemoryOutput struct {
	Status               string  `json:"status" jsonschema:"idle (nothing pending), processed (done within the wait) or pending"`
	OperationID          *string `json:"operation_id" jsonschema:"the memory_flush operation; null when idle without one"`
	Revision             *int64  `json:"revision" jsonschema:"the scope's latest Memory revision once idle or processed"`
	ProcessedSourceCount int64   `json:"processed_source_count"`
	CurrentCursor        int64   `json:"current_cursor"`
	HighWatermark        int64   `json:"high_watermark"`
}

// IncubateExperienceInput is the argument object of incubate_experience (flush_memory's).
type IncubateExperienceInput = FlushMemoryInput

// IncubateExperienceOutput is the result of incubate_experience: status idle or processed with the number of
// candidates the window proposed, or pending with an operation_id to follow with get_operation.
type IncubateExperienceOutput struct {
	Status               string  `json:"status" jsonschema:"idle (nothing pending), processed (done within the wait) or pending"`
	OperationID          *string `json:"operation_id" jsonschema:"the experience_incubation operation; null when idle without one"`
	CandidateCount       int     `json:"candidate_count" jsonschema:"candidates the window proposed (pending review; list them with list_experience_candidates)"`
	ProcessedSourceCount int64   `json:"processed_source_count"`
	CurrentCursor        int64   `json:"current_cursor"`
	HighWatermark        int64   `json:"high_watermark"`
}

// GetOperationInput is the argument object of get_operation.
type GetOperationInput struct {
	OperationID string `json:"operation_id" jsonschema:"an operation id from flush_memory or memory_history"`
}

// OperationOutput is the result of get_operation (the answer of GET /v1/operations/{id}).
type OperationOutput struct {
	OperationID  string          `json:"operation_id"`
	Kind         string          `json:"kind"`
	ScopeID      string          `json:"scope_id"`
	Status       string          `json:"status" jsonschema:"queued, running, retry_wait, cancelling, succeeded, failed or cancelled"`
	AttemptCount int32           `json:"attempt_count"`
	StateVersion int64           `json:"state_version"`
	CreatedAt    string          `json:"created_at"`
	UpdatedAt    string          `json:"updated_at"`
	Result       map[string]any  `json:"result,omitempty" jsonschema:"the result once succeeded"`
	Error        *OperationError `json:"error,omitempty"`
}

// OperationError is the bounded failure of an operation, as on the HTTP API.
type OperationError = types.OperationError

// ListSourcesInput is the argument object of list_sources.
type ListSourcesInput struct {
	ScopeID string `json:"scope_id" jsonschema:"scope whose journal to list (1..256 bytes)"`
	After   int64  `json:"after,omitempty" jsonschema:"list Sources after this journal position (default 0)"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"most Sources to list (1..500, default 100)"`
}

// SourceList is the result of list_sources, in journal order.
type SourceList struct {
	Items     []Source `json:"items"`
	NextAfter *int64   `json:"next_after" jsonschema:"pass as after for the next page; null on the last page"`
}

// Source is one captured Source (a forgotten one has empty content).
type Source struct {
	ScopeID         string         `json:"scope_id"`
	SourceID        string         `json:"source_id"`
	JournalPosition int64          `json:"journal_position"`
	SourceType      string         `json:"source_type"`
	Content         string         `json:"content"`
	Metadata        map[string]any `json:"metadata"`
	CreatedAt       string         `json:"created_at"`
}

func (t *tools) registerWork(s *sdk.Server) {
	addTool(t, s, &sdk.Tool{
		Name:  ToolFlushMemory,
		Title: "Flush a scope's memory",
		Description: "Turn the scope's pending Sources into a new Memory revision. Waits up to wait_seconds: status " +
			"processed (with the revision) or idle (nothing pending); otherwise pending with an operation_id to " +
			"follow with get_operation. Flushing again while a window is pending joins the same operation.",
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.flushMemory)
	addTool(t, s, &sdk.Tool{
		Name:  ToolIncubateExperience,
		Title: "Incubate a scope's experience",
		Description: "Propose Experience lessons from the scope's task outcomes captured since the last incubation, " +
			"now instead of at the next schedule. Waits up to wait_seconds: status processed (with candidate_count) " +
			"or idle (nothing pending); otherwise pending with an operation_id to follow with get_operation. The " +
			"candidates wait for a human review before an agent sees them in get_context.",
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.incubateExperience)
	addTool(t, s, &sdk.Tool{
		Name:        ToolGetOperation,
		Title:       "Get an operation",
		Description: "Return one operation (memory_flush, experience_incubation, memory_redact, memory_embed, scope_erase): its status, attempts, result once succeeded and bounded error once failed.",
		Annotations: readOnly(),
	}, t.getOperation)
	addTool(t, s, &sdk.Tool{
		Name:        ToolListSources,
		Title:       "List a scope's sources",
		Description: "List the Sources captured into a scope, in journal order, after a journal position.",
		Annotations: readOnly(),
	}, t.listSources)
}

func (t *tools) flushMemory(ctx context.Context, _ *sdk.CallToolRequest, in FlushMemoryInput) (*sdk.CallToolResult, FlushMemoryOutput, error) {
	if t.d.Flusher == nil {
		return nil, FlushMemoryOutput{}, notReady("memory flush")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}); err != nil {
		return nil, FlushMemoryOutput{}, err
	}
	out, err := t.d.Flusher.Flush(ctx, in.ScopeID, t.triggerWait(in.WaitSeconds))
	if err != nil {
		return nil, FlushMemoryOutput{}, t.toolError(ToolFlushMemory, err)
	}
	res := FlushMemoryOutput{OperationID: operationID(out.Item), ProcessedSourceCount: out.Result.ProcessedSourceCount,
		CurrentCursor: out.Result.CurrentCursor, HighWatermark: out.Result.HighWatermark}
	if out.Result.Memory != nil && out.Status != memory.FlushPending {
		res.Revision = ptr(out.Result.Memory.Revision)
	}
	res.Status, err = triggerAnswer(out.Status, out.Item, "memory flush", "memory window")
	if res.Status == memory.FlushPending {
		res.ProcessedSourceCount, res.CurrentCursor, res.HighWatermark = 0, 0, 0
	}
	return nil, res, err
}

func (t *tools) incubateExperience(ctx context.Context, _ *sdk.CallToolRequest, in IncubateExperienceInput) (*sdk.CallToolResult, IncubateExperienceOutput, error) {
	if t.d.Incubator == nil {
		return nil, IncubateExperienceOutput{}, notReady("experience incubation")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}); err != nil {
		return nil, IncubateExperienceOutput{}, err
	}
	out, err := t.d.Incubator.Incubate(ctx, in.ScopeID, t.triggerWait(in.WaitSeconds))
	if err != nil {
		return nil, IncubateExperienceOutput{}, t.toolError(ToolIncubateExperience, err)
	}
	res := IncubateExperienceOutput{OperationID: operationID(out.Item)}
	res.Status, err = triggerAnswer(out.Status, out.Item, "experience incubation", "incubation window")
	if res.Status != coordinator.TriggerPending {
		res.CandidateCount, res.ProcessedSourceCount = out.Result.CandidateCount, out.Result.ProcessedSourceCount
		res.CurrentCursor, res.HighWatermark = out.Result.CurrentCursor, out.Result.HighWatermark
	}
	return nil, res, err
}

// triggerWait is a flush or incubation's wait: wait_seconds clamped to 0..max like the HTTP Prefer: wait=N, else
// the server's default.
func (t *tools) triggerWait(seconds *float64) time.Duration {
	wait, maxWait := t.d.FlushDefaultWait, t.d.FlushMaxWait
	if maxWait <= 0 {
		maxWait = maxFlushWait
	}
	if wait <= 0 {
		wait = min(defaultFlushWait, maxWait)
	}
	if seconds != nil {
		wait = time.Duration(max(0, min(*seconds, maxWait.Seconds())) * float64(time.Second))
	}
	return wait
}

func operationID(item db.WorkItem) *string {
	if item.WorkID == "" {
		return nil
	}
	return ptr(item.WorkID)
}

// triggerAnswer maps a coordinator.Trigger outcome to the tool's status, or to the tool error of the HTTP 409
// answers (operation_blocked, operation_failed, operation_cancelled).
func triggerAnswer(status string, item db.WorkItem, what, window string) (string, error) {
	switch status {
	case coordinator.TriggerIdle, coordinator.TriggerProcessed, coordinator.TriggerPending:
		return status, nil
	case coordinator.TriggerBlocked:
		return "", &ToolError{Code: "operation_blocked", Message: "the scope's next " + window + " is held by failed operation " + item.WorkID + "; retry or cancel it"}
	case coordinator.TriggerFailed:
		return "", &ToolError{Code: "operation_failed", Message: what + " operation " + item.WorkID + " failed"}
	case coordinator.TriggerCancelled:
		return "", &ToolError{Code: "operation_cancelled", Message: what + " operation " + item.WorkID + " was cancelled"}
	}
	return "", errInternal
}

var errOperationNotFound = &ToolError{Code: "operation_not_found", Field: "operation_id", Message: "operation not found"}

func (t *tools) getOperation(ctx context.Context, req *sdk.CallToolRequest, in GetOperationInput) (*sdk.CallToolResult, OperationOutput, error) {
	if t.d.Ledger == nil {
		return nil, OperationOutput{}, notReady("the operation ledger")
	}
	if err := checkTexts(field{"operation_id", in.OperationID}); err != nil {
		return nil, OperationOutput{}, err
	}
	if len(in.OperationID) != 36 {
		return nil, OperationOutput{}, errOperationNotFound
	}
	item, err := t.d.Ledger.Get(ctx, in.OperationID)
	if errors.Is(err, coordinator.ErrNotFound) || errors.Is(err, db.ErrNotFound) {
		return nil, OperationOutput{}, errOperationNotFound
	}
	if err != nil {
		return nil, OperationOutput{}, t.toolError(ToolGetOperation, err)
	}
	kind, public := opkinds.Public(item.Kind)
	p := callerOf(req.Extra)
	// An operation outside the caller's scopes, of an internal kind, or a system one for a non-admin is "not found",
	// exactly as over HTTP.
	if !public || !p.AllowsScope(item.ScopeID) || (opkinds.System(item.Kind) && p != nil && !p.Admin()) {
		return nil, OperationOutput{}, errOperationNotFound
	}
	out := OperationOutput{OperationID: item.WorkID, Kind: kind, ScopeID: item.ScopeID, Status: item.Status,
		AttemptCount: item.AttemptCount, StateVersion: item.StateVersion, CreatedAt: formatTime(item.CreatedAt),
		UpdatedAt: formatTime(item.UpdatedAt)}
	if len(item.ResultPayload) > 0 {
		_ = json.Unmarshal(item.ResultPayload, &out.Result)
	}
	if item.ErrorCategory != "" || item.ErrorCode != "" {
		out.Error = &OperationError{Category: item.ErrorCategory, Code: item.ErrorCode}
	}
	return nil, out, nil
}

func (t *tools) listSources(ctx context.Context, _ *sdk.CallToolRequest, in ListSourcesInput) (*sdk.CallToolResult, SourceList, error) {
	if t.d.Journal == nil {
		return nil, SourceList{}, notReady("the source journal")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}); err != nil {
		return nil, SourceList{}, err
	}
	limit := defaultSourceLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > maxSourceLimit {
		return nil, SourceList{}, &ToolError{Code: "invalid_request", Field: "limit", Message: "must be 1..500"}
	}
	if in.After < 0 {
		return nil, SourceList{}, &ToolError{Code: "invalid_request", Field: "after", Message: "must be >= 0"}
	}
	out := SourceList{Items: []Source{}}
	after, size := in.After, 0
	for len(out.Items) < limit {
		chunk := min(limit-len(out.Items), 32) // Sources are up to 64 KiB: read in chunks, stop at the byte cap
		rows, err := t.d.Journal.List(ctx, in.ScopeID, after, chunk)
		if err != nil {
			return nil, SourceList{}, t.toolError(ToolListSources, err)
		}
		for _, r := range rows {
			if size += len(r.Content) + len(r.Metadata); size > maxListBytes && len(out.Items) > 0 {
				out.NextAfter = ptr(after)
				return nil, out, nil
			}
			md := map[string]any{}
			_ = json.Unmarshal(r.Metadata, &md)
			out.Items = append(out.Items, Source{ScopeID: r.ScopeID, SourceID: r.SourceID, JournalPosition: r.JournalPosition,
				SourceType: r.SourceType, Content: r.Content, Metadata: md, CreatedAt: formatTime(r.CreatedAt)})
			after = r.JournalPosition
		}
		if len(rows) < chunk {
			return nil, out, nil
		}
	}
	out.NextAfter = ptr(after)
	return nil, out, nil
}

// maxListBytes caps one list_sources answer like the HTTP list byte cap (handlers.DefaultMaxListBytes).
const maxListBytes = 1 << 20
