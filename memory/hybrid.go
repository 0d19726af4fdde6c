package memory

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// Hybrid retrieval (docs/memory.md#hybrid-ranking): the full-text rank (BM25, Rank) and the vector rank (cosine
// similarity of the entry's vector and the query's, exact, over every entry of the revision) fused by reciprocal
// rank fusion.

// Search modes (the mode parameter of GET /v1/memory/search and GET /v1/context).
const (
	ModeFTS      = "fts"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// RRFK is the k of reciprocal rank fusion: an entry's hybrid score is the sum, over the methods that ranked it, of
// 1 / (RRFK + rank), rank counted from 1. 60 is the value of the method's original description; it keeps one
// method's first place from outweighing a good place in both.
const RRFK = 60

// DefaultQueryTimeout bounds the query embedding of one request when Reader.QueryTimeout is zero.
const DefaultQueryTimeout = 2 * time.Second

// DefaultMinSimilarity is the least cosine similarity of a vector match for an embedder other than the local one
// when Reader.MinSimilarity is zero (the local embedder's is provider.LocalMinSimilarity).
const DefaultMinSimilarity = 0.3

// Ranked is an entry with its place in a ranking and the score of each method that matched it.
type Ranked struct {
	Entry db.MemoryEntry
	// Score is what the ranking sorted by: BM25 (fts), cosine similarity (semantic) or the RRF sum (hybrid).
	Score float64
	// FTS is the entry's BM25 score when it matched the query's terms; Semantic its cosine similarity when its vector
	// was at least the minimum similarity. Nil when that method did not match it (or did not run).
	FTS, Semantic *float64
}

// ValidMode reports whether mode is "" (the default) or one of the three modes.
func ValidMode(mode string) bool {
	switch mode {
	case "", ModeFTS, ModeSemantic, ModeHybrid:
		return true
	}
	return false
}

func checkMode(mode string) error {
	if !ValidMode(mode) {
		return &sources.ValidationError{Field: "mode", Message: "must be fts, semantic or hybrid"}
	}
	return nil
}

// minSimilarity is the least cosine of a vector match under r's embedder.
func (r Reader) minSimilarity() float64 {
	switch {
	case r.MinSimilarity > 0:
		return r.MinSimilarity
	case r.Embedder != nil && r.Embedder.Model() == provider.LocalEmbeddingModel:
		return provider.LocalMinSimilarity
	}
	return DefaultMinSimilarity
}

// entryVectors returns the stored vectors (EncodeVector's bytes) of the embedder's model for a revision, by entry
// number; they are compared with the query's without being decoded (provider.DotEncoded).
func (r Reader) entryVectors(ctx context.Context, scope string, revision int64) (map[int32][]byte, error) {
	if r.Embedder == nil || revision == 0 {
		return nil, nil
	}
	rows, err := r.Store.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: revision})
	if err != nil {
		return nil, err
	}
	model := r.Embedder.Model()
	out := make(map[int32][]byte, len(rows))
	for _, row := range rows {
		if row.Model == model {
			out[row.EntryNo] = row.Embedding
		}
	}
	return out, nil
}

// queryVector embeds the query within the query timeout; ok is false when the embedder failed or was too slow.
func (r Reader) queryVector(ctx context.Context, q string) ([]float32, bool) {
	timeout := r.QueryTimeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vs, err := r.Embedder.Embed(ctx, []string{q})
	if err != nil || len(vs) != 1 || len(vs[0]) == 0 {
		return nil, false
	}
	return vs[0], true
}

// ranking is the outcome of ranking a revision's entries for one query.
type ranking struct {
	Mode     string // the method that ranked: fts, semantic or hybrid
	Degraded bool   // a vector method was asked for (or the default) but the query embedding failed: fts instead
	Ranked   []Ranked
}

// rankEntries ranks entries (of the given revision) for q in mode ("" = hybrid when the revision has vectors of the
// embedder's model, else fts). all asks full-text matches to contain every query term (search) rather than one
// (context). Without vectors of the current model a vector mode falls back to fts (Degraded false: nothing to
// compare with); when the query embedding fails or runs out of time it falls back to fts with Degraded true.
func (r Reader) rankEntries(ctx context.Context, scope string, revision int64, entries []db.MemoryEntry, q, mode string, all bool) (ranking, error) {
	fts := func(degraded bool) ranking {
		out := ranking{Mode: ModeFTS, Degraded: degraded}
		for _, s := range Rank(entries, q, all) {
			score := s.Score
			out.Ranked = append(out.Ranked, Ranked{Entry: s.Entry, Score: score, FTS: &score})
		}
		return out
	}
	if mode == ModeFTS || r.Embedder == nil || q == "" || len(entries) == 0 {
		return fts(false), nil
	}
	vecs, err := r.entryVectors(ctx, scope, revision)
	if err != nil {
		return ranking{}, err
	}
	if len(vecs) == 0 {
		return fts(false), nil
	}
	qv, ok := r.queryVector(ctx, q)
	if !ok {
		if err := ctx.Err(); err != nil { // the request itself went away
			return ranking{}, err
		}
		return fts(true), nil
	}
	sem := semanticRank(entries, vecs, qv, r.minSimilarity())
	if mode == ModeSemantic {
		return ranking{Mode: ModeSemantic, Ranked: sem}, nil
	}
	return ranking{Mode: ModeHybrid, Ranked: fuse(Rank(entries, q, all), sem)}, nil
}

// semanticRank returns the entries whose vector's cosine similarity to qv is at least minSim, best first (ties: the
// later entry first, like Rank).
func semanticRank(entries []db.MemoryEntry, vecs map[int32][]byte, qv []float32, minSim float64) []Ranked {
	var out []Ranked
	for _, e := range entries {
		dot, ok := provider.DotEncoded(qv, vecs[e.EntryNo])
		if !ok { // no vector, or one of another length than the query's
			continue
		}
		sim := math.Round(dot*1e4) / 1e4
		if sim < minSim {
			continue
		}
		s := sim
		out = append(out, Ranked{Entry: e, Score: sim, Semantic: &s})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return out[a].Entry.EntryNo > out[b].Entry.EntryNo
	})
	return out
}

// fuse is reciprocal rank fusion of a full-text and a vector ranking: every entry either ranked gets
// Σ 1/(RRFK + rank). Ties go to the higher cosine similarity (an entry only the vectors found beats an equal
// full-text-only place), then the higher BM25, then the later entry.
func fuse(fts []Scored, sem []Ranked) []Ranked {
	byNo := map[int32]*Ranked{}
	var order []int32
	get := func(e db.MemoryEntry) *Ranked {
		r, ok := byNo[e.EntryNo]
		if !ok {
			r = &Ranked{Entry: e}
			byNo[e.EntryNo] = r
			order = append(order, e.EntryNo)
		}
		return r
	}
	for i, s := range fts {
		r := get(s.Entry)
		score := s.Score
		r.FTS = &score
		r.Score += 1 / float64(RRFK+i+1)
	}
	for i, s := range sem {
		r := get(s.Entry)
		r.Semantic = s.Semantic
		r.Score += 1 / float64(RRFK+i+1)
	}
	out := make([]Ranked, 0, len(order))
	for _, no := range order {
		r := *byNo[no]
		r.Score = math.Round(r.Score*1e6) / 1e6
		out = append(out, r)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		switch {
		case x.Score != y.Score:
			return x.Score > y.Score
		case val(x.Semantic) != val(y.Semantic):
			return val(x.Semantic) > val(y.Semantic)
		case val(x.FTS) != val(y.FTS):
			return val(x.FTS) > val(y.FTS)
		}
		return x.Entry.EntryNo > y.Entry.EntryNo
	})
	return out
}
