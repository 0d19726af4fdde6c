package portability_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// runAll runs a worker with every handler of the runtime until the returned stop.
func runAll(t *testing.T, l *coordinator.Ledger, s db.Store) (stop func()) {
	t.Helper()
	p := provider.NewLocal()
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-all", Concurrency: 3, Poll: 10 * time.Millisecond,
		RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond,
		// Warnings and errors (a lost claim, a deadlock in complete) go to the test log: they explain a wait that never ends.
		Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)},
		&memory.Handler{Store: s, Provider: p, Embedder: provider.NewLocalEmbedder()}, &experience.Handler{Store: s, Provider: p},
		&memory.EmbedHandler{Ledger: l, Embedder: provider.NewLocalEmbedder()},
		&lifecycle.RedactHandler{Ledger: l}, &lifecycle.EraseHandler{Ledger: l, Poll: 10 * time.Millisecond},
		portability.RecordHandler{RecordKind: portability.KindExport}, portability.RecordHandler{RecordKind: portability.KindImport})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// waitStatus waits for the item to reach a status (woken by the ledger's change signal, with a poll as the floor).
func waitStatus(t *testing.T, l *coordinator.Ledger, id string, status string) db.WorkItem {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		changed, stop := l.Changed(id)
		item, err := l.Get(context.Background(), id)
		require.NoError(t, err)
		if item.Status == status {
			stop()
			return item
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			stop()
			t.Fatalf("operation %s is %s, not %s (attempt %d, lease owner %q fence %d expiring %s, error %s/%s)", id, item.Status, status,
				item.AttemptCount, item.LeaseOwner, item.LeaseFence, item.LeaseExpiresAt.Format(time.RFC3339Nano), item.ErrorCategory, item.ErrorCode)
		}
		stop()
	}
}

func flush(t *testing.T, l *coordinator.Ledger, scope string, consumers ...sources.Consumer) {
	t.Helper()
	for _, c := range consumers {
		res, err := l.Enqueue(context.Background(), c.EnqueueRequest(scope))
		require.NoError(t, err)
		require.False(t, res.Idle)
		waitStatus(t, l, res.Item.WorkID, db.StatusSucceeded)
	}
}

// populate fills scope through the domain code: captures, several flushes, a correction, a forgotten Source and an
// approved Experience lesson.
func populate(t *testing.T, l *coordinator.Ledger, s db.Store, scope string) {
	t.Helper()
	ctx := context.Background()
	j := sources.NewJournal(s)
	capture := func(id, content, meta string) {
		req := sources.CaptureRequest{ScopeID: scope, SourceID: id, Content: content}
		if meta != "" {
			req.Metadata = json.RawMessage(meta)
		}
		_, err := j.Capture(ctx, req)
		require.NoError(t, err)
	}
	capture("a", "The deploy script lives in ops/deploy.sh.", `{"author":"ana","n":1}`)
	capture("b", "Releases ship on Tuesdays.", "")
	capture("c", "Always run the smoke tests before a release.", `{"kind":"task-outcome"}`)
	flush(t, l, scope, memory.Consumer(3), experience.Consumer(3))
	capture("d", "The staging database is PostgreSQL.", "")
	capture("e", "Secrets live in the vault, never in the repository.", "")
	flush(t, l, scope, memory.Consumer(3))
	capture("f", "Correction: releases ship on Wednesdays.", "")
	flush(t, l, scope, memory.Consumer(3), experience.Consumer(3))
	f := &lifecycle.Forgetter{Ledger: l, MaxAttempts: 3}
	res, err := f.Forget(ctx, scope, "e")
	require.NoError(t, err)
	if res.Redaction != nil {
		waitStatus(t, l, res.Redaction.WorkID, db.StatusSucceeded)
	}
	cands, err := experience.Reviews{Store: s}.List(ctx, scope, experience.StatusPending, 10)
	require.NoError(t, err)
	require.NotEmpty(t, cands, "the task outcome became a candidate")
	_, err = experience.Reviews{Store: s}.Review(ctx, cands[0].CandidateID, cands[0].StateVersion, true)
	require.NoError(t, err)
}

// view is everything a reader of a scope sees, with the scope id and candidate ids left out.
type view struct {
	Head       int64
	Sources    []db.Source
	Memory     memory.Memory
	History    []memory.Memory
	Revisions  []db.MemoryRevision
	Search     memory.Memory
	Context    memory.Assembled
	Candidates []db.ExperienceCandidate
	Cursors    []db.SourceCursor
}

func read(t *testing.T, s db.Store, scope string) view {
	t.Helper()
	ctx := context.Background()
	r := memory.Reader{Store: s}
	var v view
	var err error
	v.Head, err = sources.Head(ctx, s, scope)
	require.NoError(t, err)
	v.Sources, err = s.SourceListAfter(ctx, db.SourceListAfterParams{ScopeID: scope, Limit: 500})
	require.NoError(t, err)
	for i := range v.Sources {
		v.Sources[i].ScopeID = ""
		require.Equal(t, v.Sources[i].ErasedAt.IsZero(), v.Sources[i].Content != "", "a tombstone has no content")
	}
	v.Memory, err = r.Current(ctx, scope)
	require.NoError(t, err)
	v.Revisions, err = r.Revisions(ctx, scope, 0, 100)
	require.NoError(t, err)
	for i := range v.Revisions {
		m, err := r.At(ctx, scope, v.Revisions[i].Revision)
		require.NoError(t, err)
		v.History = append(v.History, m)
		v.Revisions[i].ScopeID = ""
	}
	v.Search, err = r.Search(ctx, scope, "releases ship", 10)
	require.NoError(t, err)
	v.Context, err = memory.Assembler{Memory: r, Lessons: experience.Reviews{Store: s}}.Assemble(ctx, scope, "how do we release", 2000)
	require.NoError(t, err)
	v.Context.ScopeID = ""
	for i := range v.Context.Items {
		v.Context.Items[i].CandidateID = "" // derived under another scope id (DerivedCandidateID)
	}
	v.Candidates, err = experience.Reviews{Store: s}.List(ctx, scope, "", 100)
	require.NoError(t, err)
	for i := range v.Candidates {
		v.Candidates[i].ScopeID, v.Candidates[i].CandidateID = "", ""
	}
	for _, name := range portability.CursorNames {
		c, err := sources.Cursor(ctx, s, scope, name)
		require.NoError(t, err)
		c.ScopeID, c.UpdatedAt = "", time.Time{}
		v.Cursors = append(v.Cursors, c)
	}
	return v
}

func clearScope(m *memory.Memory) {
	m.ScopeID = ""
	for i := range m.Entries {
		m.Entries[i].ScopeID = ""
	}
}

func normalise(v view) view {
	clearScope(&v.Memory)
	clearScope(&v.Search)
	for i := range v.History {
		clearScope(&v.History[i])
	}
	return v
}

func export(t *testing.T, s db.Store, scope string, opts portability.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := portability.Exporter{Store: s}.Export(context.Background(), scope, &buf, opts)
	require.NoError(t, err)
	return buf.Bytes()
}

// reseal replaces the trailer of lines (without it) with a correct one.
func reseal(lines []string) []byte {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	tr, _ := json.Marshal(portability.Trailer{Type: portability.TypeTrailer, Lines: int64(len(lines)), SHA256: hex.EncodeToString(sum[:])})
	b.Write(tr)
	b.WriteString("\n")
	return []byte(b.String())
}

func splitLines(stream []byte) []string {
	return strings.Split(strings.TrimSuffix(string(stream), "\n"), "\n")
}

// TestExportImportRoundTrip: a scope populated through the domain code, exported and imported under another scope
// id, reads back identically (Sources, Memory and its history, search, context, Experience, cursors), re-runs no
// work, and keeps working (a new capture continues the journal, a flush makes the next revision). Every record the
// exporter writes validates against its JSON Schema.
func TestExportImportRoundTrip(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		stop := runAll(t, l, s)
		defer func() { stop() }()
		populate(t, l, s, "origin")
		// Wait for the latest revision's vectors (written with it, or by the embed work), so the export with
		// vectors is complete.
		latest, err := s.MemoryRevisionLatest(ctx, "origin")
		require.NoError(t, err)

		for _, withVectors := range []bool{false, true} {
			stream := export(t, s, "origin", portability.Options{Embeddings: withVectors, Schema: portability.SchemaRange{Min: 1, Max: 2}})
			seen := map[string]int{}
			for i, line := range splitLines(stream) {
				typ, err := portability.Validate([]byte(line))
				require.NoError(t, err, "line %d", i+1)
				seen[typ]++
			}
			for _, typ := range portability.RecordTypes {
				if typ == portability.TypeEmbedding && !withVectors {
					require.Zero(t, seen[typ])
					continue
				}
				require.NotZero(t, seen[typ], "the export holds a %s record", typ)
			}
			require.Contains(t, string(stream), `"type":"tombstone"`)
			require.NotContains(t, string(stream), "Secrets live in the vault", "a forgotten Source's text is never exported")

			target := "copy-plain"
			if withVectors {
				target = "copy-vectors"
			}
			res, err := portability.Importer{Store: s}.Import(ctx, bytes.NewReader(stream), portability.ImportOptions{AsScope: target})
			require.NoError(t, err)
			require.Equal(t, target, res.ScopeID)
			require.Equal(t, "origin", res.SourceScopeID)
			require.Equal(t, normalise(read(t, s, "origin")), normalise(read(t, s, target)))
			vecs, err := s.MemoryEmbeddingListByRevision(ctx, db.MemoryEntryListByRevisionParams{ScopeID: target, Revision: latest.Revision})
			require.NoError(t, err)
			if withVectors {
				require.Len(t, vecs, int(latest.EntryCount), "vectors imported with the entries")
			}

			// No work re-runs for imported history: nothing is pending for either consumer.
			for _, c := range []sources.Consumer{memory.Consumer(3), experience.Consumer(3)} {
				res, err := l.Enqueue(ctx, c.EnqueueRequest(target))
				require.NoError(t, err)
				require.True(t, res.Idle, "%s has nothing to do", c.Kind)
			}
			// And it keeps working: the journal continues densely, the next flush makes the next revision.
			before := read(t, s, target)
			got, err := sources.NewJournal(s).Capture(ctx, sources.CaptureRequest{ScopeID: target, Content: "On-call rotates every Monday."})
			require.NoError(t, err)
			require.Equal(t, before.Head+1, got.JournalPosition)
			flush(t, l, target, memory.Consumer(3))
			m, err := memory.Reader{Store: s}.Current(ctx, target)
			require.NoError(t, err)
			require.Equal(t, latest.Revision+1, m.Revision)
			require.Contains(t, m.Entries[len(m.Entries)-1].Content, "On-call rotates")
			last, err := s.MemoryRevisionLatest(ctx, target)
			require.NoError(t, err)
			require.Greater(t, last.LastEntryID, latest.LastEntryID, "entry ids continue after the imported ones")
		}
	})
}

func importErr(t *testing.T, s db.Store, stream []byte, as string) *portability.Error {
	t.Helper()
	_, err := portability.Importer{Store: s}.Import(context.Background(), bytes.NewReader(stream), portability.ImportOptions{AsScope: as})
	var pe *portability.Error
	require.True(t, errors.As(err, &pe), "a portability error, got %v", err)
	return pe
}

// TestImportRefusesBadInput: every refused import names its code (and line) and leaves the target as it was.
func TestImportRefusesBadInput(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		stop := runAll(t, l, s)
		populate(t, l, s, "origin")
		stream := export(t, s, "origin", portability.Options{})
		lines := splitLines(stream)
		body := lines[:len(lines)-1]
		empty := normalise(read(t, s, "target"))
		unchanged := func(scope string, want view) {
			t.Helper()
			require.Equal(t, want, normalise(read(t, s, scope)), "the target is unchanged")
		}

		pe := importErr(t, s, []byte(strings.Join(body, "\n")+"\n"), "target")
		require.Equal(t, portability.CodeTruncated, pe.Code)
		require.EqualValues(t, len(lines), pe.Line)
		unchanged("target", empty)

		tampered := strings.Replace(string(stream), "Tuesdays", "Thursday", 1)
		pe = importErr(t, s, []byte(tampered), "target")
		require.Equal(t, portability.CodeChecksumMismatch, pe.Code)
		require.EqualValues(t, len(lines), pe.Line)
		unchanged("target", empty)

		newer := append([]string{strings.Replace(lines[0], `"format_version":1`, `"format_version":2`, 1)}, body[1:]...)
		pe = importErr(t, s, reseal(newer), "target")
		require.Equal(t, portability.CodeFormatUnsupported, pe.Code)
		require.EqualValues(t, 1, pe.Line)
		unchanged("target", empty)

		// A schema violation in a resealed stream: the line is named.
		bad := append([]string(nil), body...)
		idx := firstOfType(bad, "source")
		require.GreaterOrEqual(t, idx, 0)
		bad[idx] = strings.Replace(bad[idx], `"journal_position":`, `"journal_position":-`, 1)
		pe = importErr(t, s, reseal(bad), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, idx+1, pe.Line)
		unchanged("target", empty)

		// Valid JSON and schema, but text no engine stores (NUL): refused before anything is written.
		nul := append([]string(nil), body...)
		nul[idx] = strings.Replace(nul[idx], `"content":"`, `"content":"\u0000`, 1)
		pe = importErr(t, s, reseal(nul), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, idx+1, pe.Line)
		unchanged("target", empty)

		// A candidate citing a position beyond the journal head, like an entry would: a lesson from no Source.
		cited := append([]string(nil), body...)
		cidx := firstOfType(cited, "candidate")
		require.GreaterOrEqual(t, cidx, 0)
		cited[cidx] = regexp.MustCompile(`"cited_positions":\[[^\]]*\]`).ReplaceAllString(cited[cidx], `"cited_positions":[999999]`)
		require.Contains(t, cited[cidx], `"cited_positions":[999999]`)
		pe = importErr(t, s, reseal(cited), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, cidx+1, pe.Line)
		unchanged("target", empty)

		// Memory and lessons beyond the bounds every other writer keeps (an entry of 1000 bytes, 500 entries per
		// revision, a lesson of 2000 bytes): refused, so an import cannot make a scope's reads unbounded.
		eidx := firstOfType(body, "entry")
		require.GreaterOrEqual(t, eidx, 0)
		content := regexp.MustCompile(`"content":"[^"]*"`)
		long := append([]string(nil), body...)
		long[eidx] = content.ReplaceAllString(long[eidx], `"content":"`+strings.Repeat("x", 1001)+`"`)
		pe = importErr(t, s, reseal(long), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, eidx+1, pe.Line)
		require.Contains(t, pe.Error(), "more than 1000 bytes")
		unchanged("target", empty)
		lesson := append([]string(nil), body...)
		lesson[cidx] = regexp.MustCompile(`"lesson":"[^"]*"`).ReplaceAllString(lesson[cidx], `"lesson":"`+strings.Repeat("l", 2001)+`"`)
		pe = importErr(t, s, reseal(lesson), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, cidx+1, pe.Line)
		unchanged("target", empty)
		many := append([]string(nil), body[:eidx]...)
		entryNo := regexp.MustCompile(`"entry_no":\d+`)
		for i := range 501 {
			e := entryNo.ReplaceAllString(body[eidx], fmt.Sprintf(`"entry_no":%d`, i))
			many = append(many, regexp.MustCompile(`"entry_id":"[^"]*"`).ReplaceAllString(e, fmt.Sprintf(`"entry_id":"e%d"`, i)))
		}
		pe = importErr(t, s, reseal(many), "target")
		require.Equal(t, portability.CodeInvalidRecord, pe.Code)
		require.EqualValues(t, eidx+501, pe.Line, "the 501st entry of the revision")
		require.Contains(t, pe.Error(), "more than 500 entries")
		unchanged("target", empty)

		// The same stream under its own scope id where that scope is taken.
		originView := normalise(read(t, s, "origin"))
		pe = importErr(t, s, stream, "")
		require.Equal(t, portability.CodeScopeNotEmpty, pe.Code)
		unchanged("origin", originView)

		// A stream naming another scope but keeping the candidate ids of "origin": they collide. Everything before
		// the candidates was written in the same transaction and is rolled back.
		renamed := append([]string{strings.Replace(lines[0], `"scope_id":"origin"`, `"scope_id":"renamed"`, 1)}, body[1:]...)
		pe = importErr(t, s, reseal(renamed), "")
		require.Equal(t, portability.CodeIDCollision, pe.Code)
		unchanged("renamed", empty)

		// A scope being erased: its erase is queued (no worker runs it), so the import is refused.
		stop()
		_, err := (&lifecycle.Eraser{Ledger: l, MaxAttempts: 3}).Erase(ctx, "erasing", "tester")
		require.NoError(t, err)
		_, err = portability.Importer{Store: s}.Import(ctx, bytes.NewReader(stream), portability.ImportOptions{AsScope: "erasing"})
		require.ErrorIs(t, err, sources.ErrScopeErasing)
		unchanged("erasing", empty)
	})
}

// TestRecordsNameWhoAskedAndGoWithTheScope: an export and an import through the Service are recorded as operations
// of their scope naming who asked (counts only); erasing the scope deletes its records (cancelling one not run yet)
// and their lane with the rest of the scope.
func TestRecordsNameWhoAskedAndGoWithTheScope(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		svc := &portability.Service{Store: s, Ledger: l, MaxAttempts: 3}
		_, err := sources.NewJournal(s).Capture(ctx, sources.CaptureRequest{ScopeID: "a", Content: "Releases ship on Tuesdays."})
		require.NoError(t, err)
		var buf bytes.Buffer
		queued, err := svc.Export(ctx, "a", "ops", false, &buf) // no worker yet: the record stays queued
		require.NoError(t, err)
		stop := runAll(t, l, s)
		defer func() { stop() }()
		_, rec, err := svc.Import(ctx, bytes.NewReader(buf.Bytes()), "b", "alice")
		require.NoError(t, err)
		done := waitStatus(t, l, rec.WorkID, db.StatusSucceeded)
		require.Equal(t, portability.ResultRecorded, done.ResultCode)
		var got portability.ImportRecord
		require.NoError(t, json.Unmarshal(done.ResultPayload, &got))
		require.Equal(t, portability.ImportRecord{Type: portability.PublicKindImport, RequestedBy: "alice", SourceScopeID: "a",
			Counts: portability.Counts{Sources: 1}}, got)
		require.NotContains(t, string(done.ResultPayload), "Tuesdays")
		waitStatus(t, l, queued.WorkID, db.StatusSucceeded)

		_, err = svc.Export(ctx, "b", "bob", true, &bytes.Buffer{})
		require.NoError(t, err)
		erase, err := (&lifecycle.Eraser{Ledger: l, MaxAttempts: 3}).Erase(ctx, "b", "ops")
		require.NoError(t, err)
		waitStatus(t, l, erase.WorkID, db.StatusSucceeded)
		left, err := l.List(ctx, coordinator.ListParams{ScopeID: "b", Kinds: portability.WorkKinds(), Limit: 10})
		require.NoError(t, err)
		require.Empty(t, left, "the erase deleted the scope's records")
		_, err = s.WorkLaneGet(ctx, portability.LaneKey("b"))
		require.ErrorIs(t, err, db.ErrNotFound, "and their idle lane")
	})
}

// captureOnFirstWrite captures a Source into scope when the export first hands it bytes: the scope changes while it
// is being read.
type captureOnFirstWrite struct {
	bytes.Buffer
	t     *testing.T
	j     *sources.Journal
	scope string
	done  bool
}

func (w *captureOnFirstWrite) Write(p []byte) (int, error) {
	if !w.done {
		w.done = true
		_, err := w.j.Capture(context.Background(), sources.CaptureRequest{ScopeID: w.scope, Content: "Arrived during the export."})
		require.NoError(w.t, err)
	}
	return w.Buffer.Write(p)
}

// TestExportOfAChangingScopeHasNoTrailer: a capture while the scope is exported ends the stream without its trailer
// (ErrScopeChanged), and an import refuses what was written as truncated.
func TestExportOfAChangingScopeHasNoTrailer(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		j := sources.NewJournal(s)
		// Large enough that the export's 64 KiB write buffer reaches the writer while the Sources are being read.
		for i := range 4 {
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "busy", Content: fmt.Sprintf("Source %d. %s", i, strings.Repeat("x", 40<<10))})
			require.NoError(t, err)
		}
		w := &captureOnFirstWrite{t: t, j: j, scope: "busy"}
		_, err := portability.Exporter{Store: s}.Export(ctx, "busy", w, portability.Options{})
		require.ErrorIs(t, err, portability.ErrScopeChanged)
		require.NotContains(t, w.String(), `"type":"trailer"`)
		pe := importErr(t, s, w.Bytes(), "elsewhere")
		require.Equal(t, portability.CodeTruncated, pe.Code)
	})
}

// cancelAfterCommit is a store whose transactions cancel the caller's request once they committed: the client
// that leaves just after its import was written.
type cancelAfterCommit struct {
	db.Store
	cancel context.CancelFunc
}

func (c cancelAfterCommit) InTx(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) error {
	err := c.Store.InTx(ctx, fn)
	if err == nil {
		c.cancel()
	}
	return err
}

var errKeyInsert = errors.New("test: the key insert failed")

// TestImportAndItsRecordCommitTogether: an import and its record (who asked) are one transaction. When the record
// cannot be written, nothing is imported (the scope still takes the import afterwards); when the request's context
// ends right after the commit, the record is there.
func TestImportAndItsRecordCommitTogether(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		_, err := sources.NewJournal(s).Capture(context.Background(), sources.CaptureRequest{ScopeID: "a", Content: "Releases ship on Tuesdays."})
		require.NoError(t, err)
		stream := export(t, s, "a", portability.Options{})

		failing := &portability.Service{Store: s, Ledger: coordinator.NewLedger(enginetest.FailEnqueueWrites(s, errKeyInsert)), MaxAttempts: 3}
		_, _, err = failing.Import(context.Background(), bytes.NewReader(stream), "b", "alice")
		require.ErrorIs(t, err, errKeyInsert)
		list, err := s.SourceListAfter(context.Background(), db.SourceListAfterParams{ScopeID: "b", Limit: 10})
		require.NoError(t, err)
		require.Empty(t, list, "nothing imported without its record")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		leaving := cancelAfterCommit{Store: s, cancel: cancel}
		svc := &portability.Service{Store: leaving, Ledger: coordinator.NewLedger(leaving), MaxAttempts: 3}
		res, item, err := svc.Import(ctx, bytes.NewReader(stream), "b", "alice")
		require.NoError(t, err)
		require.EqualValues(t, 1, res.Counts.Sources)
		require.Error(t, ctx.Err(), "the context ended after the commit")
		rec, err := s.WorkItemGet(context.Background(), item.WorkID)
		require.NoError(t, err)
		require.Equal(t, "b", rec.ScopeID)
		require.Equal(t, portability.KindImport, rec.Kind)
		require.Contains(t, string(rec.Payload), "alice")
	})
}

// firstOfType is the index of the first line of lines that is a record of type typ, or -1.
func firstOfType(lines []string, typ string) int {
	return slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"type":"`+typ+`"`) })
}
