package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// TestEmbeddingsThroughTheRuntime runs the service with an OpenAI-compatible embeddings endpoint (its key defaulting
// to the provider's): a flush stores the entries' vectors, a search is hybrid, and when the endpoint fails — echoing
// the key, the texts and an error canary back — the search answers 200 with full text and degraded: true, while
// none of the canaries reaches the logs, /metrics, the spans or the work rows; the call is a provider.embed span.
func TestEmbeddingsThroughTheRuntime(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		canarySource := "canary-entry-" + uuid.NewString()
		canaryQuery := "canary-query-" + uuid.NewString()
		canaryError := "canary-error-" + uuid.NewString()
		canaryKey := "canary-key-" + uuid.NewString()
		var failing atomic.Bool
		var calls, badAuth atomic.Int32
		// One OpenAI-compatible server: chat completions extract one fact (citing position 1), embeddings embed.
		upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if r.Header.Get("Authorization") != "Bearer "+canaryKey {
				badAuth.Add(1)
			}
			if r.URL.Path == "/v1/chat/completions" {
				content, _ := json.Marshal(map[string]any{"operations": []any{map[string]any{"op": "add",
					"content": "The user said: " + canarySource, "source_positions": []int{1}}}})
				_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": string(content)}}}})
				return
			}
			calls.Add(1)
			if failing.Load() {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":{"message":"`+canaryError+` `+r.Header.Get("Authorization")+` `+
					strings.ReplaceAll(string(body), `"`, `'`)+`"}}`)
				return
			}
			var req struct {
				Input []string `json:"input"`
			}
			_ = json.Unmarshal(body, &req)
			data := make([]map[string]any, len(req.Input))
			for i := range req.Input {
				data[i] = map[string]any{"index": i, "embedding": []float32{1, 0.5, 0.25, 0.125}}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
		}))
		t.Cleanup(upstream.Close)
		env := startRuntime(t, engine, &fakeModel{apiKey: canaryKey}, func(c *app.Config) {
			c.ProviderBaseURL = upstream.URL + "/v1" // the embeddings' base URL and key default to the provider's
			c.EmbeddingsKind, c.EmbeddingsModel = app.EmbeddingsOpenAI, "embed-model"
			c.EmbeddingsQueryTimeoutSeconds = 1
		})

		env.capture(t, "emb", "The user said: "+canarySource)
		r := env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "emb"}, "Prefer", "wait=20")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		op := env.operation(t, r.json(t)["operation_id"].(string))
		require.Equal(t, map[string]any{"model": "embed-model", "computed": float64(1), "reused": float64(0), "missing": float64(0)},
			op["result"].(map[string]any)["embeddings"], "the flush stored the vector")

		search := func() map[string]any {
			r := env.do(t, http.MethodGet, "/v1/memory/search?scope_id=emb&q="+url.QueryEscape(canaryQuery+" user"), nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			return r.json(t)
		}
		m := search()
		require.Equal(t, "hybrid", m["mode"])
		require.Equal(t, false, m["degraded"])
		require.Len(t, m["entries"], 1, "the vectors match")

		failing.Store(true)
		m = search()
		require.Equal(t, "fts", m["mode"], "the provider fails: full text answers")
		require.Equal(t, true, m["degraded"])
		require.Empty(t, m["entries"], "full text needs every term of the query")
		require.Zero(t, badAuth.Load(), "the provider's key was sent to the embeddings endpoint")
		require.GreaterOrEqual(t, calls.Load(), int32(3))

		metricsText := env.metrics(t)
		require.Contains(t, metricsText, `powercontext_provider_calls_total{outcome="unavailable",provider="openai"}`)
		env.stop()
		spans := env.spans.GetSpans()
		exported := spanText(spans)
		require.Contains(t, exported, "provider.embed")
		sqlDB := enginetest.OpenSQLDB(t, env.url)
		items, attemptRows := rows(t, sqlDB, "pc_work_items"), rows(t, sqlDB, "pc_work_attempts")
		for _, canary := range []string{canarySource, canaryQuery, canaryError, canaryKey} {
			require.NotContains(t, env.logs.String(), canary, "logs")
			require.NotContains(t, metricsText, canary, "/metrics")
			require.NotContains(t, exported, canary, "spans")
			require.NotContains(t, items, canary, "pc_work_items")
			require.NotContains(t, attemptRows, canary, "pc_work_attempts")
		}
	})
}
