package lifecycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

// Names of a scope's erase.
const (
	KindErase           = "powercontext.scope.erase"
	PublicKindErase     = "scope_erase"
	ErasePayloadVersion = 1
	// CodeScopeBusy (category conflict, retryable): the erase's final step found work or Sources that arrived
	// after its batches; the next attempt continues from there.
	CodeScopeBusy = "scope_busy"
)

// eraseBatch bounds every statement of an erase, like maintenance's purges.
const eraseBatch = 500

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// ErasePayload is the payload of a scope_erase item: who asked (a principal name, never content). When is the
// item's created_at.
type ErasePayload struct {
	RequestedBy string `json:"requested_by"`
}

// EraseResult is the result payload of a scope_erase operation: who asked and how many rows went.
type EraseResult struct {
	Type                string `json:"type"`
	RequestedBy         string `json:"requested_by"`
	CancelledOperations int64  `json:"cancelled_operations"`
	DeletedOperations   int64  `json:"deleted_operations"`
	DeletedSources      int64  `json:"deleted_sources"`
	DeletedRevisions    int64  `json:"deleted_revisions"`
	DeletedEntries      int64  `json:"deleted_entries"`
	DeletedCandidates   int64  `json:"deleted_candidates"`
	DeletedEmbeddings   int64  `json:"deleted_embeddings"`
	// DeletedSkillRows counts the scope's skills, skill revisions and their candidate rows, targets and publications
	// (docs/skills.md).
	DeletedSkillRows int64 `json:"deleted_skill_rows"`
}

// EraseLogicalKey is the identity of a scope's erase: while one is live, another request joins it.
func EraseLogicalKey(scope string) string {
	b, _ := json.Marshal([]string{KindErase, scope})
	return sha256Hex(string(b))
}

// EraseRequest enqueues (or joins) the erase of a scope in its erase lane, on behalf of principal.
func EraseRequest(scope, principal string, maxAttempts int32) coordinator.EnqueueRequest {
	return coordinator.EnqueueRequest{LaneKey: sources.EraseLaneKey(scope), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
		return &coordinator.EnqueueSpec{Kind: KindErase, PayloadVersion: ErasePayloadVersion, ScopeID: scope,
			LogicalKey: EraseLogicalKey(scope), Payload: ErasePayload{RequestedBy: principal}, MaxAttempts: max(maxAttempts, 1)}, nil
	}}
}

// Eraser erases scopes (docs/protocol.md#erasing-a-scope).
type Eraser struct {
	Ledger      *coordinator.Ledger
	MaxAttempts int32
	Wake        func() // wakes an in-process worker after an enqueue; optional
}

// Erase enqueues the erase of scope on behalf of principal (recorded on the operation), or joins the live one.
func (e *Eraser) Erase(ctx context.Context, scope, principal string) (db.WorkItem, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return db.WorkItem{}, err
	}
	res, err := e.Ledger.Enqueue(ctx, EraseRequest(scope, principal, e.MaxAttempts))
	if err != nil {
		return db.WorkItem{}, err
	}
	if res.Created && e.Wake != nil {
		e.Wake()
	}
	return res.Item, nil
}

// scopeKinds are the kinds of a scope's own work, cancelled and deleted by its erase.
var scopeKinds = []string{memory.Kind, experience.Kind, KindRedact, memory.KindEmbed, portability.KindExport, portability.KindImport,
	skills.Kind}

// EraseHandler runs scope_erase items (docs/protocol.md#erasing-a-scope). Prepare cancels the scope's live work and
// waits until it is finished, then deletes the scope's finished operations, candidates, entry vectors, Memory
// entries and revisions and Sources in batches of at most 500 rows, each batch its own transaction fenced by the erase's claim
// (coordinator.Ledger.InClaim): a retried erase continues where the last one stopped, and a deposed attempt deletes
// nothing. The commit, in the erase's final transaction, deletes what is left and the cursors, and resets the
// journal head to position 0.
type EraseHandler struct {
	Ledger *coordinator.Ledger
	// Poll is how often Prepare re-reads the scope's cancelled work while it converges (default 100 ms).
	Poll time.Duration
}

// Kind implements coordinator.Handler: the work kind it runs.
func (h *EraseHandler) Kind() string { return KindErase }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h *EraseHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: ErasePayloadVersion, Max: ErasePayloadVersion}
}

// Prepare implements coordinator.Handler: the work done outside any transaction.
func (h *EraseHandler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	var p ErasePayload
	if item.PayloadVersion != ErasePayloadVersion || json.Unmarshal(item.Payload, &p) != nil {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	scope := item.ScopeID
	res := EraseResult{Type: PublicKindErase, RequestedBy: p.RequestedBy}
	cancelled, err := h.cancelLive(ctx, scope)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	res.CancelledOperations = cancelled
	batch := func(total *int64, del func(ctx context.Context, q db.Queries) (int64, error)) error {
		for {
			var n int64
			if err := h.Ledger.InClaim(ctx, item, func(ctx context.Context, q db.Queries) (err error) {
				n, err = del(ctx, q)
				return err
			}); err != nil {
				return err
			}
			*total += n
			if n < eraseBatch {
				return nil
			}
		}
	}
	scopeBatch := db.ScopeBatchParams{ScopeID: scope, Limit: eraseBatch}
	for _, step := range []struct {
		total *int64
		del   func(ctx context.Context, q db.Queries) (int64, error)
	}{
		{&res.DeletedOperations, func(ctx context.Context, q db.Queries) (int64, error) { return deleteFinishedWork(ctx, q, scope) }},
		{&res.DeletedCandidates, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.ExperienceCandidateDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedEmbeddings, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.MemoryEmbeddingDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedEntries, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.MemoryEntryDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedRevisions, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.MemoryRevisionDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedSources, func(ctx context.Context, q db.Queries) (int64, error) { return q.SourceDeleteBatch(ctx, scopeBatch) }},
		{&res.DeletedSkillRows, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.SkillPublicationDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedSkillRows, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.SkillTargetDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedSkillRows, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.SkillRevisionCandidateDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedSkillRows, func(ctx context.Context, q db.Queries) (int64, error) {
			return q.SkillRevisionDeleteBatch(ctx, scopeBatch)
		}},
		{&res.DeletedSkillRows, func(ctx context.Context, q db.Queries) (int64, error) { return q.SkillDeleteBatch(ctx, scopeBatch) }},
	} {
		if err := batch(step.total, step.del); err != nil {
			return coordinator.Prepared{}, err
		}
	}
	commit := func(ctx context.Context, q db.Queries, _ db.WorkItem, _ time.Time) error {
		return finishErase(ctx, q, scope)
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "erased", Payload: res}, Commit: commit, Alone: true}, nil
}

// cancelLive cancels the scope's live work (queued, retry_wait, failed: at once; running: its worker converges)
// and waits until none is left. It returns how many operations it cancelled.
func (h *EraseHandler) cancelLive(ctx context.Context, scope string) (int64, error) {
	poll := h.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	var cancelled int64
	for {
		live, err := h.liveWork(ctx, scope)
		if err != nil || len(live) == 0 {
			return cancelled, err
		}
		for _, w := range live {
			if w.Status == db.StatusCancelling {
				continue
			}
			_, err := h.Ledger.Cancel(ctx, w.WorkID, w.StateVersion)
			if _, conflict := coordinator.IsStateConflict(err); conflict || errors.Is(err, db.ErrNotFound) {
				continue // it moved on meanwhile: the next round sees it again
			}
			if err != nil {
				return cancelled, err
			}
			cancelled++
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return cancelled, ctx.Err()
		case <-t.C:
		}
	}
}

// liveWork lists the scope's operations that are not succeeded or cancelled.
func (h *EraseHandler) liveWork(ctx context.Context, scope string) ([]db.WorkItem, error) {
	var live []db.WorkItem
	p := coordinator.ListParams{ScopeID: scope, Kinds: scopeKinds, Limit: 1000}
	for {
		page, err := h.Ledger.List(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, w := range page {
			if w.Status != db.StatusSucceeded && w.Status != db.StatusCancelled {
				live = append(live, w)
			}
		}
		if len(page) < int(p.Limit) {
			return live, nil
		}
		last := page[len(page)-1]
		p.BeforeCreatedAt, p.BeforeWorkID = last.CreatedAt, last.WorkID
	}
}

// deleteFinishedWork deletes up to a batch of the scope's succeeded and cancelled operations with their attempts
// (the erases' own rows stay: they are the audit record).
func deleteFinishedWork(ctx context.Context, q db.Queries, scope string) (int64, error) {
	ids, err := q.WorkItemListFinishedByScope(ctx, db.WorkItemListFinishedByScopeParams{ScopeID: scope, ExceptKind: KindErase, Limit: eraseBatch})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	if _, err := q.WorkAttemptDeleteByWorkIDs(ctx, ids); err != nil {
		return 0, err
	}
	return q.WorkItemDeleteTerminal(ctx, ids)
}

// finishErase is the erase's domain commit, after its lane, key and item locks: lock the scope's memory,
// experience, export/import record and skills lanes (ascending lane key) and its journal head, check that nothing arrived after the batches (else
// conflict/scope_busy, retryable: the next attempt erases it), and delete the rest (the result counts the batches
// only): the leftover finished work and Sources, the cursors, the journal head and the idle lanes, so no row of the
// scope is left but the erase's own (its lane, key, item and attempts: the audit record). The next capture
// re-creates the head and starts a fresh journal at position 1; the next enqueue re-creates the lane. Both do so
// with an insert-if-absent that may race other creators over the just-deleted record, which on InnoDB can make one
// of them a deadlock victim: coordinator.CreateRow retries that statement, and a capture or enqueue whose row
// vanished between its insert and its lock goes round again (docs/protocol.md#creating-rows).
func finishErase(ctx context.Context, q db.Queries, scope string) error {
	busy := coordinator.NewHandlerError(coordinator.CategoryConflict, CodeScopeBusy, true)
	lanes := []string{memory.Consumer(1).LaneKey(scope), experience.Consumer(1).LaneKey(scope), portability.LaneKey(scope),
		skills.LaneKey(scope)}
	slices.Sort(lanes)
	var idle []string
	for _, key := range lanes {
		lane, _, err := q.WorkLaneLock(ctx, key)
		if errors.Is(err, db.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if lane.HeadSequence != 0 {
			return busy
		}
		idle = append(idle, key)
	}
	head, err := q.SourceJournalHeadLock(ctx, scope)
	hasHead := err == nil
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	n, err := deleteFinishedWork(ctx, q, scope)
	if err != nil {
		return err
	}
	if n == eraseBatch {
		return busy
	}
	if n, err = q.SourceDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: eraseBatch}); err != nil {
		return err
	}
	if n == eraseBatch {
		return busy
	}
	if _, err := q.SourceCursorDeleteByScope(ctx, scope); err != nil {
		return err
	}
	if hasHead {
		if _, err := q.SourceJournalHeadDelete(ctx, head.ScopeID); err != nil {
			return err
		}
	}
	for _, key := range idle {
		if _, err := q.WorkLaneDeleteIdle(ctx, key); err != nil {
			return err
		}
	}
	return nil
}
