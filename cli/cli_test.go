package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/cli"
)

// fakeAPI imitates the powercontext HTTP API closely enough for the client commands.
type fakeAPI struct {
	t     *testing.T
	token string // required bearer token ("" = none)

	mu      sync.Mutex
	sources map[string]int64 // source id → position
	polls   int
	// opScript is the sequence of statuses GET /v1/operations/op-1 answers (the last one repeats).
	opScript []opStep
	requests []string
}

type opStep struct {
	status  string
	attempt int
	errCode string
}

func newFakeAPI(t *testing.T) (*fakeAPI, string) {
	api := &fakeAPI{t: t, sources: map[string]int64{}, opScript: []opStep{{"running", 1, ""}, {"running", 2, ""}, {"succeeded", 2, ""}}}
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	return api, srv.URL
}

const (
	memoryBody  = `{"scope_id":"team","revision":4,"created_at":"2026-12-02T13:00:00.123456Z","evicted":{"count":2,"entry_ids":[3,5]},"entries":[{"entry_no":1,"entry_id":7,"content":"The deploy window is Tuesday at noon.","source_positions":[1]},{"entry_no":2,"entry_id":null,"content":"Alice owns the billing service.","source_positions":[2,3]}]}`
	opsListBody = `{"items":[{"operation_id":"op-2","kind":"memory_flush","scope_id":"team","status":"failed","attempt_count":3,"state_version":5,"created_at":"2026-12-02T13:00:02.000000Z","updated_at":"2026-12-02T13:00:09.000000Z","completed_at":"2026-12-02T13:00:09.000000Z","available_at":"2026-12-02T13:00:02.000000Z","result":null,"error":{"category":"provider","code":"provider_timeout"}}],"next_cursor":"Y3Vyc29y"}`
)

func (a *fakeAPI) opRecord(step opStep) map[string]any {
	rec := map[string]any{"operation_id": "op-1", "kind": "memory_flush", "scope_id": "team", "status": step.status,
		"attempt_count": step.attempt, "state_version": step.attempt + 1, "created_at": "2026-12-02T13:00:00.000000Z",
		"updated_at": "2026-12-02T13:00:01.000000Z", "completed_at": nil, "available_at": "2026-12-02T13:00:00.000000Z",
		"result": nil, "error": nil}
	if step.status == "succeeded" {
		rec["result"] = map[string]any{"type": "memory_flush", "previous_cursor": 0, "current_cursor": 3,
			"high_watermark": 3, "processed_source_count": 3, "memory": map[string]any{"revision": 4}}
	}
	if step.errCode != "" {
		rec["error"] = map[string]any{"category": "provider", "code": step.errCode}
	}
	return rec
}

func (a *fakeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sources", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ScopeID  string          `json:"scope_id"`
			SourceID string          `json:"source_id"`
			Content  string          `json:"content"`
			Metadata json.RawMessage `json:"metadata"`
		}
		require.NoError(a.t, json.NewDecoder(r.Body).Decode(&req))
		if req.Content == "" {
			apiError(w, 422, "invalid_request", "must be 1..65536 bytes", map[string]any{"field": "content"})
			return
		}
		if req.SourceID == "" {
			req.SourceID = "generated-id"
		}
		a.mu.Lock()
		pos, seen := a.sources[req.SourceID]
		if !seen {
			pos = int64(len(a.sources) + 1)
			a.sources[req.SourceID] = pos
		}
		a.mu.Unlock()
		status := http.StatusCreated
		if seen {
			status = http.StatusOK
		}
		reply(w, status, map[string]any{"scope_id": req.ScopeID, "source_id": req.SourceID, "journal_position": pos, "created": !seen})
	})
	mux.HandleFunc("GET /v1/memory/revisions", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "team", r.URL.Query().Get("scope_id"))
		_, _ = io.WriteString(w, `{"items":[{"revision":4,"created_at":"2026-12-02T13:00:00.123456Z","entry_count":2,"window_after":2,"window_through":3,"operation_id":"op-4","evicted":{"count":7,"entry_ids":[1,2,3,4,5,6,8]}},{"revision":3,"created_at":"2026-12-02T12:00:00.123456Z","entry_count":2,"window_after":1,"window_through":2,"operation_id":"op-3","evicted":null}],"next_cursor":"3"}`)
	})
	mux.HandleFunc("GET /v1/context", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "deploy", r.URL.Query().Get("q"))
		require.Equal(a.t, "100", r.URL.Query().Get("max_tokens"))
		_, _ = io.WriteString(w, `{"scope_id":"team","revision":4,"max_tokens":100,"used_tokens":19,"omitted":1,"items":[{"type":"memory","entry_no":1,"entry_id":7,"content":"The deploy window is Tuesday at noon.","source_positions":[1],"score":1.2,"tokens":9},{"type":"lesson","candidate_id":"c-1","title":"Deploy early","content":"Start before noon.","source_positions":[2],"score":0,"tokens":10}]}`)
	})
	mux.HandleFunc("GET /v1/memory/diff", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "3", r.URL.Query().Get("from"))
		require.Equal(a.t, "", r.URL.Query().Get("to"))
		_, _ = io.WriteString(w, `{"scope_id":"team","from":3,"to":4,"added":[{"entry_no":2,"entry_id":8,"content":"Alice owns the billing service.","source_positions":[2,3]}],"removed":[{"entry_no":1,"entry_id":6,"content":"The deploy window is Monday.","source_positions":[1]}],"changed":[]}`)
	})
	mux.HandleFunc("POST /v1/memory/flush", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "respond-async", r.Header.Get("Prefer"))
		w.Header().Set("Location", "/v1/operations/op-1")
		reply(w, http.StatusAccepted, map[string]any{"operation_id": "op-1", "status": "queued", "status_url": "/v1/operations/op-1"})
	})
	mux.HandleFunc("GET /v1/operations/op-1", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		step := a.opScript[min(a.polls, len(a.opScript)-1)]
		a.polls++
		a.mu.Unlock()
		reply(w, http.StatusOK, a.opRecord(step))
	})
	mux.HandleFunc("GET /v1/operations/{id}", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, 404, "operation_not_found", "operation not found", nil)
	})
	mux.HandleFunc("GET /v1/operations", func(w http.ResponseWriter, r *http.Request) {
		raw(w, http.StatusOK, opsListBody)
	})
	mux.HandleFunc("POST /v1/operations/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, 409, "operation_conflict", "the operation is in another state or version",
			map[string]any{"operation_id": r.PathValue("id"), "status": "succeeded", "actual_version": 4})
	})
	mux.HandleFunc("POST /v1/operations/{id}/retry", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]int64
		require.NoError(a.t, json.NewDecoder(r.Body).Decode(&body))
		require.Equal(a.t, map[string]int64{"expected_version": 5}, body)
		rec := a.opRecord(opStep{"queued", 3, ""})
		rec["operation_id"] = r.PathValue("id")
		reply(w, http.StatusOK, rec)
	})
	mux.HandleFunc("POST /v1/operations/{id}/skip", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]int64
		require.NoError(a.t, json.NewDecoder(r.Body).Decode(&body))
		require.Equal(a.t, map[string]int64{"expected_version": 6}, body)
		rec := a.opRecord(opStep{"succeeded", 1, ""})
		rec["operation_id"] = r.PathValue("id")
		reply(w, http.StatusOK, rec)
	})
	mux.HandleFunc("DELETE /v1/sources/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "s/1" {
			apiError(w, 404, "source_not_found", "no such source in that scope", nil)
			return
		}
		require.Equal(a.t, "team", r.URL.Query().Get("scope_id"))
		reply(w, http.StatusAccepted, map[string]any{"scope_id": "team", "source_id": "s/1", "journal_position": 1,
			"operation_id": "op-9", "status": "queued", "status_url": "/v1/operations/op-9"})
	})
	mux.HandleFunc("DELETE /v1/scopes/{id}", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "team/a", r.PathValue("id"))
		reply(w, http.StatusAccepted, map[string]any{"scope_id": "team/a", "operation_id": "op-8", "status": "queued",
			"status_url": "/v1/operations/op-8"})
	})
	mux.HandleFunc("GET /v1/memory", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("scope_id") == "empty" {
			raw(w, http.StatusOK, `{"scope_id":"empty","revision":null,"created_at":null,"entries":[]}`)
			return
		}
		raw(w, http.StatusOK, memoryBody)
	})
	mux.HandleFunc("GET /v1/memory/search", func(w http.ResponseWriter, r *http.Request) {
		require.Equal(a.t, "billing", r.URL.Query().Get("q"))
		require.Equal(a.t, "5", r.URL.Query().Get("limit"))
		if r.URL.Query().Get("mode") == "semantic" {
			raw(w, http.StatusOK, `{"scope_id":"team","revision":4,"created_at":"2026-12-02T13:00:00.123456Z","mode":"fts","degraded":true,"entries":[{"entry_no":2,"content":"Alice owns the billing service.","source_positions":[2,3],"score":1.25,"scores":{"fts":1.25}}]}`)
			return
		}
		raw(w, http.StatusOK, `{"scope_id":"team","revision":4,"created_at":"2026-12-02T13:00:00.123456Z","entries":[{"entry_no":2,"content":"Alice owns the billing service.","source_positions":[2,3]}]}`)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.requests = append(a.requests, r.Method+" "+r.URL.Path)
		a.mu.Unlock()
		w.Header().Set("X-Request-ID", "req-1")
		if a.token != "" && r.Header.Get("Authorization") != "Bearer "+a.token {
			apiError(w, 401, "unauthorized", "missing or invalid bearer token", nil)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func reply(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	raw(w, status, string(b))
}

func raw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body+"\n")
}

func apiError(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	reply(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg, "details": details}})
}

// run executes the command line like the binary does (app.Main joins these commands to the server ones and maps
// errors to exit codes).
func run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = app.Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSourcesAdd(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	api, url := newFakeAPI(t)

	code, out, errOut := run("sources", "add", "--server", url, "--scope", "team", "--source-id", "s-1",
		"--metadata", `{"kind":"note"}`, "The deploy window is Tuesday at noon.")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "captured source s-1 in scope team at journal position 1\n", out)

	code, out, _ = run("sources", "add", "--server", url, "--scope", "team", "--source-id", "s-1", "again")
	require.Equal(t, app.ExitOK, code)
	require.Equal(t, "source s-1 was already captured in scope team at journal position 1 (unchanged)\n", out)

	code, out, _ = run("sources", "add", "--server", url, "--scope", "team", "-o", "json", "--source-id", "s-2", "x")
	require.Equal(t, app.ExitOK, code)
	require.JSONEq(t, `{"scope_id":"team","source_id":"s-2","journal_position":2,"created":true}`, out)

	// Validation errors print code, message, field and request id, and exit 4 (a 4xx answer).
	code, out, errOut = run("sources", "add", "--server", url, "--scope", "team", "")
	require.Equal(t, app.ExitClientError, code)
	require.Empty(t, out)
	require.Equal(t, "powercontext: invalid_request: must be 1..65536 bytes (field content, request id req-1)\n", errOut)

	// A token is required: the flag or the environment provides it.
	api.token = "s3cret"
	code, _, errOut = run("sources", "add", "--server", url, "--scope", "team", "x")
	require.Equal(t, app.ExitClientError, code)
	require.Contains(t, errOut, "unauthorized: missing or invalid bearer token (request id req-1); pass --token or set POWERCONTEXT_AUTH_TOKEN")
	code, _, errOut = run("sources", "add", "--server", url, "--token", "s3cret", "--scope", "team", "x")
	require.Equal(t, app.ExitOK, code, errOut)
	t.Setenv(cli.EnvAuthToken, "s3cret")
	t.Setenv(cli.EnvServerURL, url)
	code, _, errOut = run("sources", "add", "--scope", "team", "y")
	require.Equal(t, app.ExitOK, code, errOut)
}

func TestSourcesDeleteAndScopesErase(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	_, url := newFakeAPI(t)
	code, out, errOut := run("sources", "delete", "--server", url, "--scope", "team", "s/1")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "forgot source s/1 of scope team (journal position 1); operation op-9 removes it from Memory (queued)\n", out)
	code, _, errOut = run("sources", "delete", "--server", url, "--scope", "team", "nope")
	require.Equal(t, app.ExitClientError, code)
	require.Contains(t, errOut, "source_not_found")
	code, _, errOut = run("sources", "delete", "--server", url, "s/1")
	require.Equal(t, app.ExitConfig, code, errOut)
	code, out, errOut = run("scopes", "erase", "--server", url, "team/a")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "erasing scope team/a: operation op-8 (queued)\n", out)
}

func TestSourcesAddFromStdin(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	_, url := newFakeAPI(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	_, err = w.WriteString("line one\nline two\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = old; r.Close() })

	code, out, errOut := run("sources", "add", "--server", url, "--scope", "team", "-")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "captured source generated-id in scope team at journal position 1\n", out)
}

func TestMemoryFlushShowsLiveStatus(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	api, url := newFakeAPI(t)
	// Not a terminal (a buffer, as in a pipe): no status line at all, the result alone.
	code, out, errOut := run("memory", "flush", "--server", url, "--scope", "team", "--poll", "1ms")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "flushed 3 sources of scope team: journal 0 → 3 of 3; memory revision 4 (operation op-1)\n", out)
	require.Empty(t, errOut)

	// A terminal: the live line, finished with a newline before the result is printed.
	orig := cli.IsTerminal
	cli.IsTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { cli.IsTerminal = orig })
	api.polls = 0
	code, out, errOut = run("memory", "flush", "--server", url, "--scope", "team", "--poll", "1ms")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, "flushed 3 sources of scope team: journal 0 → 3 of 3; memory revision 4 (operation op-1)\n", out)
	require.Contains(t, errOut, "\roperation op-1: queued")
	require.Contains(t, errOut, "\roperation op-1: running (attempt 1)")
	require.Contains(t, errOut, "\roperation op-1: running (attempt 2)")
	require.True(t, strings.HasSuffix(errOut, "\n"))
	require.Equal(t, 3, api.polls)

	api.polls = 0
	code, out, _ = run("memory", "flush", "--server", url, "--scope", "team", "--poll", "1ms", "--output", "json")
	require.Equal(t, app.ExitOK, code)
	require.JSONEq(t, `{"status":"processed","previous_cursor":0,"current_cursor":3,"high_watermark":3,
		"processed_source_count":3,"memory":{"revision":4},"operation_id":"op-1"}`, out)
}

func TestMemoryFlushPendingAndFailed(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	api, url := newFakeAPI(t)
	api.opScript = []opStep{{"running", 1, ""}}
	code, out, errOut := run("memory", "flush", "--server", url, "--scope", "team", "--poll", "5ms", "--deadline", "60ms")
	require.Equal(t, app.ExitPending, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "powercontext: operation op-1 is still running when --deadline 60ms passed; it continues "+
		"on the server; follow it with: powercontext ops get op-1\n")

	// retry_wait is said in words.
	api.polls = 0
	api.opScript = []opStep{{"retry_wait", 1, "provider_timeout"}}
	code, _, errOut = run("memory", "flush", "--server", url, "--scope", "team", "--poll", "5ms", "--deadline", "60ms")
	require.Equal(t, app.ExitPending, code)
	require.Contains(t, errOut, "powercontext: operation op-1 is still waiting to retry after a failed attempt "+
		"(retry_wait) when --deadline 60ms passed;")

	api.polls = 0
	api.opScript = []opStep{{"running", 1, ""}, {"failed", 3, "provider_timeout"}}
	code, _, errOut = run("memory", "flush", "--server", url, "--scope", "team", "--poll", "1ms")
	require.Equal(t, app.ExitFailed, code)
	require.Contains(t, errOut, "powercontext: operation op-1 failed: provider/provider_timeout (see: powercontext ops get op-1)\n")
}

func TestMemoryShowAndSearch(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	_, url := newFakeAPI(t)
	code, out, errOut := run("memory", "show", "--server", url, "--scope", "team")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, `scope team, memory revision 4 (2026-12-02 13:00:00Z): 2 entries
evicted by the entry cap: 2 (ids 3,5)
#  ID  SOURCES  CONTENT
1  7   1        The deploy window is Tuesday at noon.
2  -   2,3      Alice owns the billing service.
`, out)

	code, out, _ = run("memory", "show", "--server", url, "--scope", "team", "--output", "json")
	require.Equal(t, app.ExitOK, code)
	require.Equal(t, memoryBody+"\n", out, "json output is the server's JSON")

	code, out, _ = run("memory", "show", "--server", url, "--scope", "empty")
	require.Equal(t, app.ExitOK, code)
	require.Contains(t, out, "scope empty has no memory yet")

	code, out, errOut = run("memory", "search", "--server", url, "--scope", "team", "--limit", "5", "billing")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, `1 entry matching "billing"`)
	require.Contains(t, out, "2  -   2,3      Alice owns the billing service.")
	require.NotContains(t, out, "evicted", "a search lists matches only")

	code, out, errOut = run("memory", "search", "--server", url, "--scope", "team", "--limit", "5", "--mode", "semantic", "billing")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "ranking: fts (degraded: the query could not be embedded in time, full text answered)\n")
	require.Contains(t, out, "#  ID  SCORE  FTS   SEMANTIC  SOURCES  CONTENT\n2  -   1.25   1.25  -         2,3      Alice owns the billing service.")
}

func TestMemoryHistoryAndDiff(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	_, url := newFakeAPI(t)
	code, out, errOut := run("memory", "history", "--server", url, "--scope", "team")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "REVISION  CREATED               ENTRIES  WINDOW  OPERATION ID  EVICTED\n"+
		"4         2026-12-02 13:00:00Z  2        (2, 3]  op-4          7 (ids 1,2,3,4,5,…)\n"+
		"3         2026-12-02 12:00:00Z  2        (1, 2]  op-3          -\n")
	require.Contains(t, out, "next page: --cursor 3\n")

	code, out, errOut = run("memory", "diff", "--server", url, "--scope", "team", "--from", "3")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "scope team, memory revision 3 -> 4: 1 added, 1 removed, 0 changed\n")
	require.Contains(t, out, "+  2  8   2,3      Alice owns the billing service.")
	require.Contains(t, out, "-  1  6   1        The deploy window is Monday.")

	code, out, errOut = run("memory", "context", "--server", url, "--scope", "team", "--max-tokens", "100", "deploy")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "scope team: 2 items, 19 of 100 tokens (1 left out)\n")
	require.Contains(t, out, "memory  7   9       1        The deploy window is Tuesday at noon.")
	require.Contains(t, out, "lesson  -   10      2        Deploy early: Start before noon.")
}

func TestOps(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	_, url := newFakeAPI(t)
	code, out, errOut := run("ops", "list", "--server", url, "--scope", "team", "--status", "failed")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "OPERATION ID  KIND          SCOPE  STATUS  ATTEMPTS  VERSION  CREATED               ERROR")
	require.Contains(t, out, "op-2          memory_flush  team   failed  3         5        2026-12-02 13:00:02Z  provider/provider_timeout")
	require.Contains(t, out, "next page: --cursor Y3Vyc29y\n")

	code, out, _ = run("ops", "list", "--server", url, "-o", "json")
	require.Equal(t, app.ExitOK, code)
	require.Equal(t, opsListBody+"\n", out)

	code, out, errOut = run("ops", "get", "--server", url, "op-1")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "operation  op-1\n")
	require.Contains(t, out, "status     running\n")

	code, _, errOut = run("ops", "get", "--server", url, "nope")
	require.Equal(t, app.ExitClientError, code)
	require.Equal(t, "powercontext: operation_not_found: operation not found (request id req-1)\n", errOut)

	code, _, errOut = run("ops", "cancel", "--server", url, "op-9", "--expected-version", "3")
	require.Equal(t, app.ExitClientError, code)
	require.Equal(t, "powercontext: operation_conflict: the operation is in another state or version (request id req-1); "+
		"it is succeeded at version 4\n", errOut)

	code, out, errOut = run("ops", "retry", "--server", url, "op-7", "--expected-version", "5")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "operation  op-7\n")
	require.Contains(t, out, "status     queued\n")

	code, out, errOut = run("ops", "skip", "--server", url, "op-8", "--expected-version", "6")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "operation  op-8\n")
	require.Contains(t, out, "status     succeeded\n")
}

func TestClientCommandsRefuseBadFlags(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	api, url := newFakeAPI(t)
	for _, args := range [][]string{
		{"sources", "add", "--server", url, "content"},                                // --scope missing
		{"sources", "add", "--server", url, "--scope", "s"},                           // CONTENT missing
		{"sources", "add", "--server", url, "--scope", "s", "a", "b"},                 // too many
		{"sources", "add", "--server", url, "--scope", "s", "--metadata", "[1]", "x"}, // not an object
		{"sources", "add", "--server", url, "--scope", "s", "--output", "yaml", "x"},  // bad output
		{"sources", "add", "--server", "127.0.0.1:8080", "--scope", "s", "x"},         // no scheme
		{"memory", "flush", "--server", url},                                          // --scope missing
		{"memory", "search", "--server", url, "--scope", "s"},                         // QUERY missing
		{"memory", "search", "--server", url, "--scope", "s", "--limit", "many", "q"}, // not an int
		{"ops", "list", "--server", url, "--bogus"},                                   // unknown flag
		{"ops", "get", "--server", url},                                               // ID missing
		{"ops", "cancel", "--server", url, "op-1"},                                    // version missing
		{"ops", "retry", "--server", url, "op-1", "--expected-version", "0"},          // version < 1
		{"ops", "frobnicate", "--server", url},                                        // unknown subcommand
		{"memory", "flush", "--server", url, "--scope", "s", "--deadline", "soon"},    // bad duration
	} {
		code, out, errOut := run(args...)
		require.Equal(t, app.ExitConfig, code, "%v: %s", args, errOut)
		require.Empty(t, out)
		require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
	require.Empty(t, api.requests, "nothing was sent")
}

func TestUnreachableServer(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	for _, args := range [][]string{
		{"sources", "add", "--server", url, "--scope", "s", "x"},
		{"memory", "flush", "--server", url, "--scope", "s"},
		{"memory", "show", "--server", url, "--scope", "s"},
		{"ops", "list", "--server", url},
	} {
		code, out, errOut := run(args...)
		require.Equal(t, app.ExitUnreachable, code)
		require.Empty(t, out)
		// Not the default local URL: no "make run" hint.
		require.Equal(t, "powercontext: cannot reach powercontext at "+url+": is the server running?\n", errOut)
	}
	// The environment's address is used when --server does not name one.
	t.Setenv(cli.EnvServerURL, url)
	code, _, errOut := run("ops", "list")
	require.Equal(t, app.ExitUnreachable, code)
	require.Contains(t, errOut, "cannot reach powercontext at "+url)
}

func TestEveryClientCommandHasHelpWithExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	var paths [][]string
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			// server, version and completion run locally: they take no --server.
			if sub.Name() == "help" || sub.Name() == "server" || sub.Name() == "version" || sub.Name() == "completion" {
				continue
			}
			paths = append(paths, strings.Fields(sub.CommandPath())[1:])
			walk(sub)
		}
	}
	walk(app.NewRootCommand())
	require.GreaterOrEqual(t, len(paths), 12)
	for _, p := range paths {
		code, out, errOut := run(append(p, "--help")...)
		require.Equal(t, app.ExitOK, code, "%v: %s", p, errOut)
		require.Contains(t, out, "Examples:", p)
		require.Contains(t, out, "--server", p)
	}
}
