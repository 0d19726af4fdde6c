package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

func newMemoryCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("memory", "Flush Sources into Memory, show it and search it",
		`  powercontext memory flush --scope team
  powercontext memory show --scope team
  powercontext memory search --scope team billing
  powercontext memory history --scope team
  powercontext memory diff --scope team --from 3 --to 4`, f)
	cmd.AddCommand(newMemoryFlushCommand(f), newMemoryShowCommand(f), newMemorySearchCommand(f),
		newMemoryHistoryCommand(f), newMemoryDiffCommand(f), newMemoryContextCommand(f))
	return cmd
}

func newMemoryFlushCommand(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flush --scope SCOPE [--deadline 30s]",
		Short: "Turn a scope's pending Sources into a new Memory revision and wait for it",
		Long: `Flush a scope's pending Sources into Memory and wait for the result. The flush is submitted as an operation
(POST /v1/memory/flush with Prefer: respond-async) and then followed with GET /v1/operations/{id} — any server
replica may answer — while a status line on standard error shows its progress. Each flush processes at most one
window of 100 Sources.

When the operation is still running at --deadline the command exits 5 and the operation continues on the server
(follow it with "powercontext ops get ID"). A failed or cancelled operation exits 1 naming its error code. When
standard error is not a terminal, a plain progress line is printed there every --progress-interval (10s). A
scope whose next window is held by a failed operation is blocked until that operation is retried or cancelled
("powercontext ops retry ID --expected-version N").`,
		Example: `  powercontext memory flush --scope team
  powercontext memory flush --scope team --deadline 2m --output json`,
	}
	return followTrigger(cmd, f, "scope to flush (required)", (*client.Client).FlushMemoryWith, printFlush)
}

func printFlush(w io.Writer, scope string, r client.FlushResult) error {
	rev := "none yet"
	if r.Memory != nil {
		rev = fmt.Sprint(r.Memory.Revision)
	}
	if r.Status == client.FlushIdle {
		_, err := fmt.Fprintf(w, "nothing to flush: scope %s is up to date at journal position %d (memory revision %s)\n",
			scope, r.CurrentCursor, rev)
		return err
	}
	op := ""
	if r.OperationID != nil {
		op = " (operation " + *r.OperationID + ")"
	}
	_, err := fmt.Fprintf(w, "flushed %s of scope %s: journal %d → %d of %d; memory revision %s%s\n",
		plural(int(r.ProcessedSourceCount), "source", "sources"), scope, r.PreviousCursor, r.CurrentCursor,
		r.HighWatermark, rev, op)
	if n := r.HighWatermark - r.CurrentCursor; err == nil && n > 0 {
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		_, err = fmt.Fprintf(w, "%s %s still pending: run the flush again\n", plural(int(n), "source", "sources"), verb)
	}
	return err
}

// statusLine shows a followed operation's progress on standard error. On a terminal (live) it rewrites one line
// ("\r") each time the operation's status or attempt changes. Elsewhere (a pipe, a log file, a script) a
// carriage-return line is noise, so it writes a plain line every `every` (--progress-interval; 0 = never) with the
// last status seen and the time elapsed — a JSON object per line with --output json. It is finished (end) before
// the result is printed, so it never follows the result.
type statusLine struct {
	w     io.Writer
	live  bool
	last  string
	width int

	// plain progress (not live)
	json    bool
	every   time.Duration
	start   time.Time
	mu      sync.Mutex
	rec     client.OperationRecord
	seen    bool
	stop    chan struct{}
	stopped chan struct{}
}

// newStatusLine starts the status display of one followed operation on w.
func newStatusLine(w io.Writer, asJSON bool, every time.Duration) *statusLine {
	s := &statusLine{w: w, live: IsTerminal(w), json: asJSON, every: every, start: time.Now()}
	if !s.live && every > 0 {
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go s.tick()
	}
	return s
}

// IsTerminal reports whether w is a terminal; the live status line is drawn only then. A variable so that tests
// can draw it into a buffer.
var IsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func (s *statusLine) show(r client.OperationRecord) {
	if !s.live {
		s.mu.Lock()
		s.rec, s.seen = r, true
		s.mu.Unlock()
		return
	}
	line := "operation " + r.OperationID + ": " + r.Status
	if r.AttemptCount > 0 {
		line += fmt.Sprintf(" (attempt %d)", r.AttemptCount)
	}
	if line == s.last {
		return
	}
	pad := ""
	if n := s.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprint(s.w, "\r"+line+pad)
	s.last, s.width = line, max(s.width, len(line))
}

// tick writes a plain progress line every s.every until end.
func (s *statusLine) tick() {
	defer close(s.stopped)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			r, seen := s.rec, s.seen
			s.mu.Unlock()
			if seen {
				s.plain(r, time.Since(s.start))
			}
		}
	}
}

func (s *statusLine) plain(r client.OperationRecord, elapsed time.Duration) {
	if s.json {
		b, err := json.Marshal(map[string]any{"progress": map[string]any{"operation_id": r.OperationID,
			"status": r.Status, "attempt_count": r.AttemptCount, "elapsed_seconds": elapsed.Seconds()}})
		if err == nil {
			_ = writeJSONLine(s.w, b)
		}
		return
	}
	line := "operation " + r.OperationID + ": " + r.Status
	if r.AttemptCount > 0 {
		line += fmt.Sprintf(" (attempt %d)", r.AttemptCount)
	}
	fmt.Fprintf(s.w, "%s, %s elapsed\n", line, elapsed.Round(time.Second))
}

// end stops the plain progress lines and finishes the live line, if one was written.
func (s *statusLine) end() {
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
		s.stop = nil
	}
	if s.last != "" {
		fmt.Fprintln(s.w)
	}
}

// plural is "1 entry", "2 entries": n and the noun's form for it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func newMemoryShowCommand(f *clientFlags) *cobra.Command {
	var scope string
	var revision int64
	cmd := &cobra.Command{
		Use:   "show --scope SCOPE [--revision N]",
		Short: "Show a scope's current (or any) Memory revision",
		Example: `  powercontext memory show --scope team
  powercontext memory show --scope team --output json | jq '.entries[].content'`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			var m client.Memory
			if revision > 0 {
				m, err = s.c.GetMemoryRevision(cmd.Context(), scope, revision)
			} else {
				m, err = s.c.GetMemory(cmd.Context(), scope)
			}
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			if m.Revision == nil {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "scope %s has no memory yet: capture sources, then run "+
					"powercontext memory flush --scope %s\n", scope, scope)
				return err
			}
			return printMemory(cmd.OutOrStdout(), m, "")
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope to show (required)")
	cmd.Flags().Int64Var(&revision, "revision", 0, "revision to show (default the current one)")
	return cmd
}

func newMemorySearchCommand(f *clientFlags) *cobra.Command {
	var scope, mode string
	var limit int
	cmd := &cobra.Command{
		Use:   "search --scope SCOPE [--limit N] [--mode fts|semantic|hybrid] QUERY",
		Short: "Search a scope's current Memory, best match first (any language, CJK included)",
		Long: `Search a scope's current Memory, best match first. --mode chooses the ranking: fts (full text, every word
of QUERY), semantic (embeddings: similar meaning with an embedding model, similar spelling with the built-in one) or
hybrid (both, fused); by default hybrid when the revision has embeddings, else fts. The SCORE column is the ranking's
score, FTS and SEMANTIC the score of each method that matched the entry. A "degraded" note means the query could not
be embedded in time and full text answered.`,
		Example: `  powercontext memory search --scope team billing
  powercontext memory search --scope team --limit 5 "deploy window"
  powercontext memory search --scope team --mode semantic "how do we ship a release"`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			m, err := s.c.SearchMemoryWith(cmd.Context(), client.SearchParams{ScopeID: scope, Q: a[0], Limit: limit, Mode: mode})
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			if len(m.Entries) == 0 {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "no memory entries of scope %s match %q\n", scope, a[0])
				return err
			}
			return printMemory(cmd.OutOrStdout(), m, a[0])
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope to search (required)")
	cmd.Flags().IntVar(&limit, "limit", 0, "most entries to return (1..100, default 20)")
	cmd.Flags().StringVar(&mode, "mode", "", "ranking: fts, semantic or hybrid (default: hybrid when the revision has embeddings, else fts)")
	completeValues(cmd, "mode", searchModeValues)
	return cmd
}

// printRanking prints the ranking that answered (when the server reports one) and the degraded note.
func printRanking(w io.Writer, mode string, degraded bool) error {
	if mode == "" {
		return nil
	}
	line := "ranking: " + mode
	if degraded {
		line += " (degraded: the query could not be embedded in time, full text answered)"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

func printMemory(w io.Writer, m client.Memory, query string) error {
	head := "scope " + m.ScopeID
	if m.Revision != nil {
		head += fmt.Sprintf(", memory revision %d", *m.Revision)
	}
	if m.CreatedAt != nil {
		head += " (" + fmtTime(*m.CreatedAt) + ")"
	}
	if query != "" {
		head += fmt.Sprintf(": %s matching %q", plural(len(m.Entries), "entry", "entries"), query)
	} else {
		head += ": " + plural(len(m.Entries), "entry", "entries")
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	if query == "" && m.Evicted != nil && m.Evicted.Count > 0 {
		if _, err := fmt.Fprintf(w, "evicted by the entry cap: %s\n", fmtEvicted(m.Evicted)); err != nil {
			return err
		}
	}
	if err := printRanking(w, m.Mode, m.Degraded); err != nil {
		return err
	}
	if len(m.Entries) > 0 && m.Entries[0].Score != nil {
		t := newTable(w, "#", "ID", "SCORE", "FTS", "SEMANTIC", "SOURCES", "CONTENT")
		num := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf("%.4g", *p)
		}
		for _, e := range m.Entries {
			var ms client.MethodScores
			if e.Scores != nil {
				ms = *e.Scores
			}
			t.row(fmt.Sprint(e.EntryNo), fmtID(e.EntryID), num(e.Score), num(ms.FTS), num(ms.Semantic), fmtPositions(e.SourcePositions), cell(e.Content))
		}
		return t.flush()
	}
	t := newTable(w, "#", "ID", "SOURCES", "CONTENT")
	for _, e := range m.Entries {
		t.row(fmt.Sprint(e.EntryNo), fmtID(e.EntryID), fmtPositions(e.SourcePositions), cell(e.Content))
	}
	return t.flush()
}

// fmtID is an entry's stable id, "-" when it has none (an older server build wrote it).
func fmtID(id *int64) string {
	if id == nil {
		return "-"
	}
	return strconv.FormatInt(*id, 10)
}

// maxEvictedIDs bounds how many evicted ids a table cell lists.
const maxEvictedIDs = 5

// fmtEvicted is what the entry cap dropped: "-" when the revision does not record it, else the count and the
// first ids ("2 (ids 4,9)").
func fmtEvicted(e *client.Eviction) string {
	switch {
	case e == nil:
		return "-"
	case e.Count == 0:
		return "0"
	}
	ids := fmtPositions(e.EntryIDs[:min(len(e.EntryIDs), maxEvictedIDs)])
	if len(e.EntryIDs) > maxEvictedIDs {
		ids += ",…"
	}
	return fmt.Sprintf("%d (ids %s)", e.Count, ids)
}

func newMemoryHistoryCommand(f *clientFlags) *cobra.Command {
	var scope, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "history --scope SCOPE [--limit N] [--cursor C]",
		Short: "List a scope's Memory revisions, newest first",
		Example: `  powercontext memory history --scope team
  powercontext memory history --scope team --limit 10 --cursor 41`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			l, err := s.c.ListMemoryRevisions(cmd.Context(), scope, cursor, limit)
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			w := cmd.OutOrStdout()
			t := newTable(w, "REVISION", "CREATED", "ENTRIES", "WINDOW", "OPERATION ID", "EVICTED")
			for _, r := range l.Items {
				t.row(fmt.Sprint(r.Revision), fmtTime(r.CreatedAt), fmt.Sprint(r.EntryCount),
					fmt.Sprintf("(%d, %d]", r.WindowAfter, r.WindowThrough), r.OperationID, fmtEvicted(r.Evicted))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if l.NextCursor != nil {
				_, err = fmt.Fprintf(w, "next page: --cursor %s\n", *l.NextCursor)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope whose revisions to list (required)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "next_cursor of the previous page")
	cmd.Flags().IntVar(&limit, "limit", 0, "most revisions to list (1..100, default 50)")
	return cmd
}

func newMemoryDiffCommand(f *clientFlags) *cobra.Command {
	var scope string
	var from, to int64
	cmd := &cobra.Command{
		Use:   "diff --scope SCOPE [--from N] [--to M]",
		Short: "Show what changed between two Memory revisions (default: the current one and the one before)",
		Example: `  powercontext memory diff --scope team
  powercontext memory diff --scope team --from 0 --to 2`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			d, err := s.c.DiffMemory(cmd.Context(), scope, from, to)
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			w := cmd.OutOrStdout()
			if _, err := fmt.Fprintf(w, "scope %s, memory revision %d -> %d: %d added, %d removed, %d changed\n",
				d.ScopeID, d.From, d.To, len(d.Added), len(d.Removed), len(d.Changed)); err != nil {
				return err
			}
			t := newTable(w, "", "#", "ID", "SOURCES", "CONTENT")
			for _, e := range d.Added {
				t.row("+", fmt.Sprint(e.EntryNo), fmtID(e.EntryID), fmtPositions(e.SourcePositions), cell(e.Content))
			}
			for _, e := range d.Removed {
				t.row("-", fmt.Sprint(e.EntryNo), fmtID(e.EntryID), fmtPositions(e.SourcePositions), cell(e.Content))
			}
			for _, p := range d.Changed {
				t.row("~", fmt.Sprint(p.To.EntryNo), fmtID(p.To.EntryID), fmtPositions(p.To.SourcePositions), cell(p.To.Content))
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope to compare (required)")
	cmd.Flags().Int64Var(&from, "from", -1, "older revision (0 = empty Memory; default the one before --to)")
	cmd.Flags().Int64Var(&to, "to", 0, "newer revision (default the current one)")
	return cmd
}

func newMemoryContextCommand(f *clientFlags) *cobra.Command {
	var scope, mode string
	var maxTokens int
	cmd := &cobra.Command{
		Use:   "context --scope SCOPE [--max-tokens N] [--mode fts|semantic|hybrid] [QUERY]",
		Short: "Show the Memory entries and approved lessons an agent would read for QUERY, within a token budget",
		Example: `  powercontext memory context --scope team "deploy staging"
  powercontext memory context --scope team --max-tokens 500 -o json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			q := ""
			if len(a) == 1 {
				q = a[0]
			}
			cx, err := s.c.GetContextWith(cmd.Context(), client.ContextParams{ScopeID: scope, Q: q, MaxTokens: maxTokens, Mode: mode})
			if err != nil {
				return s.explain(err)
			}
			if s.json {
				return s.printJSON(cmd.OutOrStdout())
			}
			w := cmd.OutOrStdout()
			if _, err := fmt.Fprintf(w, "scope %s: %s, %d of %d tokens (%d left out)\n", cx.ScopeID,
				plural(len(cx.Items), "item", "items"), cx.UsedTokens, cx.MaxTokens, cx.Omitted); err != nil {
				return err
			}
			if q != "" {
				if err := printRanking(w, cx.Mode, cx.Degraded); err != nil {
					return err
				}
			}
			t := newTable(w, "TYPE", "ID", "TOKENS", "SOURCES", "CONTENT")
			for _, it := range cx.Items {
				content := it.Content
				if it.Title != nil {
					content = *it.Title + ": " + content
				}
				t.row(it.Type, fmtID(it.EntryID), fmt.Sprint(it.Tokens), fmtPositions(it.SourcePositions), cell(content))
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope to read (required)")
	cmd.Flags().IntVar(&maxTokens, "max-tokens", 0, "token budget (1..100000, default 2000)")
	cmd.Flags().StringVar(&mode, "mode", "", "ranking of the Memory entries: fts, semantic or hybrid (default: hybrid when the revision has embeddings, else fts)")
	completeValues(cmd, "mode", searchModeValues)
	return cmd
}
