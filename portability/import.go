package portability

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// Error codes of a refused import (docs/portability.md#errors). Every one leaves the target scope unchanged.
const (
	CodeTruncated         = "import_truncated"
	CodeChecksumMismatch  = "import_checksum_mismatch"
	CodeFormatUnsupported = "import_format_unsupported"
	CodeInvalidRecord     = "import_invalid_record"
	CodeIDCollision       = "import_id_collision"
	CodeScopeNotEmpty     = "scope_not_empty"
)

// MaxLineBytes bounds one line of a stream: a Source of 64 KiB with 16 KiB of metadata, escaped, fits.
const MaxLineBytes = 1 << 20

// Error is a refused import: its code, the 1-based line it concerns (0: the stream as a whole) and what is wrong.
// The message names fields and lines, never content.
type Error struct {
	Code    string
	Line    int64
	Message string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Code, e.Line, e.Message)
	}
	return e.Code + ": " + e.Message
}

func fail(code string, line int64, format string, args ...any) *Error {
	return &Error{Code: code, Line: line, Message: fmt.Sprintf(format, args...)}
}

// ImportOptions shape an import.
type ImportOptions struct {
	// AsScope imports under another scope id than the exported one ("": the exported one).
	AsScope string
	// InTx runs the import's write transaction fn (nil: the store's InTx). res is what the import reports once
	// written. The service runs fn inside the enqueue of the import's record, so the scope and its record commit
	// together. fn may be run more than once.
	InTx func(ctx context.Context, res ImportResult, fn func(ctx context.Context, q db.Queries) error) error
}

// ImportResult reports an import.
type ImportResult struct {
	ScopeID       string
	SourceScopeID string
	Counts        Counts
}

// Importer writes export streams into empty scopes.
type Importer struct{ Store db.Store }

// parsed is a verified stream, decoded.
type parsed struct {
	header     Header
	head       int64
	cursors    []Cursor
	sources    []db.Source // forgotten ones with ErasedAt set
	revisions  []db.MemoryRevision
	entries    map[int64][]db.MemoryEntry
	embeddings map[int64][]db.MemoryEmbedding
	candidates []db.ExperienceCandidate
}

// Import reads a whole stream from r, verifies it (trailer, checksum, format version, every record against its
// schema and the records against each other) and then writes it into the target scope in one transaction, which
// first checks that the scope is empty and not being erased. Nothing is written unless everything is: a partly
// imported scope would be worse than none (docs/portability.md#guarantees). The caller bounds r.
func (im Importer) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportResult, error) {
	p, err := parse(r)
	if err != nil {
		return ImportResult{}, err
	}
	target := opts.AsScope
	if target == "" {
		target = p.header.ScopeID
	}
	if err := sources.ValidateScope(target); err != nil {
		return ImportResult{}, err
	}
	p.retarget(target)
	res := ImportResult{ScopeID: target, SourceScopeID: p.header.ScopeID, Counts: p.header.Counts}
	inTx := im.Store.InTx
	if opts.InTx != nil {
		inTx = func(ctx context.Context, fn func(context.Context, db.Queries) error) error {
			return opts.InTx(ctx, res, fn)
		}
	}
	for range 4 {
		err = im.write(ctx, target, p, inTx)
		if !errors.Is(err, errHeadMissing) {
			return res, err
		}
	}
	return ImportResult{}, errors.New("portability: journal head vanished after creation")
}

var errHeadMissing = errors.New("portability: journal head missing")

// write is the import's one transaction: the journal head is created first by an autocommitted insert-if-absent
// (docs/protocol.md#creating-rows), like a capture's; then lock it, check the scope is empty and not being erased,
// and insert every row, in the transaction inTx runs.
func (im Importer) write(ctx context.Context, scope string, p *parsed, inTx func(context.Context, func(context.Context, db.Queries) error) error) error {
	if err := coordinator.CreateRow(ctx, func(ctx context.Context) (bool, error) {
		return im.Store.SourceJournalHeadInsertIfAbsent(ctx, scope)
	}); err != nil {
		return err
	}
	return inTx(ctx, func(ctx context.Context, q db.Queries) error {
		head, err := q.SourceJournalHeadLock(ctx, scope)
		if errors.Is(err, db.ErrNotFound) || errors.Is(err, db.ErrDeadlock) {
			return errHeadMissing
		}
		if err != nil {
			return err
		}
		if erasing, err := sources.Erasing(ctx, q, scope); err != nil || erasing {
			if err == nil {
				err = sources.ErrScopeErasing
			}
			return err
		}
		if err := empty(ctx, q, scope, head); err != nil {
			return err
		}
		now, err := q.DBNow(ctx)
		if err != nil {
			return err
		}
		for _, batch := range sourceBatches(p.sources) {
			if err := q.SourceInsertMany(ctx, batch); err != nil {
				return err
			}
		}
		head.Position, head.UpdatedAt = p.head, now
		if err := q.SourceJournalHeadUpdate(ctx, head); err != nil {
			return err
		}
		for _, c := range p.cursors {
			if err := q.SourceCursorInsert(ctx, db.SourceCursor{ScopeID: scope, CursorName: c.CursorName, Position: c.Position,
				Generation: c.Generation, UpdatedAt: now}); err != nil {
				return err
			}
		}
		// Every revision first, then the entries of all of them in one MemoryEntryInsertMany and the vectors in one
		// MemoryEmbeddingUpsertMany (each row after the row it references), so that PostgreSQL pipelines them in
		// batches of its adapter's size rather than one batch per revision.
		var entries []db.MemoryEntry
		var vectors []db.MemoryEmbedding
		for _, r := range p.revisions {
			if err := q.MemoryRevisionInsert(ctx, r); err != nil {
				return err
			}
			entries = append(entries, p.entries[r.Revision]...)
			vectors = append(vectors, p.embeddings[r.Revision]...)
		}
		if len(entries) > 0 {
			if err := q.MemoryEntryInsertMany(ctx, entries); err != nil {
				return err
			}
		}
		if len(vectors) > 0 {
			if err := q.MemoryEmbeddingUpsertMany(ctx, vectors); err != nil {
				return err
			}
		}
		for _, c := range p.candidates {
			if _, err := q.ExperienceCandidateGet(ctx, c.CandidateID); err == nil {
				return fail(CodeIDCollision, 0, "candidate %s already exists in this deployment", c.CandidateID)
			} else if !errors.Is(err, db.ErrNotFound) {
				return err
			}
			if err := q.ExperienceCandidateInsert(ctx, c); err != nil {
				if errors.Is(err, db.ErrConflict) {
					return fail(CodeIDCollision, 0, "candidate %s already exists in this deployment", c.CandidateID)
				}
				return err
			}
		}
		return nil
	})
}

// The bounds of one SourceInsertMany statement of an import: at most sourceBatchRows Sources and, past the first,
// about sourceBatchBytes of content and metadata, so that one statement stays below MySQL's max_allowed_packet (16
// MiB by default on MariaDB) even where the JSON parameter of MySQL and SQLite escapes every byte of content (\u00XX,
// six bytes for one) and hex doubles the metadata.
const (
	sourceBatchRows  = 1000
	sourceBatchBytes = 2 << 20
)

// sourceBatches splits ss, in order, into the batches of SourceInsertMany.
func sourceBatches(ss []db.Source) [][]db.Source {
	var out [][]db.Source
	start, size := 0, 0
	for i, s := range ss {
		n := len(s.Content) + len(s.Metadata) + len(s.SourceID) + len(s.SourceType)
		if i > start && (i-start == sourceBatchRows || size+n > sourceBatchBytes) {
			out = append(out, ss[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(ss) {
		out = append(out, ss[start:])
	}
	return out
}

// ErrScopeNotEmpty means the target scope has Sources, cursors, Memory or candidates (HTTP 409 scope_not_empty).
var ErrScopeNotEmpty = &Error{Code: CodeScopeNotEmpty, Message: "the target scope is not empty; import into a new scope id or erase this one first"}

// empty returns ErrScopeNotEmpty unless the scope (whose journal head the caller holds) has nothing.
func empty(ctx context.Context, q db.Queries, scope string, head db.SourceJournalHead) error {
	if head.Position != 0 {
		return ErrScopeNotEmpty
	}
	for _, name := range CursorNames {
		c, err := sources.Cursor(ctx, q, scope, name)
		if err != nil {
			return err
		}
		if c.Position != 0 || c.Generation != 0 {
			return ErrScopeNotEmpty
		}
	}
	if _, err := q.MemoryRevisionLatest(ctx, scope); err == nil {
		return ErrScopeNotEmpty
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	cs, err := q.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: scope, Limit: 1})
	if err != nil {
		return err
	}
	if len(cs) > 0 {
		return ErrScopeNotEmpty
	}
	return nil
}

// retarget sets every row's scope to target. Candidate ids are unique across scopes: under another scope id they
// are derived from the target and the exported id, so a scope can be copied within one deployment.
func (p *parsed) retarget(target string) {
	for i := range p.sources {
		p.sources[i].ScopeID = target
	}
	for i := range p.revisions {
		p.revisions[i].ScopeID = target
	}
	for _, es := range p.entries {
		for i := range es {
			es[i].ScopeID = target
		}
	}
	for _, vs := range p.embeddings {
		for i := range vs {
			vs[i].ScopeID = target
		}
	}
	for i := range p.candidates {
		p.candidates[i].ScopeID = target
		if target != p.header.ScopeID {
			p.candidates[i].CandidateID = DerivedCandidateID(target, p.candidates[i].CandidateID)
		}
	}
}

// DerivedCandidateID is the id a candidate gets when imported under another scope id: a UUID (version 8) from the
// SHA-256 of the target scope and the exported id.
func DerivedCandidateID(target, exported string) string {
	h := sha256.Sum256([]byte("candidate\x00" + target + "\x00" + exported))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// readLines splits the stream into lines (without their newline); a line longer than MaxLineBytes is refused.
func readLines(r io.Reader) ([][]byte, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var lines [][]byte
	for {
		line, err := br.ReadSlice('\n')
		var buf []byte
		buf = append(buf, line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > MaxLineBytes {
				return nil, false, fail(CodeInvalidRecord, int64(len(lines))+1, "line longer than %d bytes", MaxLineBytes)
			}
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		if len(buf) > MaxLineBytes+1 {
			return nil, false, fail(CodeInvalidRecord, int64(len(lines))+1, "line longer than %d bytes", MaxLineBytes)
		}
		if errors.Is(err, io.EOF) {
			if len(buf) > 0 {
				lines = append(lines, buf)
				return lines, false, nil // the last line has no newline
			}
			return lines, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		lines = append(lines, buf[:len(buf)-1])
	}
}

// text reports whether every value is valid UTF-8 without NUL bytes (no engine stores NUL in a text column).
func text(vs ...string) bool {
	for _, v := range vs {
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return false
		}
	}
	return true
}

func typeOf(line []byte) string {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &v) != nil {
		return ""
	}
	return v.Type
}

func parseTime(s string, line int64, field string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fail(CodeInvalidRecord, line, "%s is not an RFC 3339 time", field)
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

func jsonArray(v []int64) []byte {
	if v == nil {
		v = []int64{}
	}
	b, _ := json.Marshal(v)
	return b
}

// parse reads and verifies a whole stream.
func parse(r io.Reader) (*parsed, error) {
	lines, _, err := readLines(r)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fail(CodeTruncated, 1, "the stream is empty")
	}
	// The header first: a newer format is refused before anything else is read from it.
	var hv struct {
		Type          string `json:"type"`
		Format        string `json:"format"`
		FormatVersion int    `json:"format_version"`
	}
	if err := json.Unmarshal(lines[0], &hv); err != nil || hv.Type != TypeHeader {
		return nil, fail(CodeInvalidRecord, 1, "the first line is not a header record")
	}
	if hv.Format != Format {
		return nil, fail(CodeFormatUnsupported, 1, "format %q is not %q", hv.Format, Format)
	}
	if hv.FormatVersion > FormatVersion || hv.FormatVersion < 1 {
		return nil, fail(CodeFormatUnsupported, 1, "format version %d; this build reads versions 1..%d", hv.FormatVersion, FormatVersion)
	}
	last := lines[len(lines)-1]
	if len(lines) < 2 || typeOf(last) != TypeTrailer {
		return nil, fail(CodeTruncated, int64(len(lines))+1, "the stream ends without its trailer")
	}
	n := int64(len(lines))
	if _, err := Validate(last); err != nil {
		return nil, fail(CodeInvalidRecord, n, "trailer: %v", err)
	}
	var tr Trailer
	if err := json.Unmarshal(last, &tr); err != nil {
		return nil, fail(CodeInvalidRecord, n, "trailer: %v", err)
	}
	h := sha256.New()
	for _, l := range lines[:n-1] {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	if tr.Lines != n-1 || tr.SHA256 != hex.EncodeToString(h.Sum(nil)) {
		return nil, fail(CodeChecksumMismatch, n, "the trailer's line count or SHA-256 does not match the %d lines before it", n-1)
	}
	p := &parsed{entries: map[int64][]db.MemoryEntry{}, embeddings: map[int64][]db.MemoryEmbedding{}}
	var got Counts
	headSeen := false
	var lastPos, lastRev int64
	var lastEntryNo int32 = -1
	cursorSeen := map[string]bool{}
	sourceIDs := map[string]bool{}
	candidateIDs := map[string]bool{}
	for i, line := range lines[:n-1] {
		ln := int64(i) + 1
		t, err := Validate(line)
		if err != nil {
			return nil, fail(CodeInvalidRecord, ln, "%v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		bad := func(format string, args ...any) error { return fail(CodeInvalidRecord, ln, format, args...) }
		if (ln == 1) != (t == TypeHeader) {
			return nil, bad("a %s record out of place", t)
		}
		if ln > 1 && !headSeen && t != TypeJournalHead {
			return nil, bad("the journal_head record must follow the header")
		}
		switch t {
		case TypeHeader:
			if err := dec.Decode(&p.header); err != nil {
				return nil, bad("does not fit its record type")
			}
		case TypeJournalHead:
			var v JournalHead
			if headSeen || dec.Decode(&v) != nil {
				return nil, bad("a second or malformed journal_head record")
			}
			headSeen, p.head = true, v.Position
		case TypeCursor:
			var v Cursor
			if err := dec.Decode(&v); err != nil {
				return nil, bad("does not fit its record type")
			}
			if !slices.Contains(CursorNames, v.CursorName) || cursorSeen[v.CursorName] { // known names only: valid text
				return nil, bad("unknown or repeated cursor %q", v.CursorName)
			}
			if v.Position > p.head || len(p.sources) > 0 {
				return nil, bad("cursor beyond the journal head or after the Sources")
			}
			cursorSeen[v.CursorName] = true
			got.Cursors++
			p.cursors = append(p.cursors, v)
		case TypeSource, TypeTombstone:
			if len(p.revisions) > 0 || len(p.candidates) > 0 {
				return nil, bad("a Source after the Memory or Experience records")
			}
			var s db.Source
			var created string
			if t == TypeSource {
				var v Source
				if err := dec.Decode(&v); err != nil {
					return nil, bad("does not fit its record type")
				}
				meta, err := coordinator.CanonicalJSON([]byte(v.Metadata))
				if err != nil || len(v.Metadata) > sources.MaxMetadataBytes {
					return nil, bad("metadata must be a JSON object of at most %d bytes", sources.MaxMetadataBytes)
				}
				if !text(v.SourceID, v.SourceType, v.Content) || len(v.Content) > sources.MaxContentBytes {
					return nil, bad("content, source_id or source_type: too long, or not UTF-8 without NUL")
				}
				s = db.Source{JournalPosition: v.JournalPosition, SourceID: v.SourceID, SourceType: v.SourceType,
					Content: v.Content, Metadata: meta}
				created = v.CreatedAt
				got.Sources++
			} else {
				var v Tombstone
				if err := dec.Decode(&v); err != nil {
					return nil, bad("does not fit its record type")
				}
				if !text(v.SourceID, v.SourceType) {
					return nil, bad("source_id or source_type: not UTF-8 without NUL")
				}
				s = db.Source{JournalPosition: v.JournalPosition, SourceID: v.SourceID, SourceType: v.SourceType, Metadata: []byte("{}")}
				created = v.CreatedAt
				if s.ErasedAt, err = parseTime(v.ErasedAt, ln, "erased_at"); err != nil {
					return nil, err
				}
				got.Tombstones++
			}
			if s.CreatedAt, err = parseTime(created, ln, "created_at"); err != nil {
				return nil, err
			}
			if len(s.SourceID) > sources.MaxSourceIDBytes || len(s.SourceType) > sources.MaxTypeBytes {
				return nil, bad("source_id or source_type too long")
			}
			if s.JournalPosition <= lastPos || s.JournalPosition > p.head || sourceIDs[s.SourceID] {
				return nil, bad("journal position not ascending, beyond the journal head, or a repeated source_id")
			}
			lastPos = s.JournalPosition
			sourceIDs[s.SourceID] = true
			p.sources = append(p.sources, s)
		case TypeRevision:
			var v Revision
			if err := dec.Decode(&v); err != nil {
				return nil, bad("does not fit its record type")
			}
			if len(p.candidates) > 0 || v.Revision <= lastRev || v.WindowThrough > p.head || v.WindowAfter > v.WindowThrough {
				return nil, bad("revision not ascending, after the candidates, or its window beyond the journal head")
			}
			if err := p.closeRevision(ln); err != nil {
				return nil, err
			}
			r := db.MemoryRevision{Revision: v.Revision, WorkID: v.WorkID, CursorGeneration: v.CursorGeneration, WindowAfter: v.WindowAfter,
				WindowThrough: v.WindowThrough, EntryCount: v.EntryCount}
			if r.CreatedAt, err = parseTime(v.CreatedAt, ln, "created_at"); err != nil {
				return nil, err
			}
			if (v.LastEntryID == nil) != (v.EvictedEntryIDs == nil) {
				return nil, bad("last_entry_id and evicted_entry_ids are both null or neither")
			}
			if v.LastEntryID != nil {
				r.LastEntryID, r.EvictedEntryIDs = *v.LastEntryID, jsonArray(v.EvictedEntryIDs)
			}
			lastRev, lastEntryNo = v.Revision, -1
			got.Revisions++
			p.revisions = append(p.revisions, r)
		case TypeEntry:
			var v Entry
			if err := dec.Decode(&v); err != nil {
				return nil, bad("does not fit its record type")
			}
			if len(p.revisions) == 0 || v.Revision != lastRev || v.EntryNo <= lastEntryNo || len(p.embeddings[lastRev]) > 0 {
				return nil, bad("an entry not of the revision before it, or not in entry order")
			}
			for _, pos := range v.SourcePositions {
				if pos > p.head {
					return nil, bad("source position beyond the journal head")
				}
			}
			if !text(v.Content) {
				return nil, bad("content: not UTF-8 without NUL")
			}
			// The bounds every other writer of Memory keeps (a revision's search reads all of it).
			if len(v.Content) > provider.MaxEntryBytes {
				return nil, bad("content: more than %d bytes", provider.MaxEntryBytes)
			}
			if len(p.entries[lastRev]) >= provider.MaxMemoryEntries {
				return nil, bad("a revision of more than %d entries", provider.MaxMemoryEntries)
			}
			e := db.MemoryEntry{Revision: v.Revision, EntryNo: v.EntryNo, Content: v.Content, SourcePositions: jsonArray(v.SourcePositions)}
			if v.EntryID != nil {
				e.EntryID = *v.EntryID
			}
			if e.CreatedAt, err = parseTime(v.CreatedAt, ln, "created_at"); err != nil {
				return nil, err
			}
			lastEntryNo = v.EntryNo
			got.Entries++
			p.entries[lastRev] = append(p.entries[lastRev], e)
		case TypeEmbedding:
			var v Embedding
			if err := dec.Decode(&v); err != nil {
				return nil, bad("does not fit its record type")
			}
			if len(p.revisions) == 0 || v.Revision != lastRev || int64(len(v.Vector)) != 4*int64(v.Dimensions) {
				return nil, bad("an embedding not of the revision before it, or its vector not 4 bytes per dimension")
			}
			if !slices.ContainsFunc(p.entries[lastRev], func(e db.MemoryEntry) bool { return e.EntryNo == v.EntryNo }) {
				return nil, bad("an embedding of no entry")
			}
			if !text(v.Model) || len(v.Model) > 128 {
				return nil, bad("model: too long, or not UTF-8 without NUL")
			}
			vec := db.MemoryEmbedding{Revision: v.Revision, EntryNo: v.EntryNo, Model: v.Model, Dimensions: v.Dimensions, Embedding: v.Vector}
			if vec.CreatedAt, err = parseTime(v.CreatedAt, ln, "created_at"); err != nil {
				return nil, err
			}
			got.Embeddings++
			p.embeddings[lastRev] = append(p.embeddings[lastRev], vec)
		case TypeCandidate:
			var v Candidate
			if err := dec.Decode(&v); err != nil {
				return nil, bad("does not fit its record type")
			}
			if err := p.closeRevision(ln); err != nil {
				return nil, err
			}
			for _, pos := range v.CitedPositions {
				if pos > p.head {
					return nil, bad("cited position beyond the journal head")
				}
			}
			if !text(v.Title, v.Lesson) {
				return nil, bad("title or lesson: not UTF-8 without NUL")
			}
			if len(v.Title) > provider.MaxTitleBytes || len(v.Lesson) > provider.MaxLessonBytes {
				return nil, bad("title or lesson: more than %d or %d bytes", provider.MaxTitleBytes, provider.MaxLessonBytes)
			}
			if candidateIDs[v.CandidateID] {
				return nil, bad("a repeated candidate_id")
			}
			candidateIDs[v.CandidateID] = true
			c := db.ExperienceCandidate{CandidateID: v.CandidateID, WorkID: v.WorkID, Title: v.Title, Lesson: v.Lesson,
				CitedPositions: jsonArray(v.CitedPositions), Status: v.Status, StateVersion: v.StateVersion}
			if c.CreatedAt, err = parseTime(v.CreatedAt, ln, "created_at"); err != nil {
				return nil, err
			}
			if c.UpdatedAt, err = parseTime(v.UpdatedAt, ln, "updated_at"); err != nil {
				return nil, err
			}
			got.Candidates++
			p.candidates = append(p.candidates, c)
		default:
			return nil, bad("a %s record out of place", t)
		}
	}
	if err := p.closeRevision(n); err != nil {
		return nil, err
	}
	if !headSeen {
		return nil, fail(CodeInvalidRecord, 2, "no journal_head record")
	}
	if lastPos != p.head {
		return nil, fail(CodeInvalidRecord, 2, "the journal head %d is not the last Source's position %d", p.head, lastPos)
	}
	if got != p.header.Counts {
		return nil, fail(CodeInvalidRecord, 1, "the header's counts do not match the records")
	}
	return p, nil
}

// closeRevision checks that the last revision got as many entries as its entry_count says.
func (p *parsed) closeRevision(line int64) error {
	if len(p.revisions) == 0 {
		return nil
	}
	r := p.revisions[len(p.revisions)-1]
	if int64(len(p.entries[r.Revision])) != int64(r.EntryCount) {
		return fail(CodeInvalidRecord, line, "revision %d has %d entries, its entry_count says %d", r.Revision, len(p.entries[r.Revision]), r.EntryCount)
	}
	return nil
}
