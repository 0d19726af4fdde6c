//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeProvider is an OpenAI-compatible chat-completions server: random latency, a share of retryable failures
// (500 or 429), and otherwise valid strict-JSON answers for memory extraction ("memory_operations") and experience
// incubation ("experience_candidates") that cite only positions of the request's window.
type fakeProvider struct {
	srv        *httptest.Server
	model      string
	apiKey     string
	maxLatency time.Duration
	failRate   float64
	// zombie, when set, is called for every well-formed request with the worker index taken from the URL
	// (/w<n>/v1/…) and the schema name; when it returns true the request is answered at once, without latency or
	// failure (the hook has just cut that worker off its database, so its claim goes stale before it commits).
	zombie func(worker int, schema string) bool

	calls, failures, memoryAnswers, lessonAnswers, badRequests atomic.Int64
}

func newFakeProvider(t *testing.T, maxLatency time.Duration, failRate float64) *fakeProvider {
	f := &fakeProvider{model: "e2e-fake-model", apiKey: "e2e-fake-key", maxLatency: maxLatency, failRate: failRate}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is what POWERCONTEXT_PROVIDER_BASE_URL points at (the client POSTs {base}/chat/completions).
func (f *fakeProvider) baseURL() string { return f.srv.URL + "/v1" }

// workerBaseURL is the base URL of worker n: the same server, with the worker's index in the path.
func (f *fakeProvider) workerBaseURL(n int) string { return fmt.Sprintf("%s/w%d/v1", f.srv.URL, n) }

type fakeChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string `json:"name"`
			Strict bool   `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type fakeWindow struct {
	Window []struct {
		Position int64 `json:"position"`
	} `json:"window"`
}

func (f *fakeProvider) bad(w http.ResponseWriter, why string) {
	f.badRequests.Add(1)
	http.Error(w, why, http.StatusBadRequest)
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	worker := -1
	path := r.URL.Path
	if n, rest, ok := strings.Cut(strings.TrimPrefix(path, "/w"), "/"); ok && strings.HasPrefix(path, "/w") {
		if i, err := strconv.Atoi(n); err == nil {
			worker, path = i, "/"+rest
		}
	}
	if r.Method != http.MethodPost || path != "/v1/chat/completions" {
		f.badRequests.Add(1)
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.apiKey {
		f.bad(w, "bad authorization")
		return
	}
	var req fakeChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.bad(w, "bad json")
		return
	}
	if req.Model != f.model || req.ResponseFormat.Type != "json_schema" || !req.ResponseFormat.JSONSchema.Strict || len(req.Messages) < 2 {
		f.bad(w, "bad request shape")
		return
	}
	var win fakeWindow
	if err := json.Unmarshal([]byte(req.Messages[len(req.Messages)-1].Content), &win); err != nil || len(win.Window) == 0 {
		f.bad(w, "bad user message")
		return
	}

	if f.zombie != nil && f.zombie(worker, req.ResponseFormat.JSONSchema.Name) {
		f.answer(w, req.ResponseFormat.JSONSchema.Name, win)
		return
	}
	if f.maxLatency > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(rand.N(f.maxLatency + 1)):
		}
	}
	if rand.Float64() < f.failRate {
		f.failures.Add(1)
		if rand.IntN(2) == 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
		} else {
			http.Error(w, `{"error":{"message":"upstream failure"}}`, http.StatusInternalServerError)
		}
		return
	}

	f.answer(w, req.ResponseFormat.JSONSchema.Name, win)
}

func (f *fakeProvider) answer(w http.ResponseWriter, schema string, win fakeWindow) {
	first := win.Window[0].Position
	pick := win.Window[rand.IntN(len(win.Window))].Position
	var content any
	switch schema {
	case "memory_operations":
		f.memoryAnswers.Add(1)
		// A handful of distinct facts per scope, so merged memory stays small while positions accumulate: an add
		// whose text an entry already states restates that entry.
		add := func(n, pos int64) map[string]any {
			return map[string]any{"op": "add", "entry_id": nil, "content": fmt.Sprintf("Fact %d holds for this project.", n%5),
				"source_positions": []int64{pos}}
		}
		ops := []map[string]any{add(first, first)}
		if pick != first {
			ops = append(ops, add(pick, pick))
		}
		content = map[string]any{"operations": ops}
	case "experience_candidates":
		f.lessonAnswers.Add(1)
		// Exactly one lesson per window, citing the window's first position: one candidate = one commit.
		content = map[string]any{"candidates": []map[string]any{{
			"title": fmt.Sprintf("Lesson from source %d", first), "lesson": "Repeat what worked in this task.",
			"cited_positions": []int64{first},
		}}}
	default:
		f.bad(w, "unknown schema")
		return
	}
	text, _ := json.Marshal(content)
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-e2e", "object": "chat.completion", "model": f.model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(text)}}},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
