package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

func newSourcesCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("sources", "Capture Sources into a scope's journal and list them",
		`  powercontext sources add --scope team "The deploy window is Tuesday at noon."
  powercontext sources list --scope team
  powercontext sources delete --scope team msg-42`, f)
	cmd.AddCommand(newSourcesAddCommand(f), newSourcesListCommand(f), newSourcesDeleteCommand(f))
	return cmd
}

func newSourcesDeleteCommand(f *clientFlags) *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "delete --scope SCOPE SOURCE_ID",
		Short: "Forget one Source: erase its content and remove it from Memory",
		Long: `Forget one Source (DELETE /v1/sources/{id}): its content is erased at once (the journal keeps its position as a
tombstone), Experience candidates citing it are withdrawn, and a memory_redact operation writes a Memory revision
without the entries only this Source supported. Repeating it is safe. Follow the operation with "powercontext ops
get ID".`,
		Example: `  powercontext sources delete --scope team msg-42`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			res, err := s.c.ForgetSource(cmd.Context(), scope, a[0])
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			if res.OperationID == nil {
				_, err = fmt.Fprintf(out, "forgot source %s of scope %s (journal position %d); nothing in Memory referenced it\n",
					res.SourceID, res.ScopeID, res.JournalPosition)
			} else {
				_, err = fmt.Fprintf(out, "forgot source %s of scope %s (journal position %d); operation %s removes it from Memory (%s)\n",
					res.SourceID, res.ScopeID, res.JournalPosition, *res.OperationID, res.Status)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope of the source (required)")
	return cmd
}

// newScopesCommand is "powercontext scopes": erasing, exporting and importing a whole scope.
func newScopesCommand() *cobra.Command {
	f := &clientFlags{}
	cmd := group("scopes", "Erase, export or import a whole scope", `  powercontext scopes erase team
  powercontext scopes export --scope team --output team.jsonl
  powercontext scopes import --input team.jsonl --as-scope team-copy`, f)
	cmd.AddCommand(newScopesExportCommand(f), newScopesImportCommand(f))
	cmd.AddCommand(&cobra.Command{
		Use:   "erase SCOPE",
		Short: "Erase a scope: its Sources, Memory, Experience candidates and operations",
		Long: `Erase a scope (DELETE /v1/scopes/{id}): a scope_erase operation cancels the scope's pending work and deletes
its Sources, Memory revisions, Experience candidates and finished operations; afterwards the scope is empty and a
new capture starts a fresh journal. The operation records who asked and when. Captures into the scope are refused
(scope_erasing) until it finishes. Follow it with "powercontext ops get ID".`,
		Example: `  powercontext scopes erase team`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			s, err := f.connect()
			if err != nil {
				return err
			}
			res, err := s.c.EraseScope(cmd.Context(), a[0])
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			_, err = fmt.Fprintf(out, "erasing scope %s: operation %s (%s)\n", res.ScopeID, res.OperationID, res.Status)
			return err
		},
	})
	return cmd
}

func newSourcesAddCommand(f *clientFlags) *cobra.Command {
	var scope, sourceID, sourceType, metadata string
	cmd := &cobra.Command{
		Use:   "add --scope SCOPE [--source-id ID] [--type TYPE] [--metadata JSON] (CONTENT | -)",
		Short: "Capture one Source (CONTENT, or standard input with -)",
		Long: `Capture one Source into a scope's journal (POST /v1/sources). CONTENT is the text itself; "-" reads it from
standard input. Content is 1..64 KiB of UTF-8. Capturing the same --source-id again in the same scope returns the
first capture's journal position and changes nothing, so retries are safe. Memory is updated by a later
"powercontext memory flush".`,
		Example: `  powercontext sources add --scope team "Alice owns the billing service."
  git log -1 --format=%B | powercontext sources add --scope team --type commit --source-id "$(git rev-parse HEAD)" -
  powercontext sources add --scope team --metadata '{"kind":"task-outcome"}' "Rollback took 2 minutes."`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			var meta json.RawMessage
			if metadata != "" {
				var obj map[string]any
				if json.Unmarshal([]byte(metadata), &obj) != nil || obj == nil {
					return usageErrorf("--metadata must be a JSON object, such as '{\"kind\":\"note\"}'")
				}
				meta = json.RawMessage(metadata)
			}
			content := a[0]
			if content == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("read content from standard input: %w", err)
				}
				content = string(b)
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			res, err := s.c.CaptureSource(cmd.Context(), client.CaptureSourceRequest{ScopeID: scope, SourceID: sourceID,
				SourceType: sourceType, Content: content, Metadata: meta})
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			if res.Created {
				_, err = fmt.Fprintf(out, "captured source %s in scope %s at journal position %d\n",
					res.SourceID, res.ScopeID, res.JournalPosition)
			} else {
				_, err = fmt.Fprintf(out, "source %s was already captured in scope %s at journal position %d (unchanged)\n",
					res.SourceID, res.ScopeID, res.JournalPosition)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scope, "scope", "", "scope to capture into (required)")
	fl.StringVar(&sourceID, "source-id", "", "your id of the source, for idempotent capture (default: a random id)")
	fl.StringVar(&sourceType, "type", "", `source type (default "content")`)
	fl.StringVar(&metadata, "metadata", "", `JSON object stored with the source, e.g. '{"kind":"task-outcome"}'`)
	return cmd
}

func newSourcesListCommand(f *clientFlags) *cobra.Command {
	var scope string
	var after int64
	var limit int
	cmd := &cobra.Command{
		Use:   "list --scope SCOPE [--after POSITION] [--limit N]",
		Short: "List a scope's Sources in journal order",
		Example: `  powercontext sources list --scope team
  powercontext sources list --scope team --after 100 --limit 50 --output json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			list, err := s.c.ListSources(cmd.Context(), client.ListSourcesParams{ScopeID: scope, After: after, Limit: limit})
			if err != nil {
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			if len(list.Items) == 0 {
				_, err := fmt.Fprintf(out, "no sources in scope %s after position %d\n", scope, after)
				return err
			}
			t := newTable(out, "POSITION", "SOURCE ID", "TYPE", "CAPTURED", "CONTENT")
			for _, r := range list.Items {
				t.row(fmt.Sprint(r.JournalPosition), cell(r.SourceID), cell(r.SourceType), fmtTime(r.CreatedAt),
					cell(abbreviate(r.Content, 80)))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if list.NextAfter != nil {
				_, err = fmt.Fprintf(out, "next page: --after %d\n", *list.NextAfter)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&scope, "scope", "", "scope to list (required)")
	fl.Int64Var(&after, "after", 0, "list positions after this one")
	fl.IntVar(&limit, "limit", 0, "most sources to list (1..500, default 100)")
	return cmd
}

// abbreviate cuts s to at most n runes, marking the cut.
func abbreviate(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
