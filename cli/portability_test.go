package cli_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/sources"
)

// TestScopesExportImport: "scopes export --output FILE" writes a complete stream, "scopes import --input FILE
// --as-scope T" imports it, a second import is refused (exit 4, scope_not_empty), and a stream without its trailer
// is refused with its code and line; without --as-scope the header's scope is the target.
func TestScopesExportImport(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	srv := httptest.NewServer(handlers.New(handlers.Deps{Journal: sources.NewJournal(store), Ledger: ledger, Store: store,
		Role: "api", Logger: zerolog.Nop(), Portability: &portability.Service{Store: store, Ledger: ledger, MaxAttempts: 3}}))
	t.Cleanup(srv.Close)
	_, err := sources.NewJournal(store).Capture(context.Background(), sources.CaptureRequest{ScopeID: "team", Content: "Releases ship on Tuesdays."})
	require.NoError(t, err)

	file := filepath.Join(t.TempDir(), "team.jsonl")
	code, out, errOut := run("scopes", "export", "--server", srv.URL, "--scope", "team", "--output", file)
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "exported scope team to "+file)
	stream, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(stream), `"type":"trailer"`)

	code, out, errOut = run("scopes", "export", "--server", srv.URL, "--scope", "team")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Equal(t, strings.Count(string(stream), "\n"), strings.Count(out, "\n"), "the stream on standard output")

	code, out, errOut = run("scopes", "import", "--server", srv.URL, "--input", file, "--as-scope", "team-copy")
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "imported scope team as team-copy: 1 sources")
	code, _, errOut = run("scopes", "import", "--server", srv.URL, "--input", file, "--as-scope", "team-copy")
	require.Equal(t, app.ExitClientError, code)
	require.Contains(t, errOut, "scope_not_empty")
	code, _, errOut = run("scopes", "import", "--server", srv.URL, "--input", file)
	require.Equal(t, app.ExitClientError, code, "the header's scope, which is not empty")
	require.Contains(t, errOut, "scope_not_empty")

	lines := strings.SplitAfter(string(stream), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-2], "")), 0o600))
	code, _, errOut = run("scopes", "import", "--server", srv.URL, "--input", cut, "--as-scope", "team-other")
	require.Equal(t, app.ExitClientError, code)
	require.Contains(t, errOut, "import_truncated")
	require.Contains(t, errOut, "(line 4)")

	code, _, _ = run("scopes", "export", "--server", srv.URL)
	require.Equal(t, app.ExitConfig, code, "--scope is required")
}
