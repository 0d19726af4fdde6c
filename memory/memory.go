package memory

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// Names of the memory flush.
const (
	Kind        = "powercontext.memory.source-window"
	PublicKind  = "memory_flush"
	CursorName  = "memory-source-window"
	WindowLimit = 100
)

// WorkKinds are the work kinds this package runs (the memory flush and the re-embedding of a scope); app hands them
// to telemetry, which labels metrics by them.
func WorkKinds() []string { return []string{Kind, KindEmbed} }

// Consumer returns the memory flush's journal consumer with the given retry budget.
func Consumer(maxAttempts int32) sources.Consumer {
	return sources.Consumer{Kind: Kind, CursorName: CursorName, LanePrefix: "memory", Limit: WindowLimit, MaxAttempts: maxAttempts}
}

// FlushResult is the result payload of a memory flush (also the flush API body).
type FlushResult struct {
	Type                 string          `json:"type"`
	PreviousCursor       int64           `json:"previous_cursor"`
	CurrentCursor        int64           `json:"current_cursor"`
	HighWatermark        int64           `json:"high_watermark"`
	ProcessedSourceCount int64           `json:"processed_source_count"`
	Memory               *RevisionResult `json:"memory"`
	// Embeddings says how the new revision's entry vectors were made (absent without an embedder).
	Embeddings *EmbeddingStats `json:"embeddings,omitempty"`
}

// RevisionResult names a Memory revision.
type RevisionResult struct {
	Revision int64 `json:"revision"`
}

// Handler is the ledger handler of memory flushes.
type Handler struct {
	Store    db.Store
	Provider provider.Provider
	// MaxRequestBytes is the byte budget of one provider request (0 = none): a window whose Sources do not fit is
	// narrowed to the prefix that fits (sources.Fit) and the rest becomes the next window. The current entries,
	// which every request carries, count against it, but the Sources always get sources.MinSourceBudget of it.
	MaxRequestBytes int
	// Embedder gives the new revision's entries their vectors (docs/memory.md#embeddings); nil = no vectors.
	Embedder provider.Embedder
}

// Kind implements coordinator.Handler: the work kind it runs.
func (h *Handler) Kind() string { return Kind }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h *Handler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: sources.PayloadVersion, Max: sources.PayloadVersion}
}

// Prepare reads the window and calls the provider outside any transaction; the returned commit writes the
// revision and advances the cursor inside the final transaction.
func (h *Handler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	p, cur, state, err := sources.OpenWindow(ctx, h.Store, item, CursorName)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	if state == sources.WindowAlreadyCommitted {
		// An earlier attempt committed and only its response was lost: finish without writing anything.
		var mem *RevisionResult
		if rev, err := h.Store.MemoryRevisionLatest(ctx, item.ScopeID); err == nil {
			mem = &RevisionResult{Revision: rev.Revision}
		}
		return coordinator.Prepared{Result: coordinator.Result{Code: "already_committed", Payload: FlushResult{
			Type: PublicKind, PreviousCursor: p.After, CurrentCursor: cur.Position, HighWatermark: p.HighWatermark,
			ProcessedSourceCount: 0, Memory: mem}}}, nil
	}
	window, err := sources.ReadWindow(ctx, h.Store, item.ScopeID, p)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	latest, existing, err := current(ctx, h.Store, item.ScopeID)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	// Entries an older build wrote have no id yet: they get theirs now, kept from this revision on.
	existing, lastID, err := WithEntryIDs(ctx, h.Store, latest, existing)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	if h.MaxRequestBytes > 0 {
		budget := h.MaxRequestBytes
		for _, e := range existing {
			budget -= len(e.Content) + len(e.SourcePositions) + entryOverheadBytes
		}
		window, p, _ = sources.Fit(window, p, max(budget, sources.MinSourceBudget(h.MaxRequestBytes)))
	}
	req := provider.ExtractMemoryRequest{ScopeID: item.ScopeID, Window: toProviderSources(window)}
	for _, e := range existing {
		var pos []int64
		_ = json.Unmarshal(e.SourcePositions, &pos)
		req.Existing = append(req.Existing, provider.MemoryEntry{ID: e.EntryID, Content: e.Content, SourcePositions: pos})
	}
	// A window of tombstones only (forgotten Sources, docs/protocol.md#forgetting-and-erasing) has nothing to
	// extract: the revision keeps the existing entries and no provider is asked.
	var resp provider.ExtractMemoryResponse
	if len(req.Window) > 0 {
		if resp, err = h.Provider.ExtractMemory(ctx, req); err != nil {
			return coordinator.Prepared{}, err
		}
	}
	// The operations apply to the current revision (read above; only this lane writes revisions, so it is still the
	// current one at commit): the result is the complete next revision (docs/memory.md#operations).
	next, err := provider.ApplyOps(req, resp.Ops, lastID)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	revision := latest.Revision + 1
	evicted, _ := json.Marshal(next.Evicted)
	result := FlushResult{Type: PublicKind, PreviousCursor: p.After, CurrentCursor: p.Through, HighWatermark: p.HighWatermark,
		ProcessedSourceCount: p.Through - p.After, Memory: &RevisionResult{Revision: revision}}
	var vectors revisionVectors
	if h.Embedder != nil {
		if vectors, err = vectorsFor(ctx, h.Store, h.Embedder, item.ScopeID, latest.Revision, existing, next.Entries, revision); err != nil {
			return coordinator.Prepared{}, err
		}
		result.Embeddings = &vectors.stats
	}
	commit := func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
		if err := sources.Advance(ctx, q, item.ScopeID, p, now); err != nil {
			return err
		}
		// Revisions of a scope are only written here, under the memory lane lock and the cursor CAS, so the
		// latest revision cannot move between prepare and commit.
		if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: item.ScopeID, Revision: revision, WorkID: item.WorkID,
			CursorGeneration: p.CursorGeneration, WindowAfter: p.After, WindowThrough: p.Through,
			EntryCount: int32(len(next.Entries)), CreatedAt: now, LastEntryID: next.LastID, EvictedEntryIDs: evicted}); err != nil {
			if errors.Is(err, db.ErrConflict) {
				return coordinator.NewHandlerError(coordinator.CategoryConflict, coordinator.CodeCursorChanged, false)
			}
			return err
		}
		rows := make([]db.MemoryEntry, len(next.Entries))
		for i, e := range next.Entries {
			pos, _ := json.Marshal(e.SourcePositions)
			rows[i] = db.MemoryEntry{ScopeID: item.ScopeID, Revision: revision, EntryNo: int32(i + 1),
				Content: e.Content, SourcePositions: pos, CreatedAt: now, EntryID: e.ID}
		}
		if err := q.MemoryEntryInsertMany(ctx, rows); err != nil {
			return err
		}
		if h.Embedder != nil {
			return vectors.write(ctx, q, item.ScopeID, revision, now)
		}
		return nil
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed", Payload: result}, Commit: commit}, nil
}

// entryOverheadBytes is what one existing entry costs in a request beyond its content and positions.
const entryOverheadBytes = 32

func toProviderSources(srcs []db.Source) []provider.Source {
	out := make([]provider.Source, 0, len(srcs))
	for _, s := range srcs {
		if !s.ErasedAt.IsZero() { // a tombstone: nothing of a forgotten Source reaches the provider
			continue
		}
		var md map[string]any
		_ = json.Unmarshal(s.Metadata, &md)
		out = append(out, provider.Source{Position: s.JournalPosition, Type: s.SourceType, Content: s.Content, Metadata: md})
	}
	return out
}

// current returns the latest revision (zero when none) and its entries.
func current(ctx context.Context, q db.Queries, scope string) (db.MemoryRevision, []db.MemoryEntry, error) {
	rev, err := q.MemoryRevisionLatest(ctx, scope)
	if errors.Is(err, db.ErrNotFound) {
		return db.MemoryRevision{}, nil, nil
	}
	if err != nil {
		return db.MemoryRevision{}, nil, err
	}
	entries, err := q.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: rev.Revision})
	return rev, entries, err
}

// Memory is a scope's current revision and its entries.
type Memory struct {
	ScopeID   string
	Revision  int64 // 0 when nothing was committed yet
	CreatedAt time.Time
	Entries   []db.MemoryEntry
	Scores    []float64 // search only: the relevance of each entry, best first
	// Evicted are the ids of the entries the entry cap dropped when this revision was written
	// (docs/memory.md#eviction): empty when none was, nil when the revision does not record it (an older build
	// wrote it, or there is no revision).
	Evicted []int64
	// Search only: the score of each method for each entry (Methods[i] is Entries[i]'s), the method that ranked
	// (fts, semantic or hybrid) and whether a vector method fell back to fts because the query embedding failed.
	Methods  []MethodScores
	Mode     string
	Degraded bool
}

// MethodScores are an entry's scores by method: BM25 when it matched the query's terms, cosine similarity when its
// vector matched the query's; nil when that method did not match it or did not run.
type MethodScores struct {
	FTS, Semantic *float64
}

// evictedOf reads a revision's evicted ids: nil when it records none (NULL), never nil otherwise.
func evictedOf(r db.MemoryRevision) []int64 {
	if r.EvictedEntryIDs == nil {
		return nil
	}
	ids := []int64{}
	_ = json.Unmarshal(r.EvictedEntryIDs, &ids)
	return ids
}

// Reader reads committed Memory.
type Reader struct {
	Store db.Store
	// Embedder embeds queries for the vector modes (docs/memory.md#hybrid-ranking); nil = full-text only. Only
	// vectors of its Model are compared.
	Embedder provider.Embedder
	// QueryTimeout bounds a query's embedding (DefaultQueryTimeout when zero); past it the request is answered by
	// full-text ranking, marked degraded.
	QueryTimeout time.Duration
	// MinSimilarity is the least cosine similarity of a vector match (zero: provider.LocalMinSimilarity for the
	// local embedder, DefaultMinSimilarity for others).
	MinSimilarity float64
}

// Current returns the latest revision of a scope.
func (r Reader) Current(ctx context.Context, scope string) (Memory, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Memory{}, err
	}
	rev, err := r.Store.MemoryRevisionLatest(ctx, scope)
	if errors.Is(err, db.ErrNotFound) {
		return Memory{ScopeID: scope}, nil
	}
	if err != nil {
		return Memory{}, err
	}
	entries, err := r.Store.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: rev.Revision})
	if err != nil {
		return Memory{}, err
	}
	return Memory{ScopeID: scope, Revision: rev.Revision, CreatedAt: rev.CreatedAt, Entries: entries, Evicted: evictedOf(rev)}, nil
}

// Search returns the entries of the latest revision that match query, ranked in the default mode (SearchMode).
func (r Reader) Search(ctx context.Context, scope, query string, limit int) (Memory, error) {
	return r.SearchMode(ctx, scope, query, limit, "")
}

// SearchMode returns the entries of the latest revision that match query, best first, at most limit: in mode fts
// those containing every term of query ranked by BM25 (Rank); in mode semantic those whose vector is at least the
// minimum similarity to the query's, by cosine; in mode hybrid either, fused by reciprocal rank (RRFK). Mode ""
// is hybrid when the revision has vectors of the embedder's model, else fts. Scores[i] is the ranking score of
// Entries[i] and Methods[i] its score by method; Mode says which ranking ran and Degraded whether a vector mode fell
// back to fts because the query could not be embedded in time (docs/memory.md#hybrid-ranking).
func (r Reader) SearchMode(ctx context.Context, scope, query string, limit int, mode string) (Memory, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Memory{}, err
	}
	if query == "" || len(query) > 256 {
		return Memory{}, &sources.ValidationError{Field: "q", Message: "must be 1..256 bytes"}
	}
	if limit < 1 || limit > 100 {
		return Memory{}, &sources.ValidationError{Field: "limit", Message: "must be 1..100"}
	}
	if err := checkMode(mode); err != nil {
		return Memory{}, err
	}
	m, err := r.Current(ctx, scope)
	if err != nil {
		return m, err
	}
	m.Mode = ModeFTS
	if m.Revision == 0 {
		return m, nil
	}
	rk, err := r.rankEntries(ctx, scope, m.Revision, m.Entries, query, mode, true)
	if err != nil {
		return Memory{}, err
	}
	ranked := rk.Ranked
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	m.Mode, m.Degraded = rk.Mode, rk.Degraded
	m.Entries, m.Scores = make([]db.MemoryEntry, 0, len(ranked)), make([]float64, 0, len(ranked))
	m.Methods = make([]MethodScores, 0, len(ranked))
	for _, s := range ranked {
		m.Entries = append(m.Entries, s.Entry)
		m.Scores = append(m.Scores, s.Score)
		m.Methods = append(m.Methods, MethodScores{FTS: s.FTS, Semantic: s.Semantic})
	}
	return m, nil
}
