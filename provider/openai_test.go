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

	"github.com/powercontext/powercontext/coordinator"
)

const testKey = "sk-test-key"

func requireFailure(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, coordinator.Failure{Category: coordinator.CategoryProvider, Code: code, Retryable: code != coordinator.CodeRequestRejected},
		coordinator.Classify(err))
}

func newTestOpenAI(t *testing.T, url, key string) *OpenAI {
	t.Helper()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: url + "/v1", Model: "test-model", APIKey: key, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	return o
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
		Existing: []MemoryEntry{{Content: "The service uses Go.", SourcePositions: []int64{1}}},
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

func TestOpenAIExtractMemoryMerges(t *testing.T) {
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
		_, _ = w.Write(chatBody(t, `{"entries":[{"content":"the service uses go","source_positions":[5]},`+
			`{"content":"Deploys are on Friday.","source_positions":[5]},{"content":" SQLite  is the default engine. ","source_positions":[6,6]}]}`))
	})
	o := newTestOpenAI(t, srv.URL, testKey)
	resp, err := o.ExtractMemory(context.Background(), memoryReq())
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{
		{Content: "The service uses Go.", SourcePositions: []int64{1, 5}},
		{Content: "Deploys are on Friday.", SourcePositions: []int64{5}},
		{Content: "SQLite is the default engine.", SourcePositions: []int64{6}},
	}, resp.Entries)

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
	schema := js["schema"].(map[string]any)
	require.Equal(t, []any{"entries"}, schema["required"])
	msgs := got.body["messages"].([]any)
	require.Len(t, msgs, 2)
	require.Equal(t, "system", msgs[0].(map[string]any)["role"])
	user := msgs[1].(map[string]any)
	require.Equal(t, "user", user["role"])
	require.Contains(t, user["content"], "Deploys are on Friday.")
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
	requireFailure(t, err, coordinator.CodeInvalidOutput)
}

func TestOpenAIEmptyWindowMakesNoCall(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { t.Error("unexpected call") })
	o := newTestOpenAI(t, srv.URL, testKey)
	resp, err := o.ExtractMemory(context.Background(), ExtractMemoryRequest{Existing: []MemoryEntry{{Content: "kept fact", SourcePositions: []int64{1}}}})
	require.NoError(t, err)
	require.Equal(t, []MemoryEntry{{Content: "kept fact", SourcePositions: []int64{1}}}, resp.Entries)
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
			case <-time.After(5 * time.Second):
			}
		}, coordinator.CodeUnavailable},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) }, coordinator.CodeRateLimited},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, coordinator.CodeUnavailable},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, coordinator.CodeUnavailable},
		{"400", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }, coordinator.CodeRequestRejected},
		{"413", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusRequestEntityTooLarge) }, coordinator.CodeRequestRejected},
		{"422", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) }, coordinator.CodeRequestRejected},
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, coordinator.CodeUnavailable},
		{"garbage body", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>oops")) }, coordinator.CodeInvalidOutput},
		{"no choices", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"choices":[]}`)) }, coordinator.CodeInvalidOutput},
		{"empty content", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, "  ")) }, coordinator.CodeInvalidOutput},
		{"content not json", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, "Sure! Here are facts")) }, coordinator.CodeInvalidOutput},
		{"missing entries", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(chatBody(t, `{"facts":[]}`)) }, coordinator.CodeInvalidOutput},
		{"missing positions", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(chatBody(t, `{"entries":[{"content":"a fact"}]}`))
		}, coordinator.CodeInvalidOutput},
		{"position outside window", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(chatBody(t, `{"entries":[{"content":"a fact","source_positions":[5,7]}]}`))
		}, coordinator.CodeInvalidOutput},
		{"oversized body", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat(" ", maxResponseBytes+10)))
		}, coordinator.CodeInvalidOutput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler)
			_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
			requireFailure(t, err, tc.code)
			// What retrying can change (docs/protocol.md#errors): a rejected request fails at once, a rate limit
			// snoozes, everything else is retried within the budget.
			f := coordinator.Classify(err)
			_, snoozes := coordinator.SnoozeHint(err)
			require.Equal(t, tc.code != coordinator.CodeRequestRejected, f.Retryable)
			require.Equal(t, tc.code == coordinator.CodeRateLimited, snoozes)
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := newTestOpenAI(t, url, testKey).ExtractMemory(context.Background(), memoryReq())
		requireFailure(t, err, coordinator.CodeUnavailable)
		require.NotContains(t, err.Error(), url)
		var he *coordinator.HandlerError
		require.ErrorAs(t, err, &he)
	})

	t.Run("caller cancelled", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(ctx, memoryReq())
		requireFailure(t, err, coordinator.CodeUnavailable)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("429 retry-after", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		_, err := newTestOpenAI(t, srv.URL, testKey).ExtractMemory(context.Background(), memoryReq())
		requireFailure(t, err, coordinator.CodeRateLimited)
		d, ok := RetryAfter(err)
		require.True(t, ok)
		require.Equal(t, 7*time.Second, d)
		d, ok = coordinator.SnoozeHint(err)
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
			_, _ = w.Write(chatBody(t, `{"entries":[{"content":"`+canary+`","source_positions":[42]}]}`))
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
			require.Equal(t, coordinator.CategoryProvider, coordinator.Classify(err).Category, "handler %d", i)
			for e := err; e != nil; e = errors.Unwrap(e) {
				require.NotContains(t, e.Error(), canary, "handler %d", i)
				require.NotContains(t, e.Error(), contentCanary, "handler %d", i)
				require.NotContains(t, e.Error(), "invalid api key", "handler %d", i)
			}
		}
	}
}
