package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/client"
)

// newScopesExportCommand is "powercontext scopes export": a scope's export stream to a file or standard output.
// Its --output names the file (this command writes no JSON answer of its own, so it takes the flag's name over).
func newScopesExportCommand(f *clientFlags) *cobra.Command {
	var scope, file string
	var embeddings bool
	cmd := &cobra.Command{
		Use:   "export --scope SCOPE [--output FILE] [--embeddings]",
		Short: "Export a scope as JSON Lines (to FILE or standard output)",
		Long: `Export a scope (GET /v1/scopes/{id}/export; docs/portability.md): its Sources (forgotten ones as tombstones),
journal head and cursors, every Memory revision with its entries, and its Experience candidates, as JSON Lines
ending in a trailer with a SHA-256. --embeddings includes the entries' vectors. With --output the stream goes to
a temporary file beside FILE that replaces FILE only once the export is complete. Needs the admin role or a
token whose scopes include the scope. If the scope changes during the export, the command fails (exit 1):
export again once it is quiet.`,
		Example: `  powercontext scopes export --scope team --output team.jsonl
  powercontext scopes export --scope team > team.jsonl`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("scope", scope); err != nil {
				return err
			}
			s, err := f.connect()
			if err != nil {
				return err
			}
			if file == "" {
				if _, err := s.c.ExportScope(cmd.Context(), scope, embeddings, cmd.OutOrStdout()); err != nil {
					return s.explain(err)
				}
				return nil
			}
			tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
			if err != nil {
				return &Failure{Msg: "cannot create the output file: " + err.Error(), Err: err}
			}
			defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
			n, err := s.c.ExportScope(cmd.Context(), scope, embeddings, tmp)
			if cerr := tmp.Close(); err == nil && cerr != nil {
				return &Failure{Msg: "cannot write the output file: " + cerr.Error(), Err: cerr}
			}
			if err != nil {
				return s.explain(err)
			}
			if err := os.Rename(tmp.Name(), file); err != nil {
				return &Failure{Msg: "cannot write the output file: " + err.Error(), Err: err}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "exported scope %s to %s (%d bytes)\n", scope, file, n)
			return err
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "", "scope to export (required)")
	cmd.Flags().StringVar(&file, "output", "", "file to write (default standard output)")
	cmd.Flags().BoolVar(&embeddings, "embeddings", false, "include the entries' vectors")
	return cmd
}

// newScopesImportCommand is "powercontext scopes import": an export stream into an empty scope.
func newScopesImportCommand(f *clientFlags) *cobra.Command {
	var file, asScope string
	cmd := &cobra.Command{
		Use:   "import [--input FILE] [--as-scope SCOPE]",
		Short: "Import an export stream into an empty scope",
		Long: `Import an export stream (POST /v1/scopes/{id}/import; docs/portability.md) from FILE or standard input into the
scope it was exported from, or into --as-scope. The scope must be empty (409 scope_not_empty otherwise); the
import is all or nothing, and a refused stream names its error code and line. Needs the admin role or a token
whose scopes include the scope.`,
		Example: `  powercontext scopes import --input team.jsonl
  powercontext scopes import --input team.jsonl --as-scope team-copy`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.connect()
			if err != nil {
				return err
			}
			in := cmd.InOrStdin()
			if file != "" {
				fh, err := os.Open(file) //nolint:gosec // the file the user named on the command line
				if err != nil {
					return &Failure{Msg: "cannot read the input file: " + err.Error(), Err: err}
				}
				defer func() { _ = fh.Close() }()
				in = fh
			}
			br := bufio.NewReaderSize(in, 1<<20)
			target := asScope
			if target == "" {
				if target, err = client.PeekExportScope(br); err != nil {
					return &Failure{Msg: err.Error() + " (is it the output of powercontext scopes export?)", Err: err}
				}
			}
			res, err := s.c.ImportScope(cmd.Context(), target, br)
			if err != nil {
				var ae *client.APIError
				if errors.As(err, &ae) && ae.Details["line"] != nil {
					return &Failure{Msg: fmt.Sprintf("%s (line %v)", s.explainLine(err), ae.Details["line"]), Err: err}
				}
				return s.explain(err)
			}
			out := cmd.OutOrStdout()
			if s.json {
				return s.printJSON(out)
			}
			n := res.Counts
			_, err = fmt.Fprintf(out, "imported scope %s as %s: %d sources, %d tombstones, %d memory revisions (%d entries), %d candidates; operation %s\n",
				res.SourceScopeID, res.ScopeID, n.Sources, n.Tombstones, n.Revisions, n.Entries, n.Candidates, res.OperationID)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "input", "", "file to read (default standard input)")
	cmd.Flags().StringVar(&asScope, "as-scope", "", "scope to import into (default the exported scope)")
	return cmd
}
