package handlers

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
)

// stallingEmbedder embeds with the local embedder until stall is set, then waits for the caller to give up.
type stallingEmbedder struct {
	provider.LocalEmbedder
	stall bool
}

func (s *stallingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if s.stall {
		<-ctx.Done()
		return nil, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeUnavailable, true)
	}
	return s.LocalEmbedder.Embed(ctx, texts)
}

// TestSearchAndContextModes: the mode parameter of GET /v1/memory/search and GET /v1/context, the method scores of
// each entry, the default (hybrid once the revision has vectors of the model), a misspelt query found by the
// vectors only, the degraded answer when the query embedding runs out of time (200, never a 5xx), bad modes (422),
// and the memory_embed kind in the operations list.
func TestSearchAndContextModes(t *testing.T) {
	t.Parallel()
	emb := &stallingEmbedder{}
	e := newEnv(t, func(d *Deps) {
		d.Memory = memory.Reader{Store: d.Store, Embedder: emb, QueryTimeout: 200 * time.Millisecond}
	})
	e.capture("m", "The deploy script lives in ops/deploy.sh.", nil)
	e.capture("m", "Staging uses PostgreSQL 16.", nil)
	e.enqueueMemory("m")
	require.Equal(t, 1, e.step(nil))

	r := e.get("/v1/memory/search?scope_id=m&q=deploy")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, "hybrid", m["mode"], "the revision has vectors of the model")
	require.Equal(t, false, m["degraded"])
	first := m["entries"].([]any)[0].(map[string]any)
	require.Contains(t, first["content"], "deploy script")
	scores := first["scores"].(map[string]any)
	require.Greater(t, scores["fts"], 0.0)
	require.Greater(t, scores["semantic"], 0.0)
	require.InDelta(t, 2.0/61, first["score"], 1e-6, "first in both rankings")

	for mode, want := range map[string][]string{"fts": {"fts"}, "semantic": {"semantic"}, "hybrid": {"fts", "semantic"}} {
		r = e.get("/v1/memory/search?scope_id=m&q=deploy&mode=" + mode)
		m = r.json(t)
		require.Equal(t, mode, m["mode"])
		first = m["entries"].([]any)[0].(map[string]any)
		got := first["scores"].(map[string]any)
		require.Len(t, got, len(want), "mode %s: %v", mode, got)
		for _, k := range want {
			require.Contains(t, got, k)
		}
	}
	// A misspelt word: no full-text match, the local vectors still find it.
	r = e.get("/v1/memory/search?scope_id=m&q=postgrse")
	m = r.json(t)
	require.Len(t, m["entries"], 1)
	require.Contains(t, m["entries"].([]any)[0].(map[string]any)["content"], "PostgreSQL")
	r = e.get("/v1/memory/search?scope_id=m&q=postgrse&mode=fts")
	require.Empty(t, r.json(t)["entries"])

	r = e.get("/v1/context?scope_id=m&q=postgrse&mode=hybrid")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m = r.json(t)
	require.Equal(t, "hybrid", m["mode"])
	require.Equal(t, false, m["degraded"])
	first = m["items"].([]any)[0].(map[string]any)
	require.Contains(t, first["content"], "PostgreSQL")
	require.Contains(t, first["scores"], "semantic")
	require.NotContains(t, m["items"].([]any)[1].(map[string]any), "scores", "an item nothing matched has no method scores")

	// The provider stalls: full text answers, marked degraded. The stalled embedder never answers before its
	// caller gives up, so an answer at all shows the query timeout bounded the wait (no wall-clock bound needed).
	emb.stall = true
	for _, target := range []string{"/v1/memory/search?scope_id=m&q=deploy", "/v1/memory/search?scope_id=m&q=deploy&mode=semantic",
		"/v1/context?scope_id=m&q=deploy"} {
		r = e.get(target)
		require.Equal(t, http.StatusOK, r.Code, "%s: %s", target, r.Body)
		m = r.json(t)
		require.Equal(t, "fts", m["mode"], target)
		require.Equal(t, true, m["degraded"], target)
	}
	r = e.get("/v1/memory/search?scope_id=m&q=deploy&mode=fts")
	require.Equal(t, false, r.json(t)["degraded"])

	for _, target := range []string{"/v1/memory/search?scope_id=m&q=x&mode=vector", "/v1/context?scope_id=m&mode=FTS",
		"/v1/memory/search?scope_id=m&q=x&mode=fts&mode=hybrid"} {
		d := e.get(target).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, "mode", d["field"], target)
	}

	// Re-embedding operations are listed under their public kind.
	_, err := e.ledger.Enqueue(context.Background(), memory.EmbedRequest("m", "another-model", 3))
	require.NoError(t, err)
	r = e.get("/v1/operations?scope_id=m&kind=memory_embed")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	items := r.json(t)["items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, "memory_embed", items[0].(map[string]any)["kind"])
	require.Equal(t, 1, e.step(nil))
	r = e.get("/v1/operations/" + items[0].(map[string]any)["operation_id"].(string))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m = r.json(t)
	require.Equal(t, "succeeded", m["status"])
	require.Equal(t, "memory_embed", m["result"].(map[string]any)["type"])
}
