package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
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
  powercontext memory search --scope team billing`, f)
	cmd.AddCommand(newMemoryFlushCommand(f), newMemoryShowCommand(f), newMemorySearchCommand(f))
	return cmd
}

func newMemoryFlushCommand(f *clientFlags) *cobra.Command {
	var scope string
	var deadline, poll time.Duration
	cmd := &cobra.Command{
		Use:   "flush --scope SCOPE [--deadline 30s]",
		Short: "Turn a scope's pending Sources into a new Memory revision and wait for it",
		Long: `Flush a scope's pending Sources into Memory and wait for the result. The flush is submitted as an operation
(POST /v1/memory/flush with Prefer: respond-async) and then followed with GET /v1/operations/{id} — any server
replica may answer — while a status line on standard error shows its progress. Each flush processes at most one
window of 100 Sources.

When the operation is still running at --deadline the command exits 1 and the operation continues on the server
(follow it with "powercontext ops get ID"). A failed or cancelled operation exits 1 naming its error code. A
scope whose next window is held by a failed operation is blocked until that operation is retried or cancelled
("powercontext ops retry ID --expected-version N").`,
		Example: `  powercontext memory flush --scope team
  powercontext memory flush --scope team --deadline 2m --output json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			if deadline < 0 || poll <= 0 {
				return usageErrorf("--deadline must not be negative and --poll must be positive")
			}
			s, err := f.connect(client.WithOperationDeadline(deadline), client.WithPollInterval(poll))
			if err != nil {
				return err
			}
			status := &statusLine{w: cmd.ErrOrStderr(), live: IsTerminal(cmd.ErrOrStderr())}
			res, err := s.c.FlushMemoryWith(cmd.Context(), scope, status.show)
			status.end()
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				b, err := json.Marshal(res)
				if err != nil {
					return err
				}
				return writeJSONLine(out, b)
			}
			return printFlush(out, scope, res)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scope, "scope", "", "scope to flush (required)")
	fl.DurationVar(&deadline, "deadline", client.DefaultOperationDeadline, "how long to wait for the operation")
	fl.DurationVar(&poll, "poll", client.DefaultPollInterval, "pause between two status requests")
	return cmd
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
	_, err := fmt.Fprintf(w, "flushed %d sources of scope %s: journal %d → %d of %d; memory revision %s%s\n",
		r.ProcessedSourceCount, scope, r.PreviousCursor, r.CurrentCursor, r.HighWatermark, rev, op)
	if err == nil && r.CurrentCursor < r.HighWatermark {
		_, err = fmt.Fprintf(w, "%d sources are still pending: run the flush again\n", r.HighWatermark-r.CurrentCursor)
	}
	return err
}

// statusLine rewrites one line on standard error ("\r") each time an operation's status or attempt changes. It
// writes only when standard error is a terminal (live): in a pipe or a log file a carriage-return line is noise.
// It is finished (end) before the result is printed, so it never follows the result.
type statusLine struct {
	w     io.Writer
	live  bool
	last  string
	width int
}

// IsTerminal reports whether w is a terminal; the live status line is drawn only then. A variable so that tests
// can draw it into a buffer.
var IsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func (s *statusLine) show(r client.OperationRecord) {
	if !s.live {
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

// end finishes the status line, if one was written.
func (s *statusLine) end() {
	if s.last != "" {
		fmt.Fprintln(s.w)
	}
}

func newMemoryShowCommand(f *clientFlags) *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "show --scope SCOPE",
		Short: "Show a scope's current Memory revision",
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
			m, err := s.c.GetMemory(cmd.Context(), scope)
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
	return cmd
}

func newMemorySearchCommand(f *clientFlags) *cobra.Command {
	var scope string
	var limit int
	cmd := &cobra.Command{
		Use:   "search --scope SCOPE [--limit N] QUERY",
		Short: "Search a scope's current Memory, best match first (any language, CJK included)",
		Example: `  powercontext memory search --scope team billing
  powercontext memory search --scope team --limit 5 "deploy window"`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			m, err := s.c.SearchMemory(cmd.Context(), scope, a[0], limit)
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
	return cmd
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
		head += fmt.Sprintf(": %d entries matching %q", len(m.Entries), query)
	} else {
		head += fmt.Sprintf(": %d entries", len(m.Entries))
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	if len(m.Entries) > 0 && m.Entries[0].Score != nil {
		t := newTable(w, "#", "SCORE", "SOURCES", "CONTENT")
		for _, e := range m.Entries {
			score := ""
			if e.Score != nil {
				score = fmt.Sprintf("%.2f", *e.Score)
			}
			t.row(fmt.Sprint(e.EntryNo), score, fmtPositions(e.SourcePositions), cell(e.Content))
		}
		return t.flush()
	}
	t := newTable(w, "#", "SOURCES", "CONTENT")
	for _, e := range m.Entries {
		t.row(fmt.Sprint(e.EntryNo), fmtPositions(e.SourcePositions), cell(e.Content))
	}
	return t.flush()
}
