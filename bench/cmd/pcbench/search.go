package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
)

// searchResult is the latency of GET /v1/memory/search's ranking (memory.Reader.SearchMode: the reads of the
// current revision's entries and vectors plus the exact ranking in Go) for one scope size, vector length and mode,
// without the provider call: the query vector comes from a fixed embedder that answers at once.
type searchResult struct {
	engine   db.Engine
	entries  int
	dims     int
	mode     string
	queries  int
	p50, p99 time.Duration
	readP50  time.Duration // reading the revision's entries and vectors alone (the database part)
	err      error
}

// fixedEmbedder answers every query with one precomputed vector: the benchmark measures search, not a provider.
type fixedEmbedder struct {
	model string
	vec   []float32
}

func (f fixedEmbedder) Name() string  { return "local" }
func (f fixedEmbedder) Model() string { return f.model }
func (f fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = f.vec
	}
	return out, nil
}

var searchWords = strings.Fields(`deploy release staging production database backup snapshot billing invoice payment
	queue worker scheduler lease fence lane cursor window journal source memory entry revision search vector index
	cache proxy gateway token session replica region cluster node pod container image registry build test lint
	review approve reject incubate lesson outcome alert metric trace span log dashboard quota limit budget
	postgres mysql sqlite oceanbase mariadb kafka redis nginx envoy terraform helm kubectl docker python golang
	typescript rust java monday tuesday wednesday thursday friday noon midnight nightly weekly hourly alice bob
	carol dave erin frank grace heidi ivan judy`)

func unitVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		sum += x * x
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
	return v
}

// runSearch seeds one scope per (entries, dims) in a fresh database of engine — a revision of that many entries (the
// service caps a revision at 500; 2,000 shows the trend beyond) with one vector each — and times `queries` searches
// per mode after a warm-up.
func runSearch(ctx context.Context, srv *servers, engine db.Engine, sizes, dimsList []int, queries int) []searchResult {
	var out []searchResult
	fail := func(err error) []searchResult {
		for _, n := range sizes {
			for _, d := range dimsList {
				out = append(out, searchResult{engine: engine, entries: n, dims: d, err: err})
			}
		}
		return out
	}
	bdb, err := srv.createDB(ctx, engine)
	if err != nil {
		return fail(err)
	}
	defer bdb.drop()
	store, err := openStore(ctx, bdb, storeOptions{})
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	r := rand.New(rand.NewPCG(42, uint64(len(sizes))))
	for _, n := range sizes {
		for _, dims := range dimsList {
			model := fmt.Sprintf("bench-%d", dims)
			scope := fmt.Sprintf("search/%d/%d", n, dims)
			if err := seedSearchScope(ctx, store, r, scope, model, n, dims); err != nil {
				out = append(out, searchResult{engine: engine, entries: n, dims: dims, err: err})
				continue
			}
			reader := memory.Reader{Store: store, Embedder: fixedEmbedder{model: model, vec: unitVector(r, dims)}, MinSimilarity: 0.01}
			readP50, err := timeReads(ctx, store, scope, queries)
			for _, mode := range []string{memory.ModeFTS, memory.ModeSemantic, memory.ModeHybrid} {
				res := searchResult{engine: engine, entries: n, dims: dims, mode: mode, queries: queries, readP50: readP50, err: err}
				if err == nil {
					res.p50, res.p99, res.err = timeSearches(ctx, reader, r, scope, mode, queries)
				}
				out = append(out, res)
			}
		}
	}
	return out
}

func seedSearchScope(ctx context.Context, store db.Store, r *rand.Rand, scope, model string, n, dims int) error {
	now, err := store.DBNow(ctx)
	if err != nil {
		return err
	}
	if err := store.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: scope, Revision: 1, WorkID: "00000000-0000-0000-0000-000000000001",
		CursorGeneration: 1, WindowAfter: 0, WindowThrough: 1, EntryCount: int32(n), CreatedAt: now}); err != nil {
		return err
	}
	for start := 0; start < n; start += 250 {
		err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			for i := start; i < min(start+250, n); i++ {
				words := make([]string, 12)
				for w := range words {
					words[w] = searchWords[r.IntN(len(searchWords))]
				}
				content := fmt.Sprintf("Fact %d: %s.", i+1, strings.Join(words, " "))
				if err := q.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: scope, Revision: 1, EntryNo: int32(i + 1), Content: content,
					SourcePositions: []byte("[1]"), CreatedAt: now}); err != nil {
					return err
				}
				if err := q.MemoryEmbeddingUpsert(ctx, db.MemoryEmbedding{ScopeID: scope, Revision: 1, EntryNo: int32(i + 1), Model: model,
					Dimensions: int32(dims), Embedding: provider.EncodeVector(unitVector(r, dims)), CreatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// timeReads times the two reads a vector search makes of the current revision (entries, vectors), without ranking.
func timeReads(ctx context.Context, store db.Store, scope string, queries int) (time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < queries+5; i++ {
		start := time.Now()
		p := db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: 1}
		if _, err := store.MemoryEntryListByRevision(ctx, p); err != nil {
			return 0, err
		}
		if _, err := store.MemoryEmbeddingListByRevision(ctx, p); err != nil {
			return 0, err
		}
		if i >= 5 {
			ds = append(ds, time.Since(start))
		}
	}
	p50, _ := percentiles(ds)
	return p50, nil
}

func timeSearches(ctx context.Context, reader memory.Reader, r *rand.Rand, scope, mode string, queries int) (p50, p99 time.Duration, err error) {
	var ds []time.Duration
	for i := 0; i < queries+5; i++ {
		q := searchWords[r.IntN(len(searchWords))] + " " + searchWords[r.IntN(len(searchWords))]
		start := time.Now()
		m, err := reader.SearchMode(ctx, scope, q, 20, mode)
		if err != nil {
			return 0, 0, err
		}
		if m.Mode != mode || m.Degraded {
			return 0, 0, fmt.Errorf("search ran %s (degraded %t), not %s", m.Mode, m.Degraded, mode)
		}
		if i >= 5 {
			ds = append(ds, time.Since(start))
		}
	}
	p50, p99 = percentiles(ds)
	return p50, p99, nil
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(math.Ceil(q*float64(len(ds))))-1)] }
	return at(0.50), at(0.99)
}

func (x searchResult) summary() string {
	if x.err != nil {
		return "error: " + x.err.Error()
	}
	return fmt.Sprintf("%s: p50 %s p99 %s (reads p50 %s)", x.mode, ms(x.p50), ms(x.p99), ms(x.readP50))
}
