package errclass

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type snoozer struct{ d time.Duration }

func (s snoozer) Error() string              { return "snooze" }
func (s snoozer) SnoozeAfter() time.Duration { return s.d }

func TestClassifyAndSnoozeHint(t *testing.T) {
	e := New(CategoryProvider, CodeUnavailable, true)
	require.Equal(t, "handler error provider/unavailable", e.Error())
	require.Equal(t, *e, Classify(fmt.Errorf("wrapped: %w", e)))
	require.Equal(t, Error{Category: CategoryInternal, Code: CodeUnhandled, Retryable: true}, Classify(errors.New("boom")))

	d, ok := SnoozeHint(fmt.Errorf("w: %w", New(CategoryProvider, CodeRateLimited, true)))
	require.True(t, ok)
	require.Zero(t, d)
	d, ok = SnoozeHint(snoozer{d: 3 * time.Second})
	require.True(t, ok)
	require.Equal(t, 3*time.Second, d)
	d, ok = SnoozeHint(snoozer{d: -time.Second})
	require.True(t, ok)
	require.Zero(t, d)
	_, ok = SnoozeHint(e)
	require.False(t, ok)
}

// importsOf lists the import paths of every Go file (tests included) in dir.
func importsOf(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, dir)
	out := map[string][]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, spec := range parsed.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			out[p] = append(out[p], filepath.Base(f))
		}
	}
	return out
}

const module = "github.com/powercontext/powercontext"

// The layering this package exists for (also a depguard rule of .golangci.yml): errclass imports nothing of the
// module, and the providers raise its errors without importing the ledger.
func TestErrorClassesSitBelowProviderAndLedger(t *testing.T) {
	for p, files := range importsOf(t, ".") {
		require.False(t, strings.HasPrefix(p, module+"/"), "internal/errclass imports %s (%v)", p, files)
	}
	imports := importsOf(t, filepath.Join("..", "..", "provider"))
	require.Contains(t, imports, module+"/internal/errclass")
	require.NotContains(t, imports, module+"/coordinator", "provider imports the ledger")
}
