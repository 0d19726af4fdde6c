package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

func deps(s db.Store, log zerolog.Logger) mcp.Deps {
	return mcp.Deps{Journal: sources.NewJournal(s), Memory: memory.Reader{Store: s},
		Experience: experience.Reviews{Store: s}, Skills: &skills.Service{Store: s}, Logger: log, Version: "test"}
}

// rpc posts JSON-RPC requests to one MCP endpoint, never sending a session id.
type rpc struct {
	t  *testing.T
	id atomic.Int64
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	header http.Header
}

func (r *rpc) call(url, method string, params any) rpcResponse {
	r.t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id.Add(1), "method": method, "params": params})
	require.NoError(r.t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(r.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	require.Equal(r.t, http.StatusOK, resp.StatusCode, string(raw))
	require.Empty(r.t, resp.Header.Get("Mcp-Session-Id"), "a stateless server issues no session")
	var out rpcResponse
	require.NoError(r.t, json.Unmarshal(raw, &out), string(raw))
	out.header = resp.Header
	return out
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r *rpc) tool(url, name string, args any) toolResult {
	r.t.Helper()
	resp := r.call(url, "tools/call", map[string]any{"name": name, "arguments": args})
	require.Nil(r.t, resp.Error, "tool failures are tool results, not protocol errors")
	var res toolResult
	require.NoError(r.t, json.Unmarshal(resp.Result, &res))
	require.NotEmpty(r.t, res.Content)
	return res
}

func (r *rpc) ok(url, name string, args, out any) {
	r.t.Helper()
	res := r.tool(url, name, args)
	require.False(r.t, res.IsError, res.Content[0].Text)
	require.NoError(r.t, json.Unmarshal(res.StructuredContent, out))
}

// replicas starts two stateless MCP handlers — two "API replicas" — over one store.
func replicas(t *testing.T, s db.Store, log zerolog.Logger) (a, b string) {
	t.Helper()
	srvA := httptest.NewServer(mcp.NewHandler(deps(s, log), true))
	t.Cleanup(srvA.Close)
	srvB := httptest.NewServer(mcp.NewHandler(deps(s, log), true))
	t.Cleanup(srvB.Close)
	return srvA.URL, srvB.URL
}

// flush runs the scope's next memory window to completion the way a worker does.
func flush(t *testing.T, s db.Store, scope string) {
	t.Helper()
	ctx := context.Background()
	ledger := coordinator.NewLedger(s)
	_, err := ledger.Enqueue(ctx, memory.Consumer(3).EnqueueRequest(scope))
	require.NoError(t, err)
	h := &memory.Handler{Store: s, Provider: provider.NewLocal()}
	res, err := ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "test-worker",
		Supported: coordinator.Supported{h.Kind(): h.PayloadVersions()}, Slots: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, res.Claims, 1)
	p, err := h.Prepare(ctx, res.Claims[0].Item)
	require.NoError(t, err)
	_, err = ledger.Complete(ctx, res.Claims[0], p.Result, p.Commit)
	require.NoError(t, err)
}

func TestStatelessReplicasShareOneStore(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	a, b := replicas(t, s, zerolog.Nop())
	r := &rpc{t: t}

	// tools/list: exactly the four tools, on either replica, without initialize or a session.
	for _, url := range []string{a, b} {
		resp := r.call(url, "tools/list", map[string]any{})
		require.Nil(t, resp.Error)
		var list struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &list))
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			require.Equal(t, "object", tool.InputSchema["type"])
		}
		require.ElementsMatch(t, []string{"capture_source", "get_memory", "search_memory", "list_experience_candidates",
			"memory_history", "get_context", "flush_memory", "incubate_experience", "get_operation", "list_sources",
			"list_skills", "get_skill"}, names)
	}

	// Capture on A, read on B, alternately.
	var captured mcp.CaptureSourceOutput
	r.ok(a, "capture_source", map[string]any{"scope_id": "team", "source_id": "s-1",
		"content": "The deploy window is Tuesday at noon.", "metadata": map[string]any{"kind": "note"}}, &captured)
	require.Equal(t, mcp.CaptureSourceOutput{ScopeID: "team", SourceID: "s-1", JournalPosition: 1, Created: true}, captured)

	var again mcp.CaptureSourceOutput
	r.ok(b, "capture_source", map[string]any{"scope_id": "team", "source_id": "s-1", "content": "ignored"}, &again)
	require.Equal(t, mcp.CaptureSourceOutput{ScopeID: "team", SourceID: "s-1", JournalPosition: 1, Created: false}, again)

	r.ok(a, "capture_source", map[string]any{"scope_id": "team", "content": "Alice owns the billing service."}, &captured)
	require.Equal(t, int64(2), captured.JournalPosition)
	require.NotEmpty(t, captured.SourceID)

	var mem mcp.MemoryOutput
	r.ok(b, "get_memory", map[string]any{"scope_id": "team"}, &mem)
	require.Nil(t, mem.Revision, "nothing flushed yet")
	require.Empty(t, mem.Entries)

	flush(t, s, "team")

	r.ok(b, "get_memory", map[string]any{"scope_id": "team"}, &mem)
	require.NotNil(t, mem.Revision)
	require.Equal(t, int64(1), *mem.Revision)
	require.NotNil(t, mem.CreatedAt)
	require.Len(t, mem.Entries, 2)
	require.Equal(t, []int64{1}, mem.Entries[0].SourcePositions)
	require.Equal(t, []*int64{ptr(int64(1)), ptr(int64(2))}, []*int64{mem.Entries[0].EntryID, mem.Entries[1].EntryID})
	require.Equal(t, &mcp.Eviction{Count: 0, EntryIDs: []int64{}}, mem.Evicted)

	var found mcp.MemoryOutput
	r.ok(a, "search_memory", map[string]any{"scope_id": "team", "q": "BILLING", "limit": 5}, &found)
	require.Len(t, found.Entries, 1)
	require.Contains(t, found.Entries[0].Content, "billing")
	require.NotNil(t, found.Entries[0].Score)
	require.Equal(t, "fts", found.Mode, "no embedder on these replicas: full text")
	require.NotNil(t, found.Degraded)
	require.False(t, *found.Degraded)
	require.NotNil(t, found.Entries[0].Scores)
	require.Equal(t, found.Entries[0].Score, found.Entries[0].Scores.FTS)
	require.Nil(t, found.Entries[0].Scores.Semantic)
	r.ok(a, "search_memory", map[string]any{"scope_id": "team", "q": "BILLING", "mode": "semantic"}, &found)
	require.Equal(t, "fts", found.Mode, "a vector mode without vectors answers with full text")

	var hist mcp.MemoryHistoryOutput
	r.ok(a, "memory_history", map[string]any{"scope_id": "team"}, &hist)
	require.Len(t, hist.Items, 1)
	require.Nil(t, hist.NextCursor)
	require.Equal(t, int64(1), hist.Items[0].Revision)
	require.Equal(t, int64(2), hist.Items[0].WindowThrough)
	require.NotEmpty(t, hist.Items[0].OperationID)
	require.Equal(t, &mcp.Eviction{Count: 0, EntryIDs: []int64{}}, hist.Items[0].Evicted)
	var r1 mcp.MemoryOutput
	r.ok(b, "get_memory", map[string]any{"scope_id": "team", "revision": 1}, &r1)
	require.Equal(t, mem.Entries, r1.Entries)
	var cx mcp.ContextOutput
	r.ok(a, "get_context", map[string]any{"scope_id": "team", "q": "billing", "max_tokens": 100}, &cx)
	require.LessOrEqual(t, cx.UsedTokens, 100)
	require.NotEmpty(t, cx.Items)
	require.Equal(t, "memory", cx.Items[0].Type)
	require.Contains(t, cx.Items[0].Content, "billing")
	require.Equal(t, []int64{2}, cx.Items[0].SourcePositions)
	require.Equal(t, int64(2), cx.Items[0].EntryID)
	require.Equal(t, "fts", cx.Mode)
	require.False(t, cx.Degraded)
	require.NotNil(t, cx.Items[0].Scores)
	res := r.tool(b, "get_memory", map[string]any{"scope_id": "team", "revision": 7})
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].Text, "revision_not_found")

	var cands mcp.CandidateList
	r.ok(b, "list_experience_candidates", map[string]any{"scope_id": "team", "status": "pending"}, &cands)
	require.NotNil(t, cands.Items)
	require.Empty(t, cands.Items)

	// The text content carries the same JSON for clients that ignore structuredContent.
	res = r.tool(a, "get_memory", map[string]any{"scope_id": "team"})
	require.JSONEq(t, string(res.StructuredContent), res.Content[0].Text)
}

func TestValidationErrorsAreToolErrors(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	a, b := replicas(t, s, zerolog.Nop())
	r := &rpc{t: t}
	// Each refusal names the code and the field, then the domain's message (not repeated here, so the domain may
	// refine its wording).
	for i, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"capture_source", map[string]any{"scope_id": "team", "content": ""}, "invalid_request: content: must be 1..65536 bytes"},
		{"capture_source", map[string]any{"scope_id": strings.Repeat("x", 257), "content": "c"}, "invalid_request: scope_id: "},
		{"capture_source", map[string]any{"scope_id": "team", "content": "a\x00b"}, "invalid_request: content: "},
		{"capture_source", map[string]any{"scope_id": "team", "content": "c", "source_type": strings.Repeat("t", 65)}, "invalid_request: source_type: "},
		{"get_memory", map[string]any{"scope_id": ""}, "invalid_request: scope_id: "},
		{"search_memory", map[string]any{"scope_id": "team", "q": "x", "limit": 0}, "invalid_request: limit: must be 1..100"},
		{"search_memory", map[string]any{"scope_id": "team", "q": ""}, "invalid_request: q: "},
		{"get_context", map[string]any{"scope_id": "team", "mode": "vector"}, "invalid_request: mode: must be fts, semantic or hybrid"},
		{"list_experience_candidates", map[string]any{"scope_id": "team", "status": "maybe"}, "invalid_request: status: must be pending, approved, rejected or withdrawn"},
	} {
		url := a // alternate the replicas
		if i%2 == 1 {
			url = b
		}
		res := r.tool(url, tc.tool, tc.args)
		require.True(t, res.IsError, tc.want)
		require.True(t, strings.HasPrefix(res.Content[0].Text, tc.want), "%s: got %q", tc.want, res.Content[0].Text)
		require.Greater(t, len(res.Content[0].Text), len("invalid_request: x: "))
		require.Empty(t, res.StructuredContent)
	}

	// Arguments that do not match the input schema are tool errors too, in the same form.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"scope_id": "team"}, "invalid_request: content: is required"},
		{map[string]any{"scope_id": "team", "content": "c", "metadata": "no"}, "invalid_request: metadata: must be a JSON object"},
		{map[string]any{"scope_id": "team", "content": "c", "surprise": true}, "invalid_request: surprise: is not an argument of this tool"},
	} {
		res := r.tool(a, "capture_source", tc.args)
		require.True(t, res.IsError)
		require.Equal(t, tc.want, res.Content[0].Text)
	}
	var mem mcp.MemoryOutput
	r.ok(b, "get_memory", map[string]any{"scope_id": "team"}, &mem)
	require.Nil(t, mem.Revision, "refused captures wrote nothing")
}

// failingStore fails every Memory read with an error whose text must never reach a client.
type failingStore struct{ db.Store }

var errSecret = errors.New("pq: connection to 10.0.0.7 failed for user admin")

func (failingStore) MemoryRevisionLatest(context.Context, string) (db.MemoryRevision, error) {
	return db.MemoryRevision{}, errSecret
}

func TestInternalErrorsAreGeneric(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	var logs bytes.Buffer
	srv := httptest.NewServer(mcp.NewHandler(deps(failingStore{s}, zerolog.New(&logs)), true))
	t.Cleanup(srv.Close)
	r := &rpc{t: t}
	res := r.tool(srv.URL, "get_memory", map[string]any{"scope_id": "team"})
	require.True(t, res.IsError)
	require.Equal(t, "internal_error: the request could not be completed; try again later", res.Content[0].Text)
	require.NotContains(t, fmt.Sprint(res), "10.0.0.7")
	require.Contains(t, logs.String(), `"tool":"get_memory"`)
	require.Contains(t, logs.String(), `"message":"mcp tool failed"`)
	require.NotContains(t, logs.String(), "10.0.0.7", "error text never reaches the log (docs/architecture.md#privacy)")
	require.Contains(t, logs.String(), `"error_class":"*errors.errorString"`)
}

func TestUnconfiguredDepsAnswerNotReady(t *testing.T) {
	srv := httptest.NewServer(mcp.NewHandler(mcp.Deps{}, true))
	t.Cleanup(srv.Close)
	r := &rpc{t: t}
	res := r.tool(srv.URL, "capture_source", map[string]any{"scope_id": "team", "content": "c"})
	require.True(t, res.IsError)
	require.Equal(t, "runtime_not_ready: the source journal is not available on this process", res.Content[0].Text)
}

func TestStatelessRefusesStreamsAndStatefulIssuesSessions(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	stateless := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), true))
	t.Cleanup(stateless.Close)
	resp, err := http.Get(stateless.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	stateful := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), false))
	t.Cleanup(stateful.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, stateful.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
}

// An SDK client works against the stateless server like any MCP client would.
func TestSDKClientAgainstStatelessServer(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	a, _ := replicas(t, s, zerolog.Nop())
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	session, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	tools, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 12)
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "capture_source",
		Arguments: map[string]any{"scope_id": "sdk", "content": "hello"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	out, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Contains(t, string(out), `"journal_position":1`)
}

// TestTransportErrorsUseTheErrorShape: the SDK answers transport mistakes (wrong Accept, missing or unknown session,
// wrong method) with plain text; the handler turns each into {"error":{"code","message","details"}} with the same
// status, while JSON-RPC error answers stay JSON-RPC for MCP clients to parse.
func TestTransportErrorsUseTheErrorShape(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	stateful := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), false))
	t.Cleanup(stateful.Close)
	stateless := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), true))
	t.Cleanup(stateless.Close)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	do := func(method, url, body string, h map[string]string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, raw
	}
	both := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	for _, tc := range []struct {
		name, method, url, body string
		h                       map[string]string
		status                  int
		code                    string
	}{
		{"no accept", http.MethodPost, stateful.URL, init, map[string]string{"Content-Type": "application/json"}, 400, "invalid_request"},
		{"text body", http.MethodPost, stateful.URL, init, map[string]string{"Content-Type": "text/plain", "Accept": both["Accept"]}, 415, "unsupported_media_type"},
		{"get without session", http.MethodGet, stateful.URL, "", map[string]string{"Accept": "text/event-stream"}, 400, "invalid_request"},
		{"unknown session", http.MethodPost, stateful.URL, init, map[string]string{"Content-Type": "application/json", "Accept": both["Accept"], "Mcp-Session-Id": "nope"}, 404, "not_found"},
		{"put", http.MethodPut, stateful.URL, "", nil, 405, "method_not_allowed"},
		{"stateless get", http.MethodGet, stateless.URL, "", nil, 405, "method_not_allowed"},
		{"malformed", http.MethodPost, stateless.URL, `{"jsonrpc":`, both, 400, "invalid_request"},
	} {
		status, h, raw := do(tc.method, tc.url, tc.body, tc.h)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, raw)
		require.Equal(t, "application/json", h.Get("Content-Type"), tc.name)
		var env struct {
			Error struct {
				Code    string          `json:"code"`
				Message string          `json:"message"`
				Details json.RawMessage `json:"details"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(raw, &env), "%s: %s", tc.name, raw)
		require.Equal(t, tc.code, env.Error.Code, tc.name)
		require.NotEmpty(t, env.Error.Message, tc.name)
		require.NotNil(t, env.Error.Details, tc.name)
	}
	// A JSON-RPC level refusal stays a JSON-RPC answer.
	status, _, raw := do(http.MethodPost, stateless.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, both)
	require.Equal(t, http.StatusOK, status, string(raw))
	require.Contains(t, string(raw), `"jsonrpc":"2.0"`)
	require.Contains(t, string(raw), `"error":{"code":-32602,"message":"unknown tool"}`)
}

// TestSessionCapEvictsTheLeastRecentlyUsed: a stateful server keeps at most MaxSessions sessions; a new session
// beyond the cap closes the one idle the longest, whose next request is 404 (the client initializes again).
func TestSessionCapEvictsTheLeastRecentlyUsed(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	d := deps(s, zerolog.Nop())
	d.MaxSessions = 3
	srv := httptest.NewServer(mcp.NewHandler(d, false))
	t.Cleanup(srv.Close)
	post := func(session, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	open := func() string {
		t.Helper()
		code, id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		require.Equal(t, http.StatusOK, code)
		require.NotEmpty(t, id)
		code, _ = post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Equal(t, http.StatusAccepted, code)
		return id
	}
	alive := func(id string) bool {
		t.Helper()
		code, _ := post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, code)
		return code == http.StatusOK
	}
	a, b, c := open(), open(), open()
	require.True(t, alive(a)) // a is now the most recently used; b the least
	dd := open()
	require.False(t, alive(b), "the least recently used session is evicted")
	for _, id := range []string{a, c, dd} {
		require.True(t, alive(id))
	}
	e := open()
	require.False(t, alive(a))
	for _, id := range []string{c, dd, e} {
		require.True(t, alive(id))
	}
}

// asPrincipal serves h as the HTTP layer does after authenticating a bearer token as p.
func asPrincipal(h http.Handler, p *auth.Principal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer the-token-the-http-layer-checked")
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

// TestScopesOfTheCaller: a tool call naming a scope outside the caller's allowed prefixes is the forbidden tool
// error naming scope_id, exactly like the 403 over HTTP; in-scope calls work; an unrestricted caller uses any scope.
func TestScopesOfTheCaller(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	specs, err := auth.ParseTokens([]byte(`[{"name":"team-a","role":"agent","token":"` + strings.Repeat("a", 32) + `","scopes":["team-a/"]},
		{"name":"ops","role":"admin","token":"` + strings.Repeat("o", 32) + `"}]`))
	require.NoError(t, err)
	set, err := auth.NewSet(specs)
	require.NoError(t, err)
	teamA, _ := set.ByName("team-a")
	ops, _ := set.ByName("ops")
	for _, stateless := range []bool{true, false} {
		h := mcp.NewHandler(deps(s, zerolog.Nop()), stateless)
		agent := httptest.NewServer(asPrincipal(h, teamA))
		t.Cleanup(agent.Close)
		admin := httptest.NewServer(asPrincipal(h, ops))
		t.Cleanup(admin.Close)
		ctx := context.Background()
		connect := func(url string) *sdk.ClientSession {
			c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}
		a, o := connect(agent.URL), connect(admin.URL)
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"capture_source", map[string]any{"scope_id": "team-b/x", "content": "not yours"}},
			{"get_memory", map[string]any{"scope_id": "team-b/x"}},
			{"search_memory", map[string]any{"scope_id": "team-ab", "q": "x"}},
			{"list_experience_candidates", map[string]any{"scope_id": "team-b/x"}},
		} {
			res, err := a.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			require.NoError(t, err)
			require.True(t, res.IsError, tc.tool)
			require.Equal(t, "forbidden: scope_id: this token may not use that scope", res.Content[0].(*sdk.TextContent).Text, tc.tool)
		}
		res, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "capture_source", Arguments: map[string]any{"scope_id": "team-a/x", "content": "mine"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		res, err = o.CallTool(ctx, &sdk.CallToolParams{Name: "get_memory", Arguments: map[string]any{"scope_id": "team-b/x"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCaptureIntoAnErasingScope: capture_source into a scope whose erase is live is the tool error scope_erasing, as
// HTTP's 409, not the generic internal error.
func TestCaptureIntoAnErasingScope(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	a, _ := replicas(t, s, zerolog.Nop())
	r := &rpc{t: t}
	var out map[string]any
	r.ok(a, "capture_source", map[string]any{"scope_id": "team", "content": "x"}, &out)
	_, err := (&lifecycle.Eraser{Ledger: coordinator.NewLedger(s), MaxAttempts: 3}).Erase(context.Background(), "team", "ops")
	require.NoError(t, err)
	res := r.tool(a, "capture_source", map[string]any{"scope_id": "team", "content": "late"})
	require.True(t, res.IsError)
	require.True(t, strings.HasPrefix(res.Content[0].Text, "scope_erasing: "), res.Content[0].Text)
}
