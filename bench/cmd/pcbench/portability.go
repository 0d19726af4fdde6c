package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
)

// The portability section (-only portability, `make bench-portability`): the throughput of a scope's export
// (portability.Exporter), its import under another scope id (portability.Importer) and `server copy` from an
// embedded SQLite deployment into a fresh database of each engine (app's command, run in this process: export,
// import in one transaction, export again from the target and compare). A record is one line of the export stream
// (header and trailer included); MB/s is the stream's size (10^6 bytes) over the time.

// portSourcesPerRevision and portEntriesPerRevision shape the seeded Memory: one revision per 100 Sources with 20
// entries each, like TestMeasureExportImport (docs/portability.md#measurements); every 50th Source is forgotten (a
// tombstone in the stream).
const (
	portSourcesPerRevision = 100
	portEntriesPerRevision = 20
	portTombstoneEvery     = 50
	portScope              = "bench/portability"
)

type portResult struct {
	op      string    // export, import or copy
	engine  db.Engine // the engine exported from or imported into; for copy, the target (the source is SQLite)
	sources int       // Sources of the scope (tombstones included)
	records int       // lines of the stream
	bytes   int       // size of the stream
	took    time.Duration
	err     error
}

func (x portResult) recordsPerSecond() float64 { return float64(x.records) / x.took.Seconds() }
func (x portResult) mbPerSecond() float64      { return float64(x.bytes) / 1e6 / x.took.Seconds() }

func (x portResult) summary() string {
	if x.err != nil {
		return "error: " + x.err.Error()
	}
	return fmt.Sprintf("%s %d records, %.1f MB in %s: %.0f records/s, %.2f MB/s", x.op, x.records, float64(x.bytes)/1e6,
		x.took.Round(time.Millisecond), x.recordsPerSecond(), x.mbPerSecond())
}

// seedPortScope writes n Sources (every portTombstoneEvery-th forgotten), the journal head, one Memory revision of
// portEntriesPerRevision entries per portSourcesPerRevision Sources and the memory cursor after the last window.
func seedPortScope(ctx context.Context, store db.Store, n int) error {
	now, err := store.DBNow(ctx)
	if err != nil {
		return err
	}
	if _, err := store.SourceJournalHeadInsertIfAbsent(ctx, portScope); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(31, uint64(n)))
	const batch = 1000
	for from := 1; from <= n; from += batch {
		ss := make([]db.Source, 0, batch)
		for pos := from; pos < from+batch && pos <= n; pos++ {
			s := db.Source{ScopeID: portScope, JournalPosition: int64(pos), SourceID: fmt.Sprintf("msg-%07d", pos), SourceType: "message",
				CreatedAt: now, Metadata: []byte(`{}`)}
			if pos%portTombstoneEvery == 0 {
				s.ErasedAt = now
			} else {
				words := make([]string, 40)
				for i := range words {
					words[i] = searchWords[r.IntN(len(searchWords))]
				}
				s.Content = fmt.Sprintf("Message %d: %s.", pos, strings.Join(words, " "))
				// Canonical JSON (sorted keys), as a capture stores it: the import canonicalises metadata, so other
				// bytes would fail the copy's verification.
				s.Metadata = []byte(`{"author":"` + searchWords[r.IntN(len(searchWords))] + `","channel":"c` + strconv.Itoa(pos%17) + `"}`)
			}
			ss = append(ss, s)
		}
		if err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error { return q.SourceInsertMany(ctx, ss) }); err != nil {
			return fmt.Errorf("seed sources: %w", err)
		}
	}
	if err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		h, err := q.SourceJournalHeadLock(ctx, portScope)
		if err != nil {
			return err
		}
		h.Position = int64(n)
		return q.SourceJournalHeadUpdate(ctx, h)
	}); err != nil {
		return fmt.Errorf("seed head: %w", err)
	}
	revs := int64(n / portSourcesPerRevision)
	for rev := int64(1); rev <= revs; rev++ {
		through := rev * portSourcesPerRevision
		entries := make([]db.MemoryEntry, portEntriesPerRevision)
		for i := range entries {
			words := make([]string, 12)
			for w := range words {
				words[w] = searchWords[r.IntN(len(searchWords))]
			}
			entries[i] = db.MemoryEntry{ScopeID: portScope, Revision: rev, EntryNo: int32(i + 1), EntryID: int64(i + 1), CreatedAt: now,
				Content:         fmt.Sprintf("Fact %d of revision %d: %s.", i+1, rev, strings.Join(words, " ")),
				SourcePositions: []byte(`[` + strconv.FormatInt(through-int64(i), 10) + `]`)}
		}
		if err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: portScope, Revision: rev, WorkID: "00000000-0000-4000-8000-000000000001",
				CursorGeneration: rev - 1, WindowAfter: through - portSourcesPerRevision, WindowThrough: through, EntryCount: portEntriesPerRevision,
				CreatedAt: now, LastEntryID: portEntriesPerRevision, EvictedEntryIDs: []byte(`[]`)}); err != nil {
				return err
			}
			return q.MemoryEntryInsertMany(ctx, entries)
		}); err != nil {
			return fmt.Errorf("seed revision %d: %w", rev, err)
		}
	}
	if revs > 0 {
		if err := store.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: portScope, CursorName: memory.CursorName,
			Position: revs * portSourcesPerRevision, Generation: revs, UpdatedAt: now}); err != nil {
			return fmt.Errorf("seed cursor: %w", err)
		}
	}
	return nil
}

// runPortExportImport seeds a scope of n Sources in a fresh database of engine, times its export and the import of
// the stream under another scope id of the same database.
func runPortExportImport(ctx context.Context, srv *servers, engine db.Engine, n int) []portResult {
	fail := func(err error) []portResult {
		return []portResult{{op: "export", engine: engine, sources: n, err: err}, {op: "import", engine: engine, sources: n, err: err}}
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
	if err := seedPortScope(ctx, store, n); err != nil {
		return fail(err)
	}
	var buf bytes.Buffer
	start := time.Now()
	counts, err := portability.Exporter{Store: store}.Export(ctx, portScope, &buf, portability.Options{Embeddings: true})
	exp := portResult{op: "export", engine: engine, sources: n, records: bytes.Count(buf.Bytes(), []byte("\n")), bytes: buf.Len(),
		took: time.Since(start), err: err}
	if err != nil {
		return fail(err)
	}
	start = time.Now()
	res, err := portability.Importer{Store: store}.Import(ctx, bytes.NewReader(buf.Bytes()), portability.ImportOptions{AsScope: portScope + "-copy"})
	imp := portResult{op: "import", engine: engine, sources: n, records: exp.records, bytes: exp.bytes, took: time.Since(start), err: err}
	if err == nil && res.Counts != counts {
		imp.err = fmt.Errorf("imported counts %+v, exported %+v", res.Counts, counts)
	}
	return []portResult{exp, imp}
}

// runPortCopy seeds a scope of n Sources in a fresh SQLite database and times `server copy` from it into a fresh
// database of each engine.
func runPortCopy(ctx context.Context, srv *servers, engines []db.Engine, n int, progress func(string, ...any)) []portResult {
	var out []portResult
	fail := func(err error) []portResult {
		for _, e := range engines {
			out = append(out, portResult{op: "copy", engine: e, sources: n, err: err})
		}
		return out
	}
	from, err := srv.createDB(ctx, db.EngineSQLite)
	if err != nil {
		return fail(err)
	}
	defer from.drop()
	store, err := openStore(ctx, from, storeOptions{})
	if err != nil {
		return fail(err)
	}
	err = seedPortScope(ctx, store, n)
	var stream bytes.Buffer
	if err == nil {
		// The stream a copy moves, for its size and record count (the copy itself exports again).
		_, err = portability.Exporter{Store: store}.Export(ctx, portScope, &stream, portability.Options{Embeddings: true})
	}
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	for _, e := range engines {
		progress("portability: server copy sqlite -> %s, %d sources", e, n)
		r := portResult{op: "copy", engine: e, sources: n, records: bytes.Count(stream.Bytes(), []byte("\n")), bytes: stream.Len()}
		to, err := srv.createDB(ctx, e)
		if err != nil {
			r.err = err
			out = append(out, r)
			continue
		}
		cmd := app.NewRootCommand()
		var stdout bytes.Buffer
		cmd.SetOut(&stdout)
		cmd.SetErr(&stdout)
		cmd.SetArgs([]string{"server", "copy", "--from", from.raw, "--to", to.raw, "-o", "json"})
		start := time.Now()
		err = cmd.ExecuteContext(ctx)
		r.took = time.Since(start)
		var rep app.CopyReport
		switch {
		case err != nil:
			r.err = fmt.Errorf("server copy: %w: %s", err, strings.TrimSpace(stdout.String()))
		case json.Unmarshal(stdout.Bytes(), &rep) != nil || len(rep.Scopes) != 1 || rep.Scopes[0].Counts.Sources+rep.Scopes[0].Counts.Tombstones != int64(n):
			r.err = fmt.Errorf("server copy reported %s", strings.TrimSpace(stdout.String()))
		}
		to.drop()
		progress("  -> %s", r.summary())
		out = append(out, r)
	}
	return out
}

// runPortability runs the section for each size: export and import on every engine, then the copies.
func runPortability(ctx context.Context, srv *servers, engines []db.Engine, sizes []int, progress func(string, ...any)) []portResult {
	var out []portResult
	for _, n := range sizes {
		for _, e := range engines {
			progress("portability: export and import on %s, %d sources", e, n)
			for _, r := range runPortExportImport(ctx, srv, e, n) {
				progress("  -> %s", r.summary())
				out = append(out, r)
			}
		}
		out = append(out, runPortCopy(ctx, srv, engines, n, progress)...)
	}
	return out
}

// The portability section has markers of its own, so that `make bench-portability` rewrites it alone.
const (
	portBeginMarker = "<!-- pcbench:portability:begin (generated by `make bench-portability`; edit outside the markers) -->"
	portEndMarker   = "<!-- pcbench:portability:end -->"
)

func (r *report) portabilityMarkdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("### Export, import and server copy (generated %s, run took %s)\n\n", r.started.UTC().Format("2006-01-02 15:04 UTC"), r.elapsed.Round(time.Second))
	w("Reproduce from the repository root:\n\n```sh\nmake bench-portability\n# which runs\ncd bench && go run ./cmd/pcbench %s\n```\n\n", strings.Join(r.args, " "))
	w("One scope of N Sources (about 330 bytes of text and 40 of metadata each; every %dth forgotten, a tombstone), one Memory "+
		"revision of %d entries per %d Sources and the memory cursor after the last window; no vectors. A record is one line of "+
		"the JSON Lines stream (header and trailer included); MB/s is the stream's size in 10^6 bytes over the time. "+
		"**export**: `portability.Exporter` into memory (pages of 500). **import**: `portability.Importer` of that stream under "+
		"another scope id of the same database (parse and verify, then one transaction). **server copy**: `powercontext server copy` "+
		"from an embedded SQLite deployment holding the scope into a fresh, migrated database of the engine (export, import, "+
		"export again from the target and compare, in this process).\n\n", portTombstoneEvery, portEntriesPerRevision, portSourcesPerRevision)
	for _, f := range r.machine {
		if !strings.HasPrefix(f, "River:") {
			w("- %s\n", f)
		}
	}
	w("\n| operation | engine | Sources | records | stream MB | time | records/s | MB/s |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, x := range r.portability {
		name := x.op
		engine := string(x.engine)
		if x.op == "copy" {
			name, engine = "server copy", "sqlite → "+engine
		}
		if x.err != nil {
			w("| %s | %s | %s | error: %s | | | | |\n", name, engine, thousands(x.sources), strings.NewReplacer("|", "/", "\n", " ").Replace(x.err.Error()))
			continue
		}
		w("| %s | %s | %s | %s | %.1f | %s | %s | %.2f |\n", name, engine, thousands(x.sources), thousands(x.records), float64(x.bytes)/1e6,
			x.took.Round(time.Millisecond), thousands(int(x.recordsPerSecond()+0.5)), x.mbPerSecond())
	}
	w("\n")
	return b.String()
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
