package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

// Deps is what the tools call: the same domain services as the HTTP handlers. A nil Journal or zero Memory or
// Experience makes the tools that need it answer a runtime_not_ready tool error.
type Deps struct {
	Journal    *sources.Journal
	Memory     memory.Reader
	Experience experience.Reviews
	// Flusher, Incubator and Ledger serve flush_memory, incubate_experience and get_operation (nil: those tools
	// answer runtime_not_ready).
	Flusher   *memory.Flusher
	Incubator *experience.Incubator
	Ledger    *coordinator.Ledger
	// Skills serves list_skills and get_skill (nil: they answer runtime_not_ready).
	Skills *skills.Service
	// FlushDefaultWait and FlushMaxWait bound flush_memory's and incubate_experience's wait like the HTTP flush
	// (defaults 10 s and 30 s).
	FlushDefaultWait, FlushMaxWait time.Duration
	Logger                         zerolog.Logger
	// Version is announced as the server implementation version (default "dev").
	Version string
	// MaxSessions caps the sessions a stateful server keeps (default DefaultMaxSessions) and
	// MaxSessionsPerPrincipal those of one principal (default DefaultMaxSessionsPerPrincipal): a new session beyond
	// either closes the same principal's least recently used idle session, or is refused with 429
	// too_many_sessions. Unused when stateless.
	MaxSessions, MaxSessionsPerPrincipal int
	// SessionIdle closes a stateful session after this long without a request (default DefaultSessionIdle).
	SessionIdle time.Duration
	// MaxStreams and MaxStreamsPerPrincipal cap a stateful server's open event streams (GET /mcp) in total and
	// per principal (defaults DefaultMaxStreams, DefaultMaxStreamsPerPrincipal; beyond: 429 too_many_streams);
	// StreamIdle ends a stream after this long without an event (default DefaultStreamIdle).
	MaxStreams, MaxStreamsPerPrincipal int
	StreamIdle                         time.Duration
}

// Names of the tools.
const (
	ToolCaptureSource            = "capture_source"
	ToolGetMemory                = "get_memory"
	ToolSearchMemory             = "search_memory"
	ToolListExperienceCandidates = "list_experience_candidates"
	ToolMemoryHistory            = "memory_history"
	ToolGetContext               = "get_context"
)

// Limits applied like the HTTP routes do.
const (
	defaultSearchLimit    = 20
	defaultCandidateLimit = 50
	defaultHistoryLimit   = 50
)

// timeLayout is the HTTP API's timestamp format.
const timeLayout = types.TimeLayout

// NewHandler returns the streamable HTTP handler of the MCP server. stateless is true in distributed mode: no
// session, any replica answers any request.
func NewHandler(d Deps, stateless bool) http.Handler {
	version := d.Version
	if version == "" {
		version = "dev"
	}
	t := &tools{d: d, log: d.Logger.With().Str("component", "mcp").Logger(), args: map[string]argSchema{}}
	server := sdk.NewServer(&sdk.Implementation{Name: "powercontext", Title: "powercontext", Version: version},
		&sdk.ServerOptions{
			Instructions: "powercontext keeps durable context per scope: capture sources (evidence) into a scope, " +
				"then read the scope's Memory (facts extracted from its sources) or search it, and list proposed " +
				"Experience lessons. Memory is updated asynchronously after capture (by schedule, or at once with " +
				"flush_memory); call get_context before a step.",
			// Tools only; the tool list never changes at run time.
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		})
	t.register(server)
	server.AddReceivingMiddleware(t.checkArguments, scopeGuard)
	opts := &sdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: true}
	if stateless {
		return errorShape(withPrincipal(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, opts)))
	}
	opts.SessionTimeout = orDefault(d.SessionIdle, DefaultSessionIdle)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, opts)
	capped := newSessionCap(h, server, orDefault(d.MaxSessions, DefaultMaxSessions),
		orDefault(d.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal))
	streams := newStreamLimits(capped, orDefault(d.MaxStreams, DefaultMaxStreams),
		orDefault(d.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal), orDefault(d.StreamIdle, DefaultStreamIdle))
	return errorShape(withPrincipal(streams))
}

type tools struct {
	d    Deps
	log  zerolog.Logger
	args map[string]argSchema // by tool name: what checkArguments checks
}

func (t *tools) register(s *sdk.Server) {
	addTool(t, s, &sdk.Tool{
		Name:  ToolCaptureSource,
		Title: "Capture a source",
		Description: "Append one Source (a piece of evidence: a note, a message, a task outcome) to a scope's journal. " +
			"Capturing the same (scope_id, source_id) again returns the first capture with created=false. " +
			"The scope's Memory is updated asynchronously by a later memory flush.",
		InputSchema: json.RawMessage(captureSourceSchema),
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.captureSource)
	addTool(t, s, &sdk.Tool{
		Name:        ToolGetMemory,
		Title:       "Get a scope's memory",
		Description: "Return the current Memory revision of a scope: its entries (facts) with the journal positions of the sources they came from, and each entry's entry_id, which stays the same while the fact is restated or corrected in later revisions. revision is null while nothing was committed; evicted lists the entries the 500-entry cap dropped.",
		InputSchema: json.RawMessage(getMemorySchema),
		Annotations: readOnly(),
	}, t.getMemory)
	addTool(t, s, &sdk.Tool{
		Name:  ToolSearchMemory,
		Title: "Search a scope's memory",
		Description: "Return the entries of a scope's current Memory revision that match q, best first, each with its score and its scores by method. " +
			"mode fts: entries containing every word of q, by BM25 (works for Chinese, Japanese and Korean text through character bigrams); " +
			"semantic: entries whose embedding is similar to q's, by cosine similarity (finds paraphrases with an embedding model; the built-in one is lexical and typo-tolerant); " +
			"hybrid: both, fused by reciprocal rank. Default: hybrid when the revision has embeddings, else fts. " +
			"degraded is true when q could not be embedded in time and full text answered.",
		InputSchema: json.RawMessage(searchMemorySchema),
		Annotations: readOnly(),
	}, t.searchMemory)
	addTool(t, s, &sdk.Tool{
		Name:        ToolListExperienceCandidates,
		Title:       "List experience candidates",
		Description: "List a scope's Experience candidates (lessons proposed from task outcomes, awaiting human review), newest first.",
		InputSchema: json.RawMessage(listCandidatesSchema),
		Annotations: readOnly(),
	}, t.listCandidates)
	// Schemas inferred from the Go types (MemoryHistoryInput, MemoryHistoryOutput); optional numbers are plain
	// "integer"/"number" (inputSchemaFor).
	addTool(t, s, &sdk.Tool{
		Name:  ToolMemoryHistory,
		Title: "List a scope's memory revisions",
		Description: "List a scope's Memory revisions, newest first: revision number, creation time, entry count, the " +
			"journal window (window_after, window_through] it consumed, the operation that wrote it and the entries " +
			"the 500-entry cap evicted. Read one revision with get_memory and its revision argument.",
		Annotations: readOnly(),
	}, t.memoryHistory)
	addTool(t, s, &sdk.Tool{
		Name:  ToolGetContext,
		Title: "Get the context for a step",
		Description: "Call before a step: the scope's Memory entries most relevant to q and its approved Experience " +
			"lessons, within max_tokens (estimated: one token per CJK character, one per 4 bytes of other text). " +
			"Matching entries come first (ranked in mode fts, semantic or hybrid, as search_memory), then matching " +
			"lessons, other lessons, other entries; each item carries the journal positions of its sources.",
		Annotations: readOnly(),
	}, t.getContext)
	t.registerWork(s)
	t.registerSkills(s)
}

func ptr[T any](v T) *T { return &v }

// orDefault is v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func readOnly() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

// Input schemas (JSON Schema 2020-12). The domain services validate the values again, exactly as over HTTP.
const (
	captureSourceSchema = `{
  "type": "object",
  "properties": {
    "scope_id": {"type": "string", "description": "Scope the source belongs to (1..256 bytes)."},
    "source_id": {"type": "string", "description": "Caller's id of the source, for idempotent capture (default: a random id)."},
    "source_type": {"type": "string", "description": "Kind of source (1..64 bytes, default \"content\")."},
    "content": {"type": "string", "description": "The source text (1..65536 bytes of UTF-8)."},
    "metadata": {"type": "object", "description": "Optional JSON object stored with the source; {\"kind\":\"task-outcome\"} offers it to experience incubation."}
  },
  "required": ["scope_id", "content"],
  "additionalProperties": false
}`
	getMemorySchema = `{
  "type": "object",
  "properties": {
    "scope_id": {"type": "string", "description": "Scope whose Memory to read."},
    "revision": {"type": "integer", "minimum": 1, "description": "A revision to read instead of the latest (see memory_history)."}
  },
  "required": ["scope_id"],
  "additionalProperties": false
}`
	searchMemorySchema = `{
  "type": "object",
  "properties": {
    "scope_id": {"type": "string", "description": "Scope whose Memory to search."},
    "q": {"type": "string", "description": "Words to look for (1..256 bytes, case-insensitive; every word must be present; ranked)."},
    "limit": {"type": "integer", "description": "Most entries to return (1..100, default 20)."},
    "mode": {"type": "string", "enum": ["fts", "semantic", "hybrid"], "description": "Ranking: fts (full text), semantic (embeddings) or hybrid (both); default hybrid when the revision has embeddings, else fts."}
  },
  "required": ["scope_id", "q"],
  "additionalProperties": false
}`
	listCandidatesSchema = `{
  "type": "object",
  "properties": {
    "scope_id": {"type": "string", "description": "Scope whose candidates to list."},
    "status": {"type": "string", "description": "Only candidates in this status: pending, approved or rejected (default: any)."}
  },
  "required": ["scope_id"],
  "additionalProperties": false
}`
)

// CaptureSourceInput is the argument object of capture_source.
type CaptureSourceInput struct {
	ScopeID    string          `json:"scope_id"`
	SourceID   string          `json:"source_id,omitempty"`
	SourceType string          `json:"source_type,omitempty"`
	Content    string          `json:"content"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// CaptureSourceOutput is the result of capture_source: the HTTP answer of POST /v1/sources.
type CaptureSourceOutput = types.CaptureSourceResponse

// GetMemoryInput is the argument object of get_memory.
type GetMemoryInput struct {
	ScopeID  string `json:"scope_id"`
	Revision *int64 `json:"revision,omitempty"`
}

// GetContextInput is the argument object of get_context.
type GetContextInput struct {
	ScopeID   string `json:"scope_id" jsonschema:"scope to read (1..256 bytes)"`
	Q         string `json:"q,omitempty" jsonschema:"what the step is about (0..256 bytes); without it the newest items"`
	MaxTokens *int   `json:"max_tokens,omitempty" jsonschema:"token budget (1..100000, default 2000)"`
	Mode      string `json:"mode,omitempty" jsonschema:"how entries are ranked: fts, semantic or hybrid (default hybrid when the revision has embeddings, else fts)"`
}

// ContextOutput is the result of get_context (the answer of GET /v1/context).
//
// This type and the other results below that carry timestamps or stored JSON (ContextItem, MemoryRevision,
// MemoryOutput, MemoryEntry, Candidate, and in work.go OperationOutput and Source), with the lists that hold them,
// keep their own declarations on purpose: the SDK infers a tool's output schema from the Go type, and would describe
// the HTTP types' types.Time (a struct) as an empty object and their json.RawMessage fields as arrays of bytes. Here
// timestamps are strings and positions, metadata and results decoded values, so the advertised schema says what the
// JSON holds. The JSON is the HTTP one, except that MemoryOutput answers both get_memory and search_memory (mode
// and degraded only in the latter).
type ContextOutput struct {
	ScopeID    string        `json:"scope_id"`
	Revision   *int64        `json:"revision" jsonschema:"the Memory revision read; null while nothing was committed"`
	MaxTokens  int           `json:"max_tokens"`
	UsedTokens int           `json:"used_tokens" jsonschema:"sum of the items' tokens; never above max_tokens"`
	Omitted    int           `json:"omitted" jsonschema:"items left out because they did not fit"`
	Items      []ContextItem `json:"items"`
	Mode       string        `json:"mode" jsonschema:"the ranking of the entries: fts, semantic or hybrid"`
	Degraded   bool          `json:"degraded" jsonschema:"true when q could not be embedded in time and full text ranked the entries"`
}

// ContextItem is a Memory entry (type memory) or an approved lesson (type lesson).
type ContextItem struct {
	Type            string  `json:"type" jsonschema:"memory or lesson"`
	EntryNo         int32   `json:"entry_no,omitempty"`
	EntryID         int64   `json:"entry_id,omitempty" jsonschema:"memory items: the entry's stable id (absent for an entry an older build wrote)"`
	CandidateID     string  `json:"candidate_id,omitempty"`
	Title           string  `json:"title,omitempty"`
	Content         string  `json:"content"`
	SourcePositions []int64 `json:"source_positions"`
	Score           float64 `json:"score"`
	Tokens          int     `json:"tokens"`
	// Scores are a memory item's scores by method, when it matched q.
	Scores *MethodScores `json:"scores,omitempty"`
}

// MethodScores are an entry's scores by ranking method, as on the HTTP API.
type MethodScores = types.MethodScores

func methodScores(m memory.MethodScores) *MethodScores {
	if m.FTS == nil && m.Semantic == nil {
		return nil
	}
	return &MethodScores{FTS: m.FTS, Semantic: m.Semantic}
}

// MemoryHistoryInput is the argument object of memory_history.
type MemoryHistoryInput struct {
	ScopeID string `json:"scope_id" jsonschema:"scope whose revisions to list (1..256 bytes)"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"most revisions to list (1..100, default 50)"`
}

// MemoryHistoryOutput is the result of memory_history (the answer of GET /v1/memory/revisions).
type MemoryHistoryOutput struct {
	Items      []MemoryRevision `json:"items"`
	NextCursor *string          `json:"next_cursor" jsonschema:"pass as cursor for the next page; null on the last page"`
}

// MemoryRevision is one Memory revision.
type MemoryRevision struct {
	Revision      int64     `json:"revision"`
	CreatedAt     string    `json:"created_at"`
	EntryCount    int32     `json:"entry_count"`
	WindowAfter   int64     `json:"window_after" jsonschema:"the revision consumed journal positions (window_after, window_through]"`
	WindowThrough int64     `json:"window_through"`
	OperationID   string    `json:"operation_id" jsonschema:"the memory_flush or memory_redact operation that wrote it"`
	Evicted       *Eviction `json:"evicted" jsonschema:"what the 500-entry cap dropped; null for a revision an older build wrote"`
}

// Eviction is what the 500-entry cap dropped when a revision was written, as on the HTTP API.
type Eviction = types.Eviction

func eviction(ids []int64) *Eviction {
	if ids == nil {
		return nil
	}
	return &Eviction{Count: len(ids), EntryIDs: ids}
}

// SearchMemoryInput is the argument object of search_memory.
type SearchMemoryInput struct {
	ScopeID string `json:"scope_id"`
	Q       string `json:"q"`
	Limit   *int   `json:"limit,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

// MemoryOutput is the result of get_memory and search_memory (the HTTP answer of GET /v1/memory, and of
// GET /v1/memory/search with mode and degraded).
type MemoryOutput struct {
	ScopeID   string        `json:"scope_id"`
	Revision  *int64        `json:"revision"`
	CreatedAt *string       `json:"created_at"`
	Evicted   *Eviction     `json:"evicted"`
	Entries   []MemoryEntry `json:"entries"`
	Mode      string        `json:"mode,omitempty" jsonschema:"search_memory only: the ranking that ran (fts, semantic or hybrid)"`
	Degraded  *bool         `json:"degraded,omitempty" jsonschema:"search_memory only: true when q could not be embedded in time and full text answered"`
}

// MemoryEntry is one fact with the journal positions of the sources it came from: entry_no is its place in the
// revision, entry_id its stable id in the scope (null for an entry an older build wrote).
type MemoryEntry struct {
	EntryNo         int32   `json:"entry_no"`
	EntryID         *int64  `json:"entry_id"`
	Content         string  `json:"content"`
	SourcePositions []int64 `json:"source_positions"`
	// Score is the relevance to the query (search_memory only).
	Score *float64 `json:"score,omitempty"`
	// Scores are the entry's scores by method (search_memory only).
	Scores *MethodScores `json:"scores,omitempty"`
}

// ListCandidatesInput is the argument object of list_experience_candidates.
type ListCandidatesInput struct {
	ScopeID string `json:"scope_id"`
	Status  string `json:"status,omitempty"`
}

// CandidateList is the result of list_experience_candidates.
type CandidateList struct {
	Items []Candidate `json:"items"`
}

// Candidate is one Experience candidate.
type Candidate struct {
	CandidateID    string  `json:"candidate_id"`
	ScopeID        string  `json:"scope_id"`
	OperationID    string  `json:"operation_id"`
	Title          string  `json:"title"`
	Lesson         string  `json:"lesson"`
	CitedPositions []int64 `json:"cited_positions"`
	Status         string  `json:"status"`
	StateVersion   int64   `json:"state_version"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

func (t *tools) captureSource(ctx context.Context, _ *sdk.CallToolRequest, in CaptureSourceInput) (*sdk.CallToolResult, CaptureSourceOutput, error) {
	if t.d.Journal == nil {
		return nil, CaptureSourceOutput{}, notReady("the source journal")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"source_id", in.SourceID},
		field{"source_type", in.SourceType}, field{"content", in.Content}); err != nil {
		return nil, CaptureSourceOutput{}, err
	}
	res, err := t.d.Journal.Capture(ctx, sources.CaptureRequest{ScopeID: in.ScopeID, SourceID: in.SourceID,
		SourceType: in.SourceType, Content: in.Content, Metadata: in.Metadata})
	if err != nil {
		return nil, CaptureSourceOutput{}, t.toolError(ToolCaptureSource, err)
	}
	return nil, CaptureSourceOutput{ScopeID: res.ScopeID, SourceID: res.SourceID, JournalPosition: res.JournalPosition,
		Created: res.Created}, nil
}

func (t *tools) getMemory(ctx context.Context, _ *sdk.CallToolRequest, in GetMemoryInput) (*sdk.CallToolResult, MemoryOutput, error) {
	if t.d.Memory.Store == nil {
		return nil, MemoryOutput{}, notReady("memory")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}); err != nil {
		return nil, MemoryOutput{}, err
	}
	var m memory.Memory
	var err error
	switch {
	case in.Revision != nil && *in.Revision < 1:
		return nil, MemoryOutput{}, &ToolError{Code: "invalid_request", Field: "revision", Message: "must be >= 1"}
	case in.Revision != nil:
		m, err = t.d.Memory.At(ctx, in.ScopeID, *in.Revision)
	default:
		m, err = t.d.Memory.Current(ctx, in.ScopeID)
	}
	if err != nil {
		return nil, MemoryOutput{}, t.toolError(ToolGetMemory, err)
	}
	return nil, memoryOutput(m), nil
}

func (t *tools) searchMemory(ctx context.Context, _ *sdk.CallToolRequest, in SearchMemoryInput) (*sdk.CallToolResult, MemoryOutput, error) {
	if t.d.Memory.Store == nil {
		return nil, MemoryOutput{}, notReady("memory")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"q", in.Q}); err != nil {
		return nil, MemoryOutput{}, err
	}
	limit := defaultSearchLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	m, err := t.d.Memory.SearchMode(ctx, in.ScopeID, in.Q, limit, in.Mode)
	if err != nil {
		return nil, MemoryOutput{}, t.toolError(ToolSearchMemory, err)
	}
	out := memoryOutput(m)
	out.Mode, out.Degraded = m.Mode, ptr(m.Degraded)
	return nil, out, nil
}

func (t *tools) memoryHistory(ctx context.Context, _ *sdk.CallToolRequest, in MemoryHistoryInput) (*sdk.CallToolResult, MemoryHistoryOutput, error) {
	if t.d.Memory.Store == nil {
		return nil, MemoryHistoryOutput{}, notReady("memory")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"cursor", in.Cursor}); err != nil {
		return nil, MemoryHistoryOutput{}, err
	}
	limit := defaultHistoryLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > memory.MaxHistoryLimit {
		return nil, MemoryHistoryOutput{}, &ToolError{Code: "invalid_request", Field: "limit", Message: "must be 1..100"}
	}
	var before int64
	if in.Cursor != "" {
		var err error
		if before, err = strconv.ParseInt(in.Cursor, 10, 64); err != nil || before < 1 {
			return nil, MemoryHistoryOutput{}, &ToolError{Code: "invalid_request", Field: "cursor", Message: "is malformed"}
		}
	}
	revs, err := t.d.Memory.Revisions(ctx, in.ScopeID, before, limit+1)
	if err != nil {
		return nil, MemoryHistoryOutput{}, t.toolError(ToolMemoryHistory, err)
	}
	out := MemoryHistoryOutput{Items: make([]MemoryRevision, 0, len(revs))}
	for i, r := range revs {
		if i == limit {
			out.NextCursor = ptr(strconv.FormatInt(revs[i-1].Revision, 10))
			break
		}
		out.Items = append(out.Items, MemoryRevision{Revision: r.Revision, CreatedAt: formatTime(r.CreatedAt),
			EntryCount: r.EntryCount, WindowAfter: r.WindowAfter, WindowThrough: r.WindowThrough, OperationID: r.WorkID,
			Evicted: eviction(memory.EvictedIDs(r))})
	}
	return nil, out, nil
}

func (t *tools) getContext(ctx context.Context, _ *sdk.CallToolRequest, in GetContextInput) (*sdk.CallToolResult, ContextOutput, error) {
	if t.d.Memory.Store == nil || t.d.Experience.Store == nil {
		return nil, ContextOutput{}, notReady("context assembly")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"q", in.Q}); err != nil {
		return nil, ContextOutput{}, err
	}
	maxTokens := memory.DefaultContextTokens
	if in.MaxTokens != nil {
		maxTokens = *in.MaxTokens
	}
	got, err := memory.Assembler{Memory: t.d.Memory, Lessons: t.d.Experience}.AssembleMode(ctx, in.ScopeID, in.Q, maxTokens, in.Mode)
	if err != nil {
		return nil, ContextOutput{}, t.toolError(ToolGetContext, err)
	}
	out := ContextOutput{ScopeID: got.ScopeID, MaxTokens: got.MaxTokens, UsedTokens: got.UsedTokens, Omitted: got.Omitted,
		Items: make([]ContextItem, 0, len(got.Items)), Mode: got.Mode, Degraded: got.Degraded}
	if got.Revision > 0 {
		out.Revision = ptr(got.Revision)
	}
	for _, it := range got.Items {
		out.Items = append(out.Items, ContextItem{Type: it.Kind, EntryNo: it.EntryNo, EntryID: it.EntryID, CandidateID: it.CandidateID,
			Title: it.Title, Content: it.Content, SourcePositions: positions(it.SourcePositions), Score: it.Score, Tokens: it.Tokens,
			Scores: methodScores(it.Methods)})
	}
	return nil, out, nil
}

func (t *tools) listCandidates(ctx context.Context, _ *sdk.CallToolRequest, in ListCandidatesInput) (*sdk.CallToolResult, CandidateList, error) {
	if t.d.Experience.Store == nil {
		return nil, CandidateList{}, notReady("experience")
	}
	if err := checkTexts(field{"scope_id", in.ScopeID}, field{"status", in.Status}); err != nil {
		return nil, CandidateList{}, err
	}
	rows, err := t.d.Experience.List(ctx, in.ScopeID, in.Status, defaultCandidateLimit)
	if err != nil {
		return nil, CandidateList{}, t.toolError(ToolListExperienceCandidates, err)
	}
	out := CandidateList{Items: make([]Candidate, 0, len(rows))}
	for _, r := range rows {
		out.Items = append(out.Items, candidate(r))
	}
	return nil, out, nil
}

func memoryOutput(m memory.Memory) MemoryOutput {
	out := MemoryOutput{ScopeID: m.ScopeID, Entries: make([]MemoryEntry, 0, len(m.Entries)), Evicted: eviction(m.Evicted)}
	if m.Revision > 0 {
		rev := m.Revision
		out.Revision = &rev
		if !m.CreatedAt.IsZero() {
			out.CreatedAt = ptr(formatTime(m.CreatedAt))
		}
	}
	for i, e := range m.Entries {
		entry := MemoryEntry{EntryNo: e.EntryNo, Content: e.Content, SourcePositions: positions(e.SourcePositions)}
		if e.EntryID > 0 {
			entry.EntryID = ptr(e.EntryID)
		}
		if i < len(m.Scores) {
			entry.Score = ptr(m.Scores[i])
		}
		if i < len(m.Methods) {
			entry.Scores = methodScores(m.Methods[i])
		}
		out.Entries = append(out.Entries, entry)
	}
	return out
}

func candidate(c db.ExperienceCandidate) Candidate {
	return Candidate{CandidateID: c.CandidateID, ScopeID: c.ScopeID, OperationID: c.WorkID, Title: c.Title,
		Lesson: c.Lesson, CitedPositions: positions(c.CitedPositions), Status: c.Status, StateVersion: c.StateVersion,
		CreatedAt: formatTime(c.CreatedAt), UpdatedAt: formatTime(c.UpdatedAt)}
}

// positions decodes a stored JSON array of journal positions ([] when empty or malformed).
func positions(b []byte) []int64 {
	var out []int64
	if json.Unmarshal(b, &out) != nil || out == nil {
		return []int64{}
	}
	return out
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// ToolError is a tool error a caller can act on: a bounded code, the offending field (may be empty) and a
// message. Its text is what the MCP client sees.
type ToolError struct {
	Code    string
	Field   string
	Message string
}

func (e *ToolError) Error() string {
	if e.Field != "" {
		return e.Code + ": " + e.Field + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// errInternal is the only text an unexpected failure shows.
var errInternal = &ToolError{Code: "internal_error", Message: "the request could not be completed; try again later"}

func notReady(what string) error {
	return &ToolError{Code: "runtime_not_ready", Message: what + " is not available on this process"}
}

// toolError maps a domain error: validation → invalid_request with the field; anything else is logged and
// answered with the generic internal error.
func (t *tools) toolError(tool string, err error) error {
	var ve *sources.ValidationError
	if errors.As(err, &ve) {
		return &ToolError{Code: "invalid_request", Field: ve.Field, Message: ve.Message}
	}
	if errors.Is(err, memory.ErrRevisionNotFound) {
		return &ToolError{Code: "revision_not_found", Message: "no such memory revision in that scope"}
	}
	// As the HTTP routes answer them (409 scope_erasing, 503 runtime_not_ready): a state of the scope or of the
	// database, not a failure of the server.
	if errors.Is(err, sources.ErrScopeErasing) {
		return &ToolError{Code: "scope_erasing", Message: "the scope is being erased; retry once its scope_erase operation has finished"}
	}
	if errors.Is(err, db.ErrUnavailable) {
		return &ToolError{Code: "runtime_not_ready", Message: "the database is unavailable; retry later"}
	}
	if errors.Is(err, context.Canceled) {
		return errInternal
	}
	// Error text can quote database values or Sources: log a bounded class only (docs/architecture.md#privacy).
	t.log.Error().Str("error_class", coordinator.ErrorClass(err)).Str("tool", tool).Msg("mcp tool failed")
	return errInternal
}

type field struct{ name, value string }

// checkTexts refuses NUL characters like the HTTP layer does (no engine stores NUL in a text column). JSON
// decoding already replaced invalid UTF-8.
func checkTexts(fields ...field) error {
	for _, f := range fields {
		if strings.IndexByte(f.value, 0) >= 0 {
			return &ToolError{Code: "invalid_request", Field: f.name, Message: "must not contain NUL characters"}
		}
	}
	return nil
}

// ToolNames lists the names of the tools the server registers, sorted (the documentation's tool lists are checked
// against it by internal/doccheck).
func ToolNames() []string {
	t := &tools{args: map[string]argSchema{}}
	t.register(sdk.NewServer(&sdk.Implementation{Name: "powercontext", Version: "dev"}, nil))
	out := make([]string, 0, len(t.args))
	for name := range t.args {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
