package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// Entry embeddings (docs/memory.md#embeddings). Every entry of a scope's latest revision gets a vector of the
// configured embedding model: computed in the worker's prepare (never inside a transaction) and written in the
// revision's final commit, reused from the previous revision for an entry whose exact text it already embedded with
// the same model, so a revision that only adds facts embeds only those. Only the latest revision keeps vectors.

// embedReuseCleanup bounds the older-revision vectors one commit deletes (normally the previous revision's, at most
// provider.MaxMemoryEntries); anything beyond is left to the next commit.
const embedReuseCleanup = 2 * provider.MaxMemoryEntries

// EmbeddingStats says what one revision's vectors cost; it is part of a flush's and a memory_embed's result.
type EmbeddingStats struct {
	Model    string `json:"model"`
	Computed int    `json:"computed"` // vectors the embedder computed
	Reused   int    `json:"reused"`   // vectors reused for text the model had already embedded
	Missing  int    `json:"missing"`  // entries left without a vector (the embedder failed); search keeps them full-text only
}

// storedVectors returns the vectors of model stored for a revision, by entry text (the key of reuse: the same text
// in the same space has the same vector), read from the revision's rows joined with its entries.
func storedVectors(ctx context.Context, q db.Queries, scope string, revision int64, entries []db.MemoryEntry, model string) (map[string]db.MemoryEmbedding, error) {
	out := map[string]db.MemoryEmbedding{}
	if revision == 0 || len(entries) == 0 {
		return out, nil
	}
	rows, err := q.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: revision})
	if err != nil {
		return nil, err
	}
	text := make(map[int32]string, len(entries))
	for _, e := range entries {
		text[e.EntryNo] = e.Content
	}
	for _, r := range rows {
		if t, ok := text[r.EntryNo]; ok && (model == "" || r.Model == model) {
			out[t] = r
		}
	}
	return out, nil
}

// embedTexts computes vectors for texts in calls of at most provider.MaxEmbedBatch; each finished batch is handed to
// done (which may write it). It stops at the first failure and returns it.
func embedTexts(ctx context.Context, e provider.Embedder, texts []string, done func(texts []string, vecs [][]float32) error) error {
	for start := 0; start < len(texts); start += provider.MaxEmbedBatch {
		batch := texts[start:min(start+provider.MaxEmbedBatch, len(texts))]
		vecs, err := e.Embed(ctx, batch)
		if err != nil {
			return err
		}
		if len(vecs) != len(batch) {
			return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, true)
		}
		if err := done(batch, vecs); err != nil {
			return err
		}
	}
	return nil
}

// revisionVectors is the vectors of a revision to be committed: one row per entry that has one.
type revisionVectors struct {
	rows  []db.MemoryEmbedding
	stats EmbeddingStats
}

// vectorsFor prepares the vectors of a new revision holding entries (numbered from 1): reused from the latest
// revision's vectors of the embedder's model by exact text, the rest computed. An embedder failure leaves those
// entries without a vector (counted as Missing: search treats them as full-text only and the embedding discoverer
// fills them in later); only the caller's cancellation is returned as an error.
func vectorsFor(ctx context.Context, q db.Queries, e provider.Embedder, scope string, latest int64, existing []db.MemoryEntry,
	entries []provider.MemoryEntry, revision int64) (revisionVectors, error) {
	model := e.Model()
	out := revisionVectors{stats: EmbeddingStats{Model: model}}
	known, err := storedVectors(ctx, q, scope, latest, existing, model)
	if err != nil {
		return out, err
	}
	vec := map[string][]byte{}
	dims := map[string]int32{}
	for t, r := range known {
		vec[t], dims[t] = r.Embedding, r.Dimensions
	}
	var todo []string
	seen := map[string]bool{}
	for _, en := range entries {
		if _, ok := vec[en.Content]; !ok && !seen[en.Content] {
			seen[en.Content] = true
			todo = append(todo, en.Content)
		}
	}
	err = embedTexts(ctx, e, todo, func(texts []string, vecs [][]float32) error {
		for i, t := range texts {
			vec[t], dims[t] = provider.EncodeVector(vecs[i]), int32(len(vecs[i]))
			out.stats.Computed++
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return out, err
	}
	for i, en := range entries {
		b, ok := vec[en.Content]
		if !ok || dims[en.Content] < 1 {
			out.stats.Missing++
			continue
		}
		if _, reused := known[en.Content]; reused {
			out.stats.Reused++
		}
		out.rows = append(out.rows, db.MemoryEmbedding{ScopeID: scope, Revision: revision, EntryNo: int32(i + 1), Model: model,
			Dimensions: dims[en.Content], Embedding: b})
	}
	return out, nil
}

// write stores the vectors in the revision's final transaction (now is its database clock) and deletes the vectors
// of the scope's older revisions.
func (v revisionVectors) write(ctx context.Context, q db.Queries, scope string, revision int64, now time.Time) error {
	rows := make([]db.MemoryEmbedding, len(v.rows))
	for i, r := range v.rows {
		r.CreatedAt = now
		rows[i] = r
	}
	if err := q.MemoryEmbeddingUpsertMany(ctx, rows); err != nil {
		return err
	}
	_, err := q.MemoryEmbeddingDeleteBefore(ctx, db.MemoryEmbeddingDeleteBeforeParams{ScopeID: scope, BeforeRevision: revision, Limit: embedReuseCleanup})
	return err
}

// CarriedVectors reads a revision's stored vectors (any model) by entry text, for a commit that writes a new revision
// of the same texts without calling an embedder (a redaction, docs/protocol.md#forgetting-and-erasing).
func CarriedVectors(ctx context.Context, q db.Queries, scope string, revision int64, entries []db.MemoryEntry) (map[string]db.MemoryEmbedding, error) {
	return storedVectors(ctx, q, scope, revision, entries, "")
}

// WriteCarriedVectors writes, inside the final transaction of a new revision, the carried vector of each of its
// texts (contents[i] is entry i+1) and deletes the vectors of the older revisions — among them every vector of an
// entry the new revision no longer holds.
func WriteCarriedVectors(ctx context.Context, q db.Queries, scope string, revision int64, contents []string,
	carried map[string]db.MemoryEmbedding, now time.Time) error {
	var v revisionVectors
	for i, t := range contents {
		if r, ok := carried[t]; ok {
			v.rows = append(v.rows, db.MemoryEmbedding{ScopeID: scope, Revision: revision, EntryNo: int32(i + 1), Model: r.Model,
				Dimensions: r.Dimensions, Embedding: r.Embedding})
		}
	}
	return v.write(ctx, q, scope, revision, now)
}

// Names of the re-embedding of a scope (docs/memory.md#model-changes).
const (
	KindEmbed       = "powercontext.memory.embed"
	PublicKindEmbed = "memory_embed"
	// EmbedPayloadVersion is the version of EmbedPayload.
	EmbedPayloadVersion = 1
)

// EmbedPayload is the payload of a memory_embed item: the embedding model whose vectors it writes (a setting, never
// content).
type EmbedPayload struct {
	Model string `json:"model"`
}

// EmbedResult is the result payload of a memory_embed operation. Code embedded (every entry has a vector),
// incomplete (the embedder failed part-way: what was written stays, the discoverer comes back), up_to_date (nothing
// was missing) or model_changed (the configured model is no longer the payload's).
type EmbedResult struct {
	Type string `json:"type"`
	EmbeddingStats
	Memory *RevisionResult `json:"memory"`
}

// EmbedLogicalKey identifies the re-embedding of one scope for one model: the discoverer's repeated scans join the
// live item.
func EmbedLogicalKey(scope, model string) string {
	b, _ := json.Marshal([]string{KindEmbed, scope, model})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// EmbedRequest is the enqueue of a memory_embed item in the scope's memory lane, so it runs between flushes and no
// revision is committed while it writes. Its spec (under the memory lane lock) is idle while the scope is being
// erased.
func EmbedRequest(scope, model string, maxAttempts int32) coordinator.EnqueueRequest {
	laneKey := Consumer(maxAttempts).LaneKey(scope)
	return coordinator.EnqueueRequest{LaneKey: laneKey, Spec: func(ctx context.Context, q db.Queries) (*coordinator.EnqueueSpec, error) {
		if erasing, err := sources.Erasing(ctx, q, scope); err != nil || erasing {
			return nil, err
		}
		return &coordinator.EnqueueSpec{Kind: KindEmbed, PayloadVersion: EmbedPayloadVersion, ScopeID: scope,
			LogicalKey: EmbedLogicalKey(scope, model), Payload: EmbedPayload{Model: model}, MaxAttempts: max(maxAttempts, 1)}, nil
	}}
}

// EmbedDiscoverer finds the scopes whose latest revision has entries without a vector of the configured model — after
// a model change, after a flush whose embedder failed, or data written before embeddings existed — and enqueues one
// memory_embed item per scope (docs/memory.md#model-changes).
type EmbedDiscoverer struct {
	Store       db.Store
	Model       string
	Every       time.Duration
	MaxAttempts int32
}

// Name implements coordinator.Discoverer: the name of its scan.
func (d EmbedDiscoverer) Name() string { return "memory-embed" }

// Interval implements coordinator.Discoverer: how often it runs.
func (d EmbedDiscoverer) Interval() time.Duration { return d.Every }

// Page implements coordinator.Discoverer: one page of enqueue requests.
func (d EmbedDiscoverer) Page(ctx context.Context, continuation string, size int) ([]coordinator.EnqueueRequest, string, error) {
	scopes, err := d.Store.MemoryEmbeddingListStaleScopes(ctx, db.MemoryEmbeddingListStaleScopesParams{AfterScopeID: continuation,
		Model: d.Model, Limit: int32(size)})
	if err != nil {
		return nil, "", err
	}
	reqs := make([]coordinator.EnqueueRequest, 0, len(scopes))
	for _, s := range scopes {
		reqs = append(reqs, EmbedRequest(s, d.Model, d.MaxAttempts))
	}
	next := ""
	if len(scopes) == size {
		next = scopes[len(scopes)-1]
	}
	return reqs, next, nil
}

// EmbedHandler runs memory_embed items: it gives every entry of the scope's latest revision a vector of the configured
// model. It runs in the scope's memory lane, so the latest revision cannot change under it. Vectors are reused by
// exact text where the revision already has them, the rest computed in batches, each batch written at once in a
// transaction fenced by the item's claim (coordinator.Ledger.InClaim): a retried or recovered item continues where
// the last attempt stopped. An embedder failure ends the item as incomplete — it never fails (and so never blocks the
// scope's memory lane); the discoverer comes back at its next scan. The commit deletes older revisions' vectors.
type EmbedHandler struct {
	Ledger   *coordinator.Ledger
	Embedder provider.Embedder
}

// Kind implements coordinator.Handler: the work kind it runs.
func (h *EmbedHandler) Kind() string { return KindEmbed }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h *EmbedHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: EmbedPayloadVersion, Max: EmbedPayloadVersion}
}

// Prepare implements coordinator.Handler: the work done outside any transaction (embedder calls) and its fenced
// batches.
func (h *EmbedHandler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	var p EmbedPayload
	if item.PayloadVersion != EmbedPayloadVersion || json.Unmarshal(item.Payload, &p) != nil || p.Model == "" {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	res := EmbedResult{Type: PublicKindEmbed, EmbeddingStats: EmbeddingStats{Model: p.Model}}
	if h.Embedder == nil || h.Embedder.Model() != p.Model {
		return coordinator.Prepared{Result: coordinator.Result{Code: "model_changed", Payload: res}}, nil
	}
	store := h.Ledger.Store()
	rev, entries, err := current(ctx, store, item.ScopeID)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	latest := rev.Revision
	if latest == 0 {
		return coordinator.Prepared{Result: coordinator.Result{Code: "up_to_date", Payload: res}}, nil
	}
	res.Memory = &RevisionResult{Revision: latest}
	rows, err := store.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: item.ScopeID, Revision: latest})
	if err != nil {
		return coordinator.Prepared{}, err
	}
	have := map[int32]bool{}
	known := map[string]db.MemoryEmbedding{}
	text := map[int32]string{}
	for _, e := range entries {
		text[e.EntryNo] = e.Content
	}
	for _, r := range rows {
		if r.Model == p.Model {
			have[r.EntryNo] = true
			if t, ok := text[r.EntryNo]; ok {
				known[t] = r
			}
		}
	}
	byText := map[string][]int32{} // the entries still without a vector, by text
	var todo []string
	var reuse []db.MemoryEmbedding
	for _, e := range entries {
		if have[e.EntryNo] {
			continue
		}
		if r, ok := known[e.Content]; ok {
			r.EntryNo = e.EntryNo
			reuse = append(reuse, r)
			continue
		}
		if _, ok := byText[e.Content]; !ok {
			todo = append(todo, e.Content)
		}
		byText[e.Content] = append(byText[e.Content], e.EntryNo)
	}
	if len(reuse) == 0 && len(todo) == 0 {
		return coordinator.Prepared{Result: coordinator.Result{Code: "up_to_date", Payload: res},
			Commit: h.cleanup(latest)}, nil
	}
	write := func(rows []db.MemoryEmbedding) error {
		return h.Ledger.InClaim(ctx, item, func(ctx context.Context, q db.Queries) error {
			now, err := q.DBNow(ctx)
			if err != nil {
				return err
			}
			for _, r := range rows {
				r.CreatedAt = now
				if err := q.MemoryEmbeddingUpsert(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if len(reuse) > 0 {
		if err := write(reuse); err != nil {
			return coordinator.Prepared{}, err
		}
		res.Reused = len(reuse)
	}
	embedErr := embedTexts(ctx, h.Embedder, todo, func(texts []string, vecs [][]float32) error {
		var batch []db.MemoryEmbedding
		for i, t := range texts {
			for _, no := range byText[t] {
				batch = append(batch, db.MemoryEmbedding{ScopeID: item.ScopeID, Revision: latest, EntryNo: no, Model: p.Model,
					Dimensions: int32(len(vecs[i])), Embedding: provider.EncodeVector(vecs[i])})
			}
		}
		if err := write(batch); err != nil {
			return &writeError{err}
		}
		for _, t := range texts {
			res.Computed++
			delete(byText, t)
		}
		return nil
	})
	var we *writeError
	switch {
	case errors.As(embedErr, &we):
		return coordinator.Prepared{}, we.err // a database error or a lost claim: the ledger retries or fences
	case embedErr != nil && ctx.Err() != nil:
		return coordinator.Prepared{}, embedErr
	}
	code := "embedded"
	for _, nos := range byText {
		res.Missing += len(nos)
	}
	if res.Missing > 0 {
		code = "incomplete"
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: code, Payload: res}, Commit: h.cleanup(latest)}, nil
}

// cleanup is the commit of a memory_embed: the vectors of revisions older than the latest go.
func (h *EmbedHandler) cleanup(latest int64) coordinator.DomainCommit {
	return func(ctx context.Context, q db.Queries, item db.WorkItem, _ time.Time) error {
		_, err := q.MemoryEmbeddingDeleteBefore(ctx, db.MemoryEmbeddingDeleteBeforeParams{ScopeID: item.ScopeID, BeforeRevision: latest,
			Limit: embedReuseCleanup})
		return err
	}
}

// writeError marks a failure to write a batch (as opposed to the embedder's).
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }
