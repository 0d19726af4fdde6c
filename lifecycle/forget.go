package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// Names of the Memory redaction a forgotten Source enqueues.
const (
	KindRedact       = "powercontext.memory.redact"
	PublicKindRedact = "memory_redact"
	// RedactPayloadVersion is the version of RedactPayload.
	RedactPayloadVersion = 1
)

// WorkKinds are the work kinds this package runs (a forgotten Source's Memory redaction and a scope's erase); app
// hands them to telemetry, which labels metrics by them.
func WorkKinds() []string { return []string{KindRedact, KindErase} }

// ErrSourceNotFound means there is no Source of that id in that scope (HTTP 404 source_not_found).
var ErrSourceNotFound = errors.New("lifecycle: no such source")

// candidatePage bounds one page of a scope's candidates read while withdrawing those citing a forgotten Source.
const candidatePage = 500

// RedactPayload is the payload of a memory_redact item: the journal position whose support is removed.
type RedactPayload struct {
	SourcePosition int64 `json:"source_position"`
}

// ForgetResult is what forgetting a Source did.
type ForgetResult struct {
	ScopeID         string
	SourceID        string
	JournalPosition int64
	// Redaction is the memory_redact operation that removes the Source from Memory; nil when Memory cannot have
	// seen it (Memory had not consumed it and no memory work was in flight).
	Redaction *db.WorkItem
}

// Forgetter forgets Sources (docs/protocol.md#forgetting-and-erasing).
type Forgetter struct {
	Ledger      *coordinator.Ledger
	MaxAttempts int32
	Wake        func() // wakes an in-process worker after an enqueue; optional
}

// Forget erases one Source's content at once and removes it from Memory through the ledger, in one transaction: the
// enqueue (or join) of a memory_redact item in the scope's memory lane, after every flush already in it, whose spec
// (under the memory lane lock) (a) locks the scope's experience-incubation cursor (when it exists, so an incubation
// committing concurrently either sees the tombstone or is seen by step c), (b) erases the Source to a tombstone
// (SourceErase; a no-op when it already is one), (c) withdraws every Experience candidate citing its position, and
// then (d) decides whether Memory can have seen the position (no redaction when it cannot). One transaction, so no
// crash leaves a tombstone whose text Memory still holds with no redaction queued.
//
// Forgetting is idempotent: a repeated call finds the tombstone, withdraws nothing new and joins the pending
// redaction (or finds none needed). The spec may run more than once (the enqueue goes round when the lane row is
// missing or the key turned out to exist), which is why each of its writes is idempotent.
func (f *Forgetter) Forget(ctx context.Context, scope, sourceID string) (ForgetResult, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return ForgetResult{}, err
	}
	if sourceID == "" || len(sourceID) > sources.MaxSourceIDBytes || !utf8.ValidString(sourceID) || strings.IndexByte(sourceID, 0) >= 0 {
		return ForgetResult{}, &sources.ValidationError{Field: "source_id", Message: "must be 1..256 bytes of UTF-8 without NUL"}
	}
	store := f.Ledger.Store()
	src, err := store.SourceGetByID(ctx, db.SourceGetByIDParams{ScopeID: scope, SourceID: sourceID})
	if errors.Is(err, db.ErrNotFound) {
		return ForgetResult{}, ErrSourceNotFound
	}
	if err != nil {
		return ForgetResult{}, err
	}
	pos := src.JournalPosition
	req := RedactRequest(scope, pos, max(f.MaxAttempts, 1)).WithWrites(func(ctx context.Context, q db.Queries) error {
		// Below the memory lane in the lock order (docs/protocol.md#lock-order): no path holding the experience cursor
		// or a Source row waits for a memory lane.
		if _, err := q.SourceCursorLock(ctx, db.SourceCursorLockParams{ScopeID: scope, CursorName: experience.CursorName}); err != nil && !errors.Is(err, db.ErrNotFound) {
			return err
		}
		if _, err := q.SourceErase(ctx, db.SourceEraseParams{ScopeID: scope, SourceID: sourceID}); err != nil {
			return err
		}
		return withdrawCiting(ctx, q, scope, pos)
	})
	res := ForgetResult{ScopeID: scope, SourceID: sourceID, JournalPosition: pos}
	enq, err := f.Ledger.Enqueue(ctx, req)
	if err != nil {
		return ForgetResult{}, err
	}
	if !enq.Idle {
		res.Redaction = &enq.Item
		if enq.Created && f.Wake != nil {
			f.Wake()
		}
	}
	return res, nil
}

// withdrawCiting withdraws the scope's candidates whose cited positions include pos.
func withdrawCiting(ctx context.Context, q db.Queries, scope string, pos int64) error {
	now, err := q.DBNow(ctx)
	if err != nil {
		return err
	}
	after := db.NilUUID
	for {
		page, err := q.ExperienceCandidateListByScopeAfter(ctx, db.ExperienceCandidateListByScopeAfterParams{ScopeID: scope, AfterCandidateID: after, Limit: candidatePage})
		if err != nil {
			return err
		}
		for _, c := range page {
			var cited []int64
			if json.Unmarshal(c.CitedPositions, &cited) == nil && slices.Contains(cited, pos) && c.Status != experience.StatusWithdrawn {
				if _, err := q.ExperienceCandidateWithdraw(ctx, db.ExperienceCandidateWithdrawParams{CandidateID: c.CandidateID, UpdatedAt: now}); err != nil {
					return err
				}
			}
		}
		if len(page) < candidatePage {
			return nil
		}
		after = page[len(page)-1].CandidateID
	}
}

// RedactLogicalKey identifies the redaction of one position: repeated forgets of the Source join one item.
func RedactLogicalKey(scope string, pos int64) string {
	b, _ := json.Marshal([]any{KindRedact, scope, strconv.FormatInt(pos, 10)})
	return sha256Hex(string(b))
}

// RedactRequest is the enqueue of a memory_redact item in the scope's memory lane. Its spec runs under the memory
// lane lock: it is idle (nothing enqueued) only when Memory cannot have seen the position — no memory work is in
// the lane and the memory cursor has not reached it (the next window reads the tombstone) — and when the scope is
// being erased (the erase removes everything).
func RedactRequest(scope string, pos int64, maxAttempts int32) coordinator.EnqueueRequest {
	laneKey := memory.Consumer(maxAttempts).LaneKey(scope)
	return coordinator.EnqueueRequest{LaneKey: laneKey, Spec: func(ctx context.Context, q db.Queries) (*coordinator.EnqueueSpec, error) {
		if erasing, err := sources.Erasing(ctx, q, scope); err != nil || erasing {
			return nil, err
		}
		lane, err := q.WorkLaneGet(ctx, laneKey)
		if err != nil {
			return nil, err
		}
		if lane.HeadSequence == 0 {
			cur, err := sources.Cursor(ctx, q, scope, memory.CursorName)
			if err != nil {
				return nil, err
			}
			if cur.Position < pos {
				return nil, nil
			}
		}
		return &coordinator.EnqueueSpec{Kind: KindRedact, PayloadVersion: RedactPayloadVersion, ScopeID: scope,
			LogicalKey: RedactLogicalKey(scope, pos), Payload: RedactPayload{SourcePosition: pos}, MaxAttempts: maxAttempts}, nil
	}}
}

func positionsOf(e db.MemoryEntry) []int64 {
	var pos []int64
	_ = json.Unmarshal(e.SourcePositions, &pos)
	return pos
}

// latestEntries returns the latest revision (zero when none) and its entries.
func latestEntries(ctx context.Context, q db.Queries, scope string) (db.MemoryRevision, []db.MemoryEntry, error) {
	rev, err := q.MemoryRevisionLatest(ctx, scope)
	if errors.Is(err, db.ErrNotFound) {
		return db.MemoryRevision{}, nil, nil
	}
	if err != nil {
		return rev, nil, err
	}
	entries, err := q.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: rev.Revision})
	return rev, entries, err
}

// RedactResult is the result payload of a memory_redact operation: what changed in the latest revision (the new
// revision holds the rest) and how many entries of earlier revisions were scrubbed.
type RedactResult struct {
	Type            string                 `json:"type"`
	SourcePosition  int64                  `json:"source_position"`
	RemovedEntries  int                    `json:"removed_entries"`
	UpdatedEntries  int                    `json:"updated_entries"`
	ScrubbedEntries int64                  `json:"scrubbed_entries"`
	Memory          *memory.RevisionResult `json:"memory"`
}

// scrubBatch bounds the entries one fenced scrub transaction reads.
const scrubBatch = 500

// RedactHandler runs memory_redact items (docs/protocol.md#forgetting-and-erasing). The forgotten position leaves
// every revision of the scope: Prepare scrubs the revisions before the latest in fenced batches
// (coordinator.Ledger.InClaim) — an entry only it supported is deleted (the revision's entry_count follows), an
// entry other Sources support too loses the position — and the commit scrubs the latest revision the same way and
// writes a new revision holding the result. It runs in the scope's memory lane, so no flush commits between its
// Prepare and its commit; a retry rescans (a scrubbed entry no longer cites the position).
type RedactHandler struct{ Ledger *coordinator.Ledger }

// Kind implements coordinator.Handler: the work kind it runs.
func (h *RedactHandler) Kind() string { return KindRedact }

// PayloadVersions implements coordinator.Handler: the payload versions it accepts.
func (h *RedactHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: RedactPayloadVersion, Max: RedactPayloadVersion}
}

// scrubEntry is what a redaction does to one entry citing the position: delete it (its only support) or keep it
// with the position removed.
func scrubEntry(ctx context.Context, q db.Queries, e db.MemoryEntry, pos int64) (deleted bool, changed bool, err error) {
	p := positionsOf(e)
	i := slices.Index(p, pos)
	if i < 0 {
		return false, false, nil
	}
	if len(p) == 1 {
		del := db.MemoryEntryDeleteParams{ScopeID: e.ScopeID, Revision: e.Revision, EntryNo: e.EntryNo}
		if _, err := q.MemoryEntryDelete(ctx, del); err != nil {
			return true, true, err
		}
		_, err := q.MemoryEmbeddingDelete(ctx, del) // its vector was derived from the forgotten text too
		return true, true, err
	}
	b, _ := json.Marshal(slices.Delete(p, i, i+1))
	_, err = q.MemoryEntryUpdatePositions(ctx, db.MemoryEntryUpdatePositionsParams{SourcePositions: b, ScopeID: e.ScopeID, Revision: e.Revision, EntryNo: e.EntryNo})
	return false, true, err
}

// scrubEntries scrubs entries (of any revisions) and lowers their revisions' entry counts; it returns how many it
// changed.
func scrubEntries(ctx context.Context, q db.Queries, entries []db.MemoryEntry, pos int64) (int64, error) {
	var changed int64
	removed := map[int64]int32{}
	for _, e := range entries {
		del, ch, err := scrubEntry(ctx, q, e, pos)
		if err != nil {
			return changed, err
		}
		if del {
			removed[e.Revision]++
		}
		if ch {
			changed++
		}
	}
	for rev, n := range removed {
		if _, err := q.MemoryRevisionSubtractEntries(ctx, db.MemoryRevisionSubtractEntriesParams{Removed: n, ScopeID: entries[0].ScopeID, Revision: rev}); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// scrubHistory scrubs the revisions before `before`, one fenced batch of at most scrubBatch entries at a time.
func (h *RedactHandler) scrubHistory(ctx context.Context, item db.WorkItem, pos, before int64) (int64, error) {
	var total int64
	after := db.MemoryEntryListByScopeAfterParams{ScopeID: item.ScopeID, Limit: scrubBatch}
	for {
		var page []db.MemoryEntry
		err := h.Ledger.InClaim(ctx, item, func(ctx context.Context, q db.Queries) error {
			var err error
			if page, err = q.MemoryEntryListByScopeAfter(ctx, after); err != nil {
				return err
			}
			old := slices.DeleteFunc(slices.Clone(page), func(e db.MemoryEntry) bool { return e.Revision >= before })
			if len(old) == 0 {
				return nil
			}
			n, err := scrubEntries(ctx, q, old, pos)
			total += n
			return err
		})
		if err != nil {
			return total, err
		}
		if len(page) < scrubBatch || page[len(page)-1].Revision >= before {
			return total, nil
		}
		last := page[len(page)-1]
		after.AfterRevision, after.AfterEntryNo = last.Revision, last.EntryNo
	}
}

// Prepare implements coordinator.Handler: the work done outside any transaction.
func (h *RedactHandler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	var p RedactPayload
	if item.PayloadVersion != RedactPayloadVersion || json.Unmarshal(item.Payload, &p) != nil || p.SourcePosition < 1 {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	store := h.Ledger.Store()
	rev, entries, err := latestEntries(ctx, store, item.ScopeID)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	res := RedactResult{Type: PublicKindRedact, SourcePosition: p.SourcePosition}
	if rev.Revision > 0 {
		if res.ScrubbedEntries, err = h.scrubHistory(ctx, item, p.SourcePosition, rev.Revision); err != nil {
			return coordinator.Prepared{}, err
		}
	}
	// The kept entries keep their ids (docs/memory.md#entry-ids); entries an older build wrote get theirs here.
	identified, lastID, err := memory.WithEntryIDs(ctx, store, rev, entries)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	type kept struct {
		id        int64
		content   string
		positions []int64
	}
	var next []kept
	for _, e := range identified {
		pos := positionsOf(e)
		i := slices.Index(pos, p.SourcePosition)
		switch {
		case i < 0:
			next = append(next, kept{e.EntryID, e.Content, pos})
		case len(pos) == 1:
			res.RemovedEntries++
		default:
			res.UpdatedEntries++
			next = append(next, kept{e.EntryID, e.Content, slices.Delete(pos, i, i+1)})
		}
	}
	if res.RemovedEntries+res.UpdatedEntries == 0 { // the latest revision does not cite it
		if rev.Revision > 0 {
			res.Memory = &memory.RevisionResult{Revision: rev.Revision}
		}
		return coordinator.Prepared{Result: coordinator.Result{Code: "nothing_to_redact", Payload: res}}, nil
	}
	res.ScrubbedEntries += int64(res.RemovedEntries + res.UpdatedEntries)
	// The surviving texts keep their vectors (docs/memory.md#embeddings): carried to the new revision, the rest go.
	carried, err := memory.CarriedVectors(ctx, store, item.ScopeID, rev.Revision, entries)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	revision := rev.Revision + 1
	res.Memory = &memory.RevisionResult{Revision: revision}
	commit := func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
		latest, err := q.MemoryRevisionLatest(ctx, item.ScopeID)
		if err != nil || latest.Revision != rev.Revision { // cannot happen in lane order; retry with a fresh read
			if err == nil {
				err = coordinator.NewHandlerError(coordinator.CategoryConflict, coordinator.CodeCursorChanged, true)
			}
			return err
		}
		if _, err := scrubEntries(ctx, q, entries, p.SourcePosition); err != nil {
			return err
		}
		cur, err := sources.Cursor(ctx, q, item.ScopeID, memory.CursorName)
		if err != nil {
			return err
		}
		// The revision records no window: after = through = the cursor, which does not move; and no eviction.
		if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: item.ScopeID, Revision: revision, WorkID: item.WorkID,
			CursorGeneration: cur.Generation, WindowAfter: cur.Position, WindowThrough: cur.Position,
			EntryCount: int32(len(next)), CreatedAt: now, LastEntryID: lastID, EvictedEntryIDs: []byte(`[]`)}); err != nil {
			return err
		}
		texts := make([]string, len(next))
		rows := make([]db.MemoryEntry, len(next))
		for i, e := range next {
			pos, _ := json.Marshal(e.positions)
			rows[i] = db.MemoryEntry{ScopeID: item.ScopeID, Revision: revision, EntryNo: int32(i + 1),
				Content: e.content, SourcePositions: pos, CreatedAt: now, EntryID: e.id}
			texts[i] = e.content
		}
		if err := q.MemoryEntryInsertMany(ctx, rows); err != nil {
			return err
		}
		return memory.WriteCarriedVectors(ctx, q, item.ScopeID, revision, texts, carried, now)
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "redacted", Payload: res}, Commit: commit}, nil
}
