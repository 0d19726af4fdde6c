package app_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/ui"
)

// app hands ui's sessions to handlers through handlers.DashboardSessions.
var _ handlers.DashboardSessions = (*ui.Sessions)(nil)

// handlers does not import ui (also a depguard rule of .golangci.yml), so it keeps its own copy of the dashboard's
// mount point and sign-in path: they must be ui's.
func TestDashboardPathsAgreeAndHandlersDoNotImportUI(t *testing.T) {
	require.Equal(t, ui.Prefix, handlers.DashboardPrefix)
	require.Equal(t, ui.LoginPath, handlers.DashboardLoginPath)

	files, err := filepath.Glob(filepath.Join("..", "handlers", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if filepath.Ext(f) == ".go" && !isTest(f) {
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, spec := range parsed.Imports {
				p, err := strconv.Unquote(spec.Path.Value)
				require.NoError(t, err)
				require.NotEqual(t, "github.com/powercontext/powercontext/ui", p, "%s imports the dashboard", f)
			}
		}
	}
}

func isTest(f string) bool { m, _ := filepath.Match("*_test.go", filepath.Base(f)); return m }
