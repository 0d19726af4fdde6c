package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// fakeEmbeddings is an OpenAI-compatible embeddings server whose vectors put paraphrases near each other: each text
// points along the axes of the concepts it names (any of a concept's words), plus a small text-specific component.
type fakeEmbeddings struct {
	srv    *httptest.Server
	mode   atomic.Value // "ok", "fail" (HTTP 503) or "slow" (answers after 2 s)
	mu     sync.Mutex
	calls  map[string]int // requests by model
	inputs map[string]int // texts embedded by model
}

var concepts = [][]string{
	{"release", "ship", "deploy", "go out", "rollout"},
	{"database", "postgres", "sql"},
	{"billing", "invoice", "payment"},
	{"pizza", "lunch", "food"},
	{"backup", "snapshot"},
}

const fakeDims = 8

func fakeVector(text string) []float32 {
	v := make([]float32, fakeDims)
	low := strings.ToLower(text)
	hit := false
	for i, words := range concepts {
		for _, w := range words {
			if strings.Contains(low, w) {
				v[i], hit = 1, true
				break
			}
		}
	}
	if !hit {
		v[fakeDims-1] = 1
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(text))
	v[fakeDims-2] = float32(h.Sum32()%100) / 1000 // text-specific, small
	return v
}

func newFakeEmbeddings(t *testing.T) *fakeEmbeddings {
	f := &fakeEmbeddings{calls: map[string]int{}, inputs: map[string]int{}}
	f.mode.Store("ok")
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch f.mode.Load().(string) {
		case "fail":
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case "slow":
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
		f.mu.Lock()
		f.calls[req.Model]++
		f.inputs[req.Model] += len(req.Input)
		f.mu.Unlock()
		data := make([]map[string]any, len(req.Input))
		for i, in := range req.Input {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": fakeVector(in)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEmbeddings) embedder(t *testing.T, model string) provider.Embedder {
	t.Helper()
	e, err := provider.NewOpenAIEmbedder(provider.OpenAIEmbeddingsConfig{BaseURL: f.srv.URL + "/v1", Model: model, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return e
}

func (f *fakeEmbeddings) count(model string) (calls, inputs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[model], f.inputs[model]
}

var paraphraseFacts = []string{
	"Releases go out every Tuesday via ops/deploy.sh.",
	"Staging uses PostgreSQL 16.",
	"Alice owns billing.",
	"We order pizza on Fridays.",
}

// flushFacts captures facts into scope (one Source each) and commits them as one revision through h.
func flushFacts(t *testing.T, e *env, h coordinator.Handler, scope string, facts ...string) db.WorkItem {
	t.Helper()
	ctx := context.Background()
	for _, c := range facts {
		_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: c})
		require.NoError(t, err)
	}
	res, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest(scope))
	require.NoError(t, err)
	require.True(t, res.Created)
	return e.runOne(t, h)
}

// TestParaphraseFindsTheRightEntry: on every engine, a flush through an OpenAI-compatible embeddings server stores
// one vector per entry in the revision's commit, and a paraphrased query that shares no word with the entry it means
// ("how do we ship a release" → "Releases go out every Tuesday…") ranks that entry first in semantic and hybrid mode,
// for search and for context — where full-text ranking finds nothing (search) or puts another entry first (context).
func TestParaphraseFindsTheRightEntry(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		fake := newFakeEmbeddings(t)
		emb := fake.embedder(t, "fake-embed")
		e := newEnv(t, s)
		h := &memory.Handler{Store: s, Provider: provider.NewLocal(), Embedder: emb}
		done := flushFacts(t, e, h, "para", paraphraseFacts...)
		require.Equal(t, "processed", done.ResultCode)
		var res memory.FlushResult
		require.NoError(t, json.Unmarshal(done.ResultPayload, &res))
		require.Equal(t, &memory.EmbeddingStats{Model: "fake-embed", Computed: 4}, res.Embeddings)
		rows, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "para", Revision: 1})
		require.NoError(t, err)
		require.Len(t, rows, 4, "one vector per entry, in the revision's commit")
		for i, r := range rows {
			require.Equal(t, int32(i+1), r.EntryNo)
			require.Equal(t, "fake-embed", r.Model)
			require.EqualValues(t, fakeDims, r.Dimensions)
			require.Len(t, r.Embedding, 4*fakeDims)
		}

		r := memory.Reader{Store: s, Embedder: emb}
		const q = "how do we ship a release"
		for _, mode := range []string{memory.ModeSemantic, memory.ModeHybrid, ""} {
			m, err := r.SearchMode(ctx, "para", q, 10, mode)
			require.NoError(t, err)
			require.NotEmpty(t, m.Entries, "mode %q", mode)
			require.Equal(t, paraphraseFacts[0], m.Entries[0].Content, "mode %q: %v", mode, contents(m.Entries))
			require.False(t, m.Degraded)
			require.NotNil(t, m.Methods[0].Semantic)
			require.Greater(t, *m.Methods[0].Semantic, 0.9)
			require.Nil(t, m.Methods[0].FTS, "no word of the query is in the entry")
			if mode == "" {
				require.Equal(t, memory.ModeHybrid, m.Mode, "hybrid by default when the revision has vectors of the model")
			} else {
				require.Equal(t, mode, m.Mode)
			}
		}
		m, err := r.SearchMode(ctx, "para", q, 10, memory.ModeFTS)
		require.NoError(t, err)
		require.Equal(t, memory.ModeFTS, m.Mode)
		require.Empty(t, m.Entries, "full text alone finds no entry holding every word of the paraphrase")

		// A query both methods agree on: fused, with both scores.
		m, err = r.SearchMode(ctx, "para", "postgresql", 10, memory.ModeHybrid)
		require.NoError(t, err)
		require.Equal(t, paraphraseFacts[1], m.Entries[0].Content)
		require.NotNil(t, m.Methods[0].FTS)
		require.NotNil(t, m.Methods[0].Semantic)
		require.InDelta(t, 2.0/(memory.RRFK+1), m.Scores[0], 1e-6, "first in both rankings")

		a := memory.Assembler{Memory: r, Lessons: experience.Reviews{Store: s}}
		for _, mode := range []string{memory.ModeSemantic, memory.ModeHybrid} {
			got, err := a.AssembleMode(ctx, "para", q, 1000, mode)
			require.NoError(t, err)
			require.Equal(t, mode, got.Mode)
			require.Equal(t, paraphraseFacts[0], got.Items[0].Content, "context mode %s", mode)
			require.NotNil(t, got.Items[0].Methods.Semantic)
		}
		got, err := a.AssembleMode(ctx, "para", q, 1000, memory.ModeFTS)
		require.NoError(t, err)
		require.Equal(t, paraphraseFacts[3], got.Items[0].Content, "full text puts the entry sharing \"we\" first")

		_, err = r.SearchMode(ctx, "para", q, 10, "vector")
		var ve *sources.ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "mode", ve.Field)
	})
}

// TestEmbeddingOutageDegrades: when the embeddings provider is down or slower than the query timeout, search and
// context answer with full-text ranking marked degraded (never an error); a flush still commits its revision,
// reusing the vectors of unchanged entries and leaving the new ones without (the discoverer fills them in later).
func TestEmbeddingOutageDegrades(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		fake := newFakeEmbeddings(t)
		emb := fake.embedder(t, "fake-embed")
		e := newEnv(t, s)
		h := &memory.Handler{Store: s, Provider: provider.NewLocal(), Embedder: emb}
		require.Equal(t, "processed", flushFacts(t, e, h, "out", paraphraseFacts...).ResultCode)

		r := memory.Reader{Store: s, Embedder: emb, QueryTimeout: 300 * time.Millisecond}
		a := memory.Assembler{Memory: r, Lessons: experience.Reviews{Store: s}}
		for _, mode := range []string{"fail", "slow"} {
			fake.mode.Store(mode)
			for _, want := range []string{"", memory.ModeHybrid, memory.ModeSemantic} {
				// "slow" answers correct vectors after 2 s: only a reader that gave up at its query timeout
				// answers degraded, so Degraded is the proof that the timeout bounded the wait.
				m, err := r.SearchMode(ctx, "out", "deploy", 10, want)
				require.NoError(t, err, "%s %q", mode, want)
				require.Equal(t, memory.ModeFTS, m.Mode)
				require.True(t, m.Degraded, "%s %q", mode, want)
				require.Equal(t, []string{paraphraseFacts[0]}, contents(m.Entries), "full text still answers")
				require.NotNil(t, m.Methods[0].FTS)
				require.Nil(t, m.Methods[0].Semantic)
			}
			got, err := a.AssembleMode(ctx, "out", "deploy", 1000, "")
			require.NoError(t, err)
			require.True(t, got.Degraded)
			require.Equal(t, memory.ModeFTS, got.Mode)
			require.Equal(t, paraphraseFacts[0], got.Items[0].Content)
			m, err := r.SearchMode(ctx, "out", "deploy", 10, memory.ModeFTS)
			require.NoError(t, err)
			require.False(t, m.Degraded, "fts asks nothing of the provider")
		}

		// A flush while the provider is down commits; the unchanged entries keep (reuse) their vectors.
		fake.mode.Store("fail")
		done := flushFacts(t, e, h, "out", "Backups run nightly.")
		require.Equal(t, "processed", done.ResultCode)
		var res memory.FlushResult
		require.NoError(t, json.Unmarshal(done.ResultPayload, &res))
		require.Equal(t, &memory.EmbeddingStats{Model: "fake-embed", Reused: 4, Missing: 1}, res.Embeddings)
		rows, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "out", Revision: 2})
		require.NoError(t, err)
		require.Len(t, rows, 4)
		old, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "out", Revision: 1})
		require.NoError(t, err)
		require.Empty(t, old, "only the latest revision keeps vectors")

		// Back up: the discoverer finds the scope, and its memory_embed item embeds the one missing entry.
		fake.mode.Store("ok")
		_, before := fake.count("fake-embed")
		d := memory.EmbedDiscoverer{Store: s, Model: emb.Model(), Every: time.Hour, MaxAttempts: 3}
		reqs, next, err := d.Page(ctx, "", 100)
		require.NoError(t, err)
		require.Len(t, reqs, 1)
		require.Empty(t, next)
		_, err = e.ledger.Enqueue(ctx, reqs[0])
		require.NoError(t, err)
		item := e.runOne(t, &memory.EmbedHandler{Ledger: e.ledger, Embedder: emb})
		require.Equal(t, "embedded", item.ResultCode)
		var er memory.EmbedResult
		require.NoError(t, json.Unmarshal(item.ResultPayload, &er))
		require.Equal(t, memory.EmbedResult{Type: memory.PublicKindEmbed, EmbeddingStats: memory.EmbeddingStats{Model: "fake-embed", Computed: 1},
			Memory: &memory.RevisionResult{Revision: 2}}, er)
		_, after := fake.count("fake-embed")
		require.Equal(t, 1, after-before, "only the missing text was sent")
		reqs, _, err = d.Page(ctx, "", 100)
		require.NoError(t, err)
		require.Empty(t, reqs)
		m, err := r.SearchMode(ctx, "out", "snapshot of the data", 10, "")
		require.NoError(t, err)
		require.Equal(t, memory.ModeHybrid, m.Mode)
		require.Equal(t, "Backups run nightly.", m.Entries[0].Content)
	})
}

// TestModelChangeReembedsEveryScopeOnce: after the configured embedding model changes, search uses only vectors of
// the new model (full text meanwhile), the discoverer enqueues one memory_embed item per scope through the scheduler,
// and after they ran every scope's latest revision has a vector of the new model for every entry — each scope
// re-embedded exactly once, in one provider call per scope, and the scheduler's later scans find nothing more.
func TestModelChangeReembedsEveryScopeOnce(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		fake := newFakeEmbeddings(t)
		oldEmb, newEmb := fake.embedder(t, "model-a"), fake.embedder(t, "model-b")
		e := newEnv(t, s)
		scopes := []string{"scope/1", "scope/2", "scope/3"}
		for i, scope := range scopes {
			h := &memory.Handler{Store: s, Provider: provider.NewLocal(), Embedder: oldEmb}
			flushFacts(t, e, h, scope, paraphraseFacts[:i+2]...)
		}
		_, err := e.journal.Capture(ctx, sources.CaptureRequest{ScopeID: "no-memory-yet", Content: "Not flushed."})
		require.NoError(t, err)

		r := memory.Reader{Store: s, Embedder: newEmb}
		m, err := r.SearchMode(ctx, "scope/3", "how do we ship a release", 10, memory.ModeHybrid)
		require.NoError(t, err)
		require.Equal(t, memory.ModeFTS, m.Mode, "no vector of the new model yet: full text")
		require.False(t, m.Degraded)

		sched, err := coordinator.NewScheduler(e.ledger, coordinator.SchedulerConfig{Owner: "sched", Lease: time.Minute, PageSize: 2},
			memory.EmbedDiscoverer{Store: s, Model: newEmb.Model(), Every: 20 * time.Millisecond, MaxAttempts: 3})
		require.NoError(t, err)
		require.NoError(t, sched.Tick(ctx))
		h := &memory.EmbedHandler{Ledger: e.ledger, Embedder: newEmb}
		for range scopes {
			item := e.runOne(t, h)
			require.Equal(t, "embedded", item.ResultCode)
			require.Equal(t, memory.KindEmbed, item.Kind)
		}
		require.NoError(t, sched.Tick(ctx)) // a later scan: nothing is stale any more
		waitDB(t, s, 50*time.Millisecond)
		require.NoError(t, sched.Tick(ctx))
		list, err := e.ledger.List(ctx, coordinator.ListParams{Kinds: []string{memory.KindEmbed}, Limit: 100})
		require.NoError(t, err)
		per := map[string]int{}
		for _, it := range list {
			require.Equal(t, db.StatusSucceeded, it.Status)
			per[it.ScopeID]++
		}
		require.Equal(t, map[string]int{"scope/1": 1, "scope/2": 1, "scope/3": 1}, per, "one memory_embed per scope")
		calls, inputs := fake.count("model-b")
		require.Equal(t, 3, calls)
		require.Equal(t, 2+3+4, inputs)

		for _, scope := range scopes {
			cur, err := memory.Reader{Store: s}.Current(ctx, scope)
			require.NoError(t, err)
			rows, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: cur.Revision})
			require.NoError(t, err)
			require.Len(t, rows, len(cur.Entries))
			for _, row := range rows {
				require.Equal(t, "model-b", row.Model)
			}
		}
		m, err = r.SearchMode(ctx, "scope/3", "how do we ship a release", 10, "")
		require.NoError(t, err)
		require.Equal(t, memory.ModeHybrid, m.Mode)
		require.Equal(t, paraphraseFacts[0], m.Entries[0].Content)

		// A stale payload (the model changed again before the item ran) writes nothing.
		_, err = e.ledger.Enqueue(ctx, memory.EmbedRequest("scope/1", "model-a", 3))
		require.NoError(t, err)
		require.Equal(t, "model_changed", e.runOne(t, h).ResultCode)
	})
}

// waitDB waits until the database clock has moved on by d (the scheduler's due times are on it).
func waitDB(t *testing.T, s db.Store, d time.Duration) {
	t.Helper()
	start, err := s.DBNow(context.Background())
	require.NoError(t, err)
	testutil.WaitDBPast(t, s, start.Add(d))
}

// flakyEmbedder fails every call after the first ok ones.
type flakyEmbedder struct {
	provider.Embedder
	ok    int
	calls int
}

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls++
	if f.calls > f.ok {
		return nil, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeUnavailable, true)
	}
	return f.Embedder.Embed(ctx, texts)
}

// TestReembedResumes: a memory_embed whose embedder fails after the first batch keeps the batch it wrote (fenced by
// its claim), ends incomplete without failing — so the memory lane is never blocked — and the next one sends only
// the rest.
func TestReembedResumes(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		var facts []string
		for i := range provider.MaxEmbedBatch + 30 {
			facts = append(facts, fmt.Sprintf("Service number %d listens on port %d.", i, 8000+i))
		}
		flushFacts(t, e, e.handler, "big", facts...) // no embedder: no vectors; one window of 100 Sources
		_, err := e.ledger.Enqueue(ctx, e.cons.EnqueueRequest("big"))
		require.NoError(t, err)
		require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode) // the other 30
		cur, err := memory.Reader{Store: s}.Current(ctx, "big")
		require.NoError(t, err)
		require.Len(t, cur.Entries, len(facts))
		rev := cur.Revision

		local := provider.NewLocalEmbedder()
		flaky := &flakyEmbedder{Embedder: local, ok: 1}
		_, err = e.ledger.Enqueue(ctx, memory.EmbedRequest("big", local.Model(), 3))
		require.NoError(t, err)
		item := e.runOne(t, &memory.EmbedHandler{Ledger: e.ledger, Embedder: flaky})
		require.Equal(t, db.StatusSucceeded, item.Status)
		require.Equal(t, "incomplete", item.ResultCode)
		var er memory.EmbedResult
		require.NoError(t, json.Unmarshal(item.ResultPayload, &er))
		require.Equal(t, provider.MaxEmbedBatch, er.Computed)
		require.Equal(t, 30, er.Missing)
		rows, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "big", Revision: rev})
		require.NoError(t, err)
		require.Equal(t, provider.MaxEmbedBatch, len(rows), "the first batch was written")

		counting := &flakyEmbedder{Embedder: local, ok: 100}
		d := memory.EmbedDiscoverer{Store: s, Model: local.Model(), Every: time.Hour, MaxAttempts: 3}
		reqs, _, err := d.Page(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, reqs, 1)
		_, err = e.ledger.Enqueue(ctx, reqs[0])
		require.NoError(t, err)
		item = e.runOne(t, &memory.EmbedHandler{Ledger: e.ledger, Embedder: counting})
		require.Equal(t, "embedded", item.ResultCode)
		require.NoError(t, json.Unmarshal(item.ResultPayload, &er))
		require.Equal(t, 30, er.Computed, "only the rest")
		require.Equal(t, 1, counting.calls)
		rows, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "big", Revision: rev})
		require.NoError(t, err)
		require.Equal(t, len(facts), len(rows))

		// The next flush reuses every vector of an unchanged entry and computes only the new one.
		h := &memory.Handler{Store: s, Provider: provider.NewLocal(), Embedder: counting}
		done := flushFacts(t, e, h, "big", "One more fact arrives.")
		require.Equal(t, "processed", done.ResultCode)
		var res memory.FlushResult
		require.NoError(t, json.Unmarshal(done.ResultPayload, &res))
		require.Equal(t, &memory.EmbeddingStats{Model: local.Model(), Computed: 1, Reused: len(facts)}, res.Embeddings)
		require.Equal(t, 2, counting.calls)
		rows, err = s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "big", Revision: rev + 1})
		require.NoError(t, err)
		require.Equal(t, len(facts)+1, len(rows))
		old, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: "big", Revision: rev})
		require.NoError(t, err)
		require.Empty(t, old, "the commit deletes the older revision's vectors")
	})
}
