package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/errclass"
)

const testKey = "sk-test-key"

func requireFailure(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, errclass.Error{Category: errclass.CategoryProvider, Code: code, Retryable: code != errclass.CodeRequestRejected},
		errclass.Classify(err))
}

// testTimeout is the per-call timeout of the test clients: long enough that no answer of a local test server
// reaches it on a loaded machine. Only the cases about a slow upstream use shortTimeout, because there the timeout
// is the thing under test (and firing late only makes them slower).
const (
	testTimeout  = time.Minute
	shortTimeout = 200 * time.Millisecond
)

func newTestOpenAI(t *testing.T, url, key string) *OpenAI {
	t.Helper()
	return newTestOpenAIWithin(t, url, key, testTimeout)
}

func newTestOpenAIWithin(t *testing.T, url, key string, timeout time.Duration) *OpenAI {
	t.Helper()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: url + "/v1", Model: "test-model", APIKey: key, Timeout: timeout})
	require.NoError(t, err)
	return o
}

// endless answers 200 with a body that never ends: only a client that stops reading at its byte cap returns
// before its (long) timeout.
func endless(w http.ResponseWriter, r *http.Request) {
	chunk := []byte(strings.Repeat(" ", 32<<10))
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// chatBody wraps content as a chat-completions response.
func chatBody(t *testing.T, content string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	require.NoError(t, err)
	return b
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func memoryReq() ExtractMemoryRequest {
	return ExtractMemoryRequest{
		ScopeID:  "scope-a",
		Existing: []MemoryEntry{{ID: 1, Content: "The service uses Go.", SourcePositions: []int64{1}}},
		Window: []Source{
			{Position: 5, Type: "message", Content: "We use Go. Deploys are on Friday."},
			{Position: 6, Type: "tool_result", Content: "SQLite is the default engine."},
		},
	}
}

func TestOpenAIConfig(t *testing.T) {
	_, err := NewOpenAI(OpenAIConfig{BaseURL: "not a url", Model: "m"})
	require.ErrorIs(t, err, ErrBaseURL)
	_, err = NewOpenAI(OpenAIConfig{BaseURL: "http://host/v1", Model: " "})
	require.ErrorIs(t, err, ErrModel)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: "http://host/v1/", Model: "m"})
	require.NoError(t, err)
	require.Equal(t, "openai", o.Name())
	require.Equal(t, "http://host/v1/chat/completions", o.endpoint)
	require.Equal(t, DefaultOpenAITimeout, o.timeout)
}

// TestOpenAIExtractMemoryOps: the request carries the current entries with their ids and asks for a strict
// JSON-schema answer of operations; the answer's add, update and remove operations are checked and, applied, keep
// the ids of updated entries, drop removed ones and number added ones after the last id.
func TestOpenAIExtractMemoryOps(t *testing.T) {
	var mu sync.Mutex
	var got struct {
		method, path, auth string
		body               map[string]any
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		got.method, got.path, got.auth = r.Method, r.URL.Path, r.Header.Get("Authorization")
		_ = json.Unmarshal(raw, &got.body)
		mu.Unlock()
		_, _ = w.Write(chatBody(t, `{"operations":[`+
			`{"op":"update","entry_id":1,"content":"the service uses go","source_positions":[5]},`+
			`{"op":"update","entry_id":7,"content":"Staging uses PostgreSQL 17.","source_positions":[6]},`+
			`{"op":"remove","entry_id":3,"content":null,"source_positions":[6]},`+
			`{"op":"add","entry_id":null,"content":"Deploys are on Friday.","source_positions":[5]},`+
			`{"op":"add","entry_id":null,"content":" SQLite  is the default engine. ","source_positions":[6,6]}]}`))
	})
	req := memoryReq()
	req.Existing = append(req.Existing,
		MemoryEntry{ID: 3, Content: "Deploys are frozen.", SourcePositions: []int64{2}},
		MemoryEntry{ID: 7, Content: "Staging uses PostgreSQL 16.", SourcePositions: []int64{4}})
	o := newTestOpenAI(t, srv.URL, testKey)
	resp, err := o.ExtractMemory(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, []MemoryOp{
		{Op: OpUpdate, EntryID: 1, Content: "the service uses go", SourcePositions: []int64{5}},
		{Op: OpUpdate, EntryID: 7, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{6}},
		{Op: OpRemove, EntryID: 3, SourcePositions: []int64{6}},
		{Op: OpAdd, Content: "Deploys are on Friday.", SourcePositions: []int64{5}},
		{Op: OpAdd, Content: "SQLite is the default engine.", SourcePositions: []int64{6}},
	}, resp.Ops)
	applied, err := ApplyOps(req, resp.Ops, 7)
	require.NoError(t, err)
	require.Equal(t, Applied{Entries: []MemoryEntry{
		{ID: 1, Content: "The service uses Go.", SourcePositions: []int64{1, 5}},
		{ID: 7, Content: "Staging uses PostgreSQL 17.", SourcePositions: []int64{6}},
		{ID: 8, Content: "Deploys are on Friday.", SourcePositions: []int64{5}},
		{ID: 9, Content: "SQLite is the default engine.", SourcePositions: []int64{6}},
	}, Evicted: []int64{}, LastID: 9}, applied, "a restatement keeps the text and gains positions; a supersede keeps the id")

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, http.MethodPost, got.method)
	require.Equal(t, "/v1/chat/completions", got.path)
	require.Equal(t, "Bearer "+testKey, got.auth)
	require.Equal(t, "test-model", got.body["model"])
	require.EqualValues(t, 0, got.body["temperature"])
	rf := got.body["response_format"].(map[string]any)
	require.Equal(t, "json_schema", rf["type"])
	js := rf["json_schema"].(map[string]any)
	require.Equal(t, true, js["strict"])
	require.Equal(t, "memory_operations", js["name"])
	schema := js["schema"].(map[string]any)
	require.Equal(t, []any{"operations"}, schema["required"])
	op := schema["properties"].(map[string]any)["operations"].(map[string]any)["items"].(map[string]any)
	require.Equal(t, []any{"op", "entry_id", "content", "source_positions"}, op["required"])
	require.Equal(t, []any{"add", "update", "remove"}, op["properties"].(map[string]any)["op"].(map[string]any)["enum"])
	msgs := got.body["messages"].([]any)
	require.Len(t, msgs, 2)
	require.Equal(t, "system", msgs[0].(map[string]any)["role"])
	user := msgs[1].(map[string]any)
	require.Equal(t, "user", user["role"])
	var prompt struct {
		Memory []map[string]any `json:"memory"`
		Window []map[string]any `json:"window"`
	}
	require.NoError(t, json.Unmarshal([]byte(user["content"].(string)), &prompt))
	require.Equal(t, []map[string]any{
		{"entry_id": float64(1), "content": "The service uses Go."},
		{"entry_id": float64(3), "content": "Deploys are frozen."},
		{"entry_id": float64(7), "content": "Staging uses PostgreSQL 16."},
	}, prompt.Memory, "the current entries with their ids (and not their old positions)")
	require.Len(t, prompt.Window, 2)
	require.Equal(t, "We use Go. Deploys are on Friday.", prompt.Window[0]["content"])
}

// TestOpenAIInvalidOperations: an answer that names an id the request did not carry (or one it removed), cites a
// position outside the window, or breaks the operation shape is provider/invalid_output.
func TestOpenAIInvalidOperations(t *testing.T) {
	cases := map[string]string{
		"unknown id":               `{"op":"update","entry_id":2,"content":"x y z","source_positions":[5]}`,
		"remove unknown id":        `{"op":"remove","entry_id":99,"content":null,"source_positions":[5]}`,
		"position outside window":  `{"op":"add","entry_id":null,"content":"a fact","source_positions":[5,7]}`,
		"update outside window":    `{"op":"update","entry_id":1,"content":"The service uses Rust.","source_positions":[1]}`,
		"no positions":             `{"op":"add","entry_id":null,"content":"a fact","source_positions":[]}`,
		"add with an id":           `{"op":"add","entry_id":1,"content":"a fact","source_positions":[5]}`,
		"update without an id":     `{"op":"update","entry_id":null,"content":"a fact","source_positions":[5]}`,
		"update without content":   `{"op":"update","entry_id":1,"content":null,"source_positions":[5]}`,
		"empty content":            `{"op":"add","entry_id":null,"content":"   ","source_positions":[5]}`,
		"unknown op":               `{"op":"merge","entry_id":1,"content":"a fact","source_positions":[5]}`,
		"missing op":               `{"entry_id":1,"content":"a fact","source_positions":[5]}`,
		"missing positions":        `{"op":"add","entry_id":null,"content":"a fact"}`,
		"remove then update":       `{"op":"remove","entry_id":1,"content":null,"source_positions":[5]},{"op":"update","entry_id":1,"content":"x","source_positions":[5]}`,
		"zero id":                  `{"op":"remove","entry_id":0,"content":null,"source_positions":[5]}`,
		"negative id":              `{"op":"update","entry_id":-1,"content":"a fact","source_positions":[5]}`,
		"position of another kind": `{"op":"add","entry_id":null,"content":"a fact","source_positions":[0]}`,
	}
	for name, ops := range cases {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write(chatBody(t, `{"operations":[`+ops+`]}`))
			})
			_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
			requireFailure(t, err, errclass.CodeInvalidOutput)
		})
	}
	t.Run("missing operations", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, `{"entries":[]}`)) })
		_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
		requireFailure(t, err, errclass.CodeInvalidOutput)
	})
	t.Run("no operations", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, `{"operations":[]}`)) })
		resp, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
		require.NoError(t, err)
		require.Empty(t, resp.Ops, "a window that changes nothing")
	})
}

func TestOpenAIIncubateExperience(t *testing.T) {
	var schemaRequired []any
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		schemaRequired = body["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"].(map[string]any)["required"].([]any)
		_, _ = w.Write(chatBody(t, "```json\n"+`{"candidates":[{"title":"Check schemas","lesson":"Run schema checks before deploy.","cited_positions":[4,3,4]}]}`+"\n```"))
	})
	o := newTestOpenAI(t, srv.URL, testKey)
	resp, err := o.IncubateExperience(context.Background(), IncubateRequest{Window: []Source{
		{Position: 3, Type: "task-outcome", Content: "Migration failed."}, {Position: 4, Type: "task-outcome", Content: "Fixed by checks."},
	}})
	require.NoError(t, err)
	require.Equal(t, []any{"candidates"}, schemaRequired)
	require.Equal(t, []Lesson{{Title: "Check schemas", Lesson: "Run schema checks before deploy.", CitedPositions: []int64{3, 4}}}, resp.Candidates)

	// A cited position outside the window is invalid output.
	srv2 := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(chatBody(t, `{"candidates":[{"title":"t","lesson":"l","cited_positions":[99]}]}`))
	})
	_, err = newTestOpenAI(t, srv2.URL, testKey).IncubateExperience(context.Background(), IncubateRequest{Window: []Source{{Position: 3}}})
	requireFailure(t, err, errclass.CodeInvalidOutput)
}

func TestOpenAIEmptyWindowMakesNoCall(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { t.Error("unexpected call") })
	o := newTestOpenAI(t, srv.URL, testKey)
	resp, err := o.ExtractMemory(context.Background(), ExtractMemoryRequest{Existing: []MemoryEntry{{ID: 1, Content: "kept fact", SourcePositions: []int64{1}}}})
	require.NoError(t, err)
	require.NotNil(t, resp.Ops)
	require.Empty(t, resp.Ops)
	inc, err := o.IncubateExperience(context.Background(), IncubateRequest{})
	require.NoError(t, err)
	require.Empty(t, inc.Candidates)
}

func TestOpenAIErrorMapping(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		code    string
	}{
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client hanging up
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute): // far past shortTimeout, so only the timeout ends the call
			}
		}, errclass.CodeUnavailable},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }, errclass.CodeRateLimited},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, errclass.CodeUnavailable},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, errclass.CodeUnavailable},
		{"400", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }, errclass.CodeRequestRejected},
		{"413", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusRequestEntityTooLarge) }, errclass.CodeRequestRejected},
		{"422", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) }, errclass.CodeRequestRejected},
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, errclass.CodeUnavailable},
		{"garbage body", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>oops")) }, errclass.CodeInvalidOutput},
		{"no choices", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"choices":[]}`)) }, errclass.CodeInvalidOutput},
		{"empty content", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, "  ")) }, errclass.CodeInvalidOutput},
		{"content not json", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, "Sure! Here are facts")) }, errclass.CodeInvalidOutput},
		{"missing operations", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, `{"facts":[]}`)) }, errclass.CodeInvalidOutput},
		{"missing positions", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(chatBody(t, `{"operations":[{"op":"add","entry_id":null,"content":"a fact"}]}`))
		}, errclass.CodeInvalidOutput},
		{"position outside window", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(chatBody(t, `{"operations":[{"op":"add","entry_id":null,"content":"a fact","source_positions":[5,7]}]}`))
		}, errclass.CodeInvalidOutput},
		{"unknown id", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(chatBody(t, `{"operations":[{"op":"remove","entry_id":404,"content":null,"source_positions":[5]}]}`))
		}, errclass.CodeInvalidOutput},
		{"oversized body", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat(" ", maxResponseBytes+10)))
		}, errclass.CodeInvalidOutput},
		{"endless body", endless, errclass.CodeInvalidOutput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler)
			timeout := testTimeout
			if tc.name == "slow" {
				timeout = shortTimeout
			}
			_, err := newTestOpenAIWithin(t, srv.URL, testKey, timeout).ExtractMemory(context.Background(), memoryReq())
			requireFailure(t, err, tc.code)
			// What retrying can change (docs/protocol.md#errors): a rejected request fails at once, a rate limit
			// snoozes, everything else is retried within the budget.
			f := errclass.Classify(err)
			_, snoozes := errclass.SnoozeHint(err)
			require.Equal(t, tc.code != errclass.CodeRequestRejected, f.Retryable)
			require.Equal(t, tc.code == errclass.CodeRateLimited, snoozes)
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := newTestOpenAI(t, url, testKey).ExtractMemory(context.Background(), memoryReq())
		requireFailure(t, err, errclass.CodeUnavailable)
		require.NotContains(t, err.Error(), url)
		var he *errclass.Error
		require.ErrorAs(t, err, &he)
	})

	t.Run("caller cancelled", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(ctx, memoryReq())
		requireFailure(t, err, errclass.CodeUnavailable)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("429 retry-after", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
		requireFailure(t, err, errclass.CodeRateLimited)
		d, ok := RetryAfter(err)
		require.True(t, ok)
		require.Equal(t, 7*time.Second, d)
		d, ok = errclass.SnoozeHint(err)
		require.True(t, ok)
		require.Equal(t, 7*time.Second, d, "the ledger snoozes the item for the named delay")
	})
}

// TestOpenAICanary echoes a unique API key (and the request body, which holds prompt and Source content) back in
// every way an upstream might, and checks none of it reaches a returned error.
func TestOpenAICanary(t *testing.T) {
	const canary = "sk-CANARY-7f3c9e1a-do-not-leak"
	const contentCanary = "SOURCE-CANARY-b41d"
	echo := func(status int, wrapInChat bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			text := "invalid api key " + r.Header.Get("Authorization") + " for request " + string(raw)
			w.Header().Set("X-Echo-Key", r.Header.Get("Authorization"))
			w.WriteHeader(status)
			if wrapInChat {
				_, _ = w.Write(chatBody(t, text))
				return
			}
			_, _ = w.Write([]byte(`{"error":{"message":` + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `"`, `\"`) + `}}`))
		}
	}
	handlers := []http.HandlerFunc{
		echo(http.StatusUnauthorized, false),
		echo(http.StatusBadRequest, false),
		echo(http.StatusTooManyRequests, false),
		echo(http.StatusInternalServerError, false),
		echo(http.StatusOK, false), // garbage body
		echo(http.StatusOK, true),  // garbage model output
		func(w http.ResponseWriter, r *http.Request) { // bad positions in otherwise valid output
			_, _ = w.Write(chatBody(t, `{"operations":[{"op":"add","entry_id":null,"content":"`+canary+`","source_positions":[42]}]}`))
		},
		func(w http.ResponseWriter, r *http.Request) { // an unknown id in otherwise valid output
			_, _ = w.Write(chatBody(t, `{"operations":[{"op":"update","entry_id":42,"content":"`+canary+`","source_positions":[5]}]}`))
		},
	}
	req := memoryReq()
	req.Window[0].Content += " " + contentCanary
	for i, h := range handlers {
		srv := serve(t, h)
		o := newTestOpenAI(t, srv.URL, canary)
		var errs []error
		_, err := o.ExtractMemory(context.Background(), req)
		errs = append(errs, err)
		_, err = o.IncubateExperience(context.Background(), IncubateRequest{Window: req.Window})
		errs = append(errs, err)
		_, err = WithRateLimit(o, func(context.Context) (bool, time.Duration, error) { return true, 0, nil }).
			ExtractMemory(context.Background(), req)
		errs = append(errs, err)
		for _, err := range errs {
			require.Error(t, err, "handler %d", i)
			require.Equal(t, errclass.CategoryProvider, errclass.Classify(err).Category, "handler %d", i)
			for e := err; e != nil; e = errors.Unwrap(e) {
				require.NotContains(t, e.Error(), canary, "handler %d", i)
				require.NotContains(t, e.Error(), contentCanary, "handler %d", i)
				require.NotContains(t, e.Error(), "invalid api key", "handler %d", i)
			}
		}
	}
}
