package portability

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/buildinfo"
	"github.com/powercontext/powercontext/internal/clock"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// CursorNames are the domain cursors a scope can have (one per consumer of its journal).
var CursorNames = []string{experience.CursorName, memory.CursorName}

// page bounds every read of an export.
const page = 500

// ErrScopeChanged means the scope was written to while it was being exported: the stream ends without its
// trailer (an importer refuses it as truncated). Export again once the scope is quiet.
var ErrScopeChanged = errors.New("portability: the scope changed during the export")

// ErrRedactionPending means a memory_redact operation of the scope is not finished: its Memory may still hold text
// taken from a forgotten Source, and an import does not carry the ledger, so nothing would ever redact the copy.
// Export again once the workers have run it (docs/portability.md#guarantees).
var ErrRedactionPending = errors.New("portability: a memory_redact operation of the scope has not finished")

// redactKind is lifecycle.KindRedact, spelled out because lifecycle imports this package
// (TestRedactKindIsLifecycles holds the two equal).
const redactKind = "powercontext.memory.redact"

// unfinished are the statuses of an operation that can still change the scope (failed: until retried or
// cancelled).
var unfinished = []string{db.StatusQueued, db.StatusRetryWait, db.StatusRunning, db.StatusCancelling, db.StatusFailed}

// Exportable returns nil when scope may be exported now: sources.ErrScopeErasing while its erase is live (a copy
// would keep what the erase removes), and ErrRedactionPending, naming the operation, while a memory_redact
// operation of the scope is unfinished. Plain reads; Export calls it before and after it reads the scope.
func Exportable(ctx context.Context, q db.Queries, scope string) error {
	if erasing, err := sources.Erasing(ctx, q, scope); err != nil || erasing {
		if err == nil {
			err = fmt.Errorf("portability: scope %q cannot be exported: %w (its scope_erase operation is queued, running or failed)",
				scope, sources.ErrScopeErasing)
		}
		return err
	}
	// A redaction runs in the scope's memory lane (lifecycle.RedactRequest): an idle lane holds none unfinished.
	lane, err := q.WorkLaneGet(ctx, memory.Consumer(1).LaneKey(scope))
	if errors.Is(err, db.ErrNotFound) || (err == nil && lane.HeadSequence == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, status := range unfinished {
		items, err := q.WorkItemList(ctx, db.WorkItemListParams{ScopeID: scope, Kinds: []string{redactKind}, Status: status, Limit: 1})
		if err != nil {
			return err
		}
		if len(items) > 0 {
			return fmt.Errorf("%w: operation %s is %s; the scope's Memory may still hold text of a forgotten Source: "+
				"let the workers run it (retry it if it failed) and export again", ErrRedactionPending, items[0].WorkID, status)
		}
	}
	return nil
}

// Options shape an export.
type Options struct {
	// Embeddings includes the entries' vectors; without it the importing deployment computes them again
	// (docs/memory.md#embeddings).
	Embeddings bool
	// Schema is the range of schema versions of the exporting deployment, recorded in the header.
	Schema SchemaRange
}

// Exporter writes scopes as export streams.
type Exporter struct{ Store db.Store }

// state is what Export compares before and after it reads: a commit of a flush, capture or redaction in between
// changes one of these. A forget does not (it only turns a Source into a tombstone): Export counts the tombstones
// again for that.
type state struct {
	head      int64
	cursors   [2]db.SourceCursor
	latest    int64
	latestCnt int32
}

func (e Exporter) state(ctx context.Context, scope string) (state, error) {
	var s state
	var err error
	if s.head, err = sources.Head(ctx, e.Store, scope); err != nil {
		return s, err
	}
	for i, name := range CursorNames {
		if s.cursors[i], err = sources.Cursor(ctx, e.Store, scope, name); err != nil {
			return s, err
		}
		s.cursors[i].UpdatedAt = time.Time{}
	}
	rev, err := e.Store.MemoryRevisionLatest(ctx, scope)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return s, err
	}
	s.latest, s.latestCnt = rev.Revision, rev.EntryCount
	return s, nil
}

type lineWriter struct {
	w     *bufio.Writer
	h     hash.Hash
	lines int64
}

func (l *lineWriter) put(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.h.Write(b)
	l.lines++
	_, err = l.w.Write(b)
	return err
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func positions(b []byte) ([]int64, error) {
	out := []int64{}
	if len(b) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []int64{}
	}
	return out, nil
}

// Export writes scope to w: the header, the journal head, the cursors, the Sources in journal order (forgotten
// ones as tombstones), every Memory revision followed by its entries (and, with opts.Embeddings, their vectors), the
// Experience candidates, and the trailer. It refuses, before writing anything, a scope Exportable refuses. The reads
// are autocommitted pages, not one snapshot: Export compares the scope's journal head, cursors and latest revision
// before and after, counts its tombstones once more at the end, and returns ErrScopeChanged without writing the
// trailer when any of them moved; Exportable's error when the scope is no longer exportable. The counts in the
// header are those of the first pass; a mismatch is the same error.
func (e Exporter) Export(ctx context.Context, scope string, w io.Writer, opts Options) (Counts, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return Counts{}, err
	}
	if err := Exportable(ctx, e.Store, scope); err != nil {
		return Counts{}, err
	}
	before, err := e.state(ctx, scope)
	if err != nil {
		return Counts{}, err
	}
	// The counts go in the header, before the records: count first (plain reads of ids and sizes).
	counts, revs, err := e.count(ctx, scope, before, opts)
	if err != nil {
		return Counts{}, err
	}
	lw := &lineWriter{w: bufio.NewWriterSize(w, 64<<10), h: sha256.New()}
	if err := lw.put(Header{Type: TypeHeader, Format: Format, FormatVersion: FormatVersion, BinaryVersion: buildinfo.Version(),
		Schema: opts.Schema, ScopeID: scope, ExportedAt: ts(clock.Now()), Embeddings: opts.Embeddings, Counts: counts}); err != nil {
		return counts, err
	}
	if err := lw.put(JournalHead{Type: TypeJournalHead, Position: before.head}); err != nil {
		return counts, err
	}
	for _, c := range before.cursors {
		if c.Position == 0 && c.Generation == 0 {
			continue
		}
		if err := lw.put(Cursor{Type: TypeCursor, CursorName: c.CursorName, Position: c.Position, Generation: c.Generation}); err != nil {
			return counts, err
		}
	}
	var got Counts
	for after := int64(0); after < before.head; {
		batch, err := e.Store.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: after, Limit: page})
		if err != nil {
			return counts, err
		}
		if len(batch) == 0 {
			break
		}
		for _, s := range batch {
			if s.JournalPosition > before.head {
				break
			}
			after = s.JournalPosition
			if !s.ErasedAt.IsZero() {
				got.Tombstones++
				err = lw.put(Tombstone{Type: TypeTombstone, JournalPosition: s.JournalPosition, SourceID: s.SourceID,
					SourceType: s.SourceType, CreatedAt: ts(s.CreatedAt), ErasedAt: ts(s.ErasedAt)})
			} else {
				got.Sources++
				err = lw.put(Source{Type: TypeSource, JournalPosition: s.JournalPosition, SourceID: s.SourceID, SourceType: s.SourceType,
					Content: s.Content, Metadata: json.RawMessage(s.Metadata), CreatedAt: ts(s.CreatedAt)})
			}
			if err != nil {
				return counts, err
			}
		}
		if len(batch) < page {
			break
		}
	}
	for _, r := range revs {
		got.Revisions++
		rec := Revision{Type: TypeRevision, Revision: r.Revision, WorkID: r.WorkID, CursorGeneration: r.CursorGeneration,
			WindowAfter: r.WindowAfter, WindowThrough: r.WindowThrough, EntryCount: r.EntryCount, CreatedAt: ts(r.CreatedAt)}
		if r.EvictedEntryIDs != nil {
			id := r.LastEntryID
			rec.LastEntryID = &id
			if rec.EvictedEntryIDs, err = positions(r.EvictedEntryIDs); err != nil {
				return counts, err
			}
		}
		if err := lw.put(rec); err != nil {
			return counts, err
		}
		entries, err := e.Store.MemoryEntryListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: r.Revision})
		if err != nil {
			return counts, err
		}
		for _, en := range entries {
			got.Entries++
			pos, err := positions(en.SourcePositions)
			if err != nil {
				return counts, err
			}
			rec := Entry{Type: TypeEntry, Revision: en.Revision, EntryNo: en.EntryNo, Content: en.Content, SourcePositions: pos,
				CreatedAt: ts(en.CreatedAt)}
			if en.EntryID != 0 {
				id := en.EntryID
				rec.EntryID = &id
			}
			if err := lw.put(rec); err != nil {
				return counts, err
			}
		}
		if !opts.Embeddings {
			continue
		}
		vecs, err := e.Store.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: r.Revision})
		if err != nil {
			return counts, err
		}
		for _, v := range vecs {
			got.Embeddings++
			if err := lw.put(Embedding{Type: TypeEmbedding, Revision: v.Revision, EntryNo: v.EntryNo, Model: v.Model,
				Dimensions: v.Dimensions, Vector: v.Embedding, CreatedAt: ts(v.CreatedAt)}); err != nil {
				return counts, err
			}
		}
	}
	for after := db.NilUUID; ; {
		batch, err := e.Store.ExperienceCandidateListByScopeAfter(ctx, db.ExperienceCandidateListByScopeAfterParams{ScopeID: scope,
			AfterCandidateID: after, Limit: page})
		if err != nil {
			return counts, err
		}
		for _, c := range batch {
			got.Candidates++
			cited, err := positions(c.CitedPositions)
			if err != nil {
				return counts, err
			}
			if err := lw.put(Candidate{Type: TypeCandidate, CandidateID: c.CandidateID, WorkID: c.WorkID, Title: c.Title, Lesson: c.Lesson,
				CitedPositions: cited, Status: c.Status, StateVersion: c.StateVersion, CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt)}); err != nil {
				return counts, err
			}
			after = c.CandidateID
		}
		if len(batch) < page {
			break
		}
	}
	got.Cursors = counts.Cursors
	// A Source written live and forgotten since is a tombstone now: erasing is one-way and the rows up to the head
	// are the ones written (the head is in the state compared below), so as many tombstones as the stream holds
	// means every Source is still what the stream says. One count through the primary key, not a third read.
	erased, err := e.Store.SourceCountErased(ctx, db.SourceCountErasedParams{ScopeID: scope, ThroughPosition: before.head})
	if err != nil {
		return counts, err
	}
	afterState, err := e.state(ctx, scope)
	if err != nil {
		return counts, err
	}
	if afterState != before || got != counts || erased != got.Tombstones {
		_ = lw.w.Flush()
		return counts, ErrScopeChanged
	}
	// Last: a redaction or an erase asked for while the scope was read (forgetting a Source that is already a
	// tombstone moves nothing the recount above sees).
	if err := Exportable(ctx, e.Store, scope); err != nil {
		_ = lw.w.Flush()
		return counts, err
	}
	if err := lw.w.Flush(); err != nil {
		return counts, err
	}
	// The trailer is not part of its own checksum.
	b, err := json.Marshal(Trailer{Type: TypeTrailer, Lines: lw.lines, SHA256: hex.EncodeToString(lw.h.Sum(nil))})
	if err != nil {
		return counts, err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return counts, err
	}
	return counts, nil
}

// count reads the scope's record counts and its revisions (oldest first) up to the state st.
func (e Exporter) count(ctx context.Context, scope string, st state, opts Options) (Counts, []db.MemoryRevision, error) {
	var c Counts
	for _, cur := range st.cursors {
		if cur.Position != 0 || cur.Generation != 0 {
			c.Cursors++
		}
	}
	for after := int64(0); after < st.head; {
		batch, err := e.Store.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, AfterPosition: after, Limit: page})
		if err != nil {
			return c, nil, err
		}
		for _, s := range batch {
			if s.JournalPosition > st.head {
				break
			}
			after = s.JournalPosition
			if s.ErasedAt.IsZero() {
				c.Sources++
			} else {
				c.Tombstones++
			}
		}
		if len(batch) < page {
			break
		}
	}
	var revs []db.MemoryRevision
	for before := st.latest + 1; st.latest > 0; {
		batch, err := e.Store.MemoryRevisionList(ctx, db.MemoryRevisionListParams{ScopeID: scope, BeforeRevision: before, Limit: page})
		if err != nil {
			return c, nil, err
		}
		revs = append(revs, batch...)
		if len(batch) < page {
			break
		}
		before = batch[len(batch)-1].Revision
	}
	for i, j := 0, len(revs)-1; i < j; i, j = i+1, j-1 {
		revs[i], revs[j] = revs[j], revs[i]
	}
	for _, r := range revs {
		c.Revisions++
		c.Entries += int64(r.EntryCount) // kept equal to the revision's entry rows (a redaction lowers both)
		if opts.Embeddings {
			vecs, err := e.Store.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: scope, Revision: r.Revision})
			if err != nil {
				return c, nil, err
			}
			c.Embeddings += int64(len(vecs))
		}
	}
	for after := db.NilUUID; ; {
		batch, err := e.Store.ExperienceCandidateListByScopeAfter(ctx, db.ExperienceCandidateListByScopeAfterParams{ScopeID: scope,
			AfterCandidateID: after, Limit: page})
		if err != nil {
			return c, nil, err
		}
		c.Candidates += int64(len(batch))
		if len(batch) < page {
			break
		}
		after = batch[len(batch)-1].CandidateID
	}
	return c, revs, nil
}
