package storetest_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/db/storetest"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// TestConformance runs the conformance suite on every available engine (one subtest per engine; a missing
// PostgreSQL or MySQL server is a skip, or a failure when PC_TEST_REQUIRE_ENGINES names it).
func TestConformance(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		t.Parallel()
		storetest.Run(t, engine)
	})
}

// TestEmbeddedMigrationsValidate checks every engine's embedded directory against its atlas.sum.
func TestEmbeddedMigrationsValidate(t *testing.T) {
	for _, engine := range enginetest.All {
		dir, err := migrate.Dir(engine)
		require.NoError(t, err)
		require.NoError(t, migrate.Validate(dir), engine)
	}
}

// TestMigrationSetsMatchAcrossEngines requires the same migration versions and labels in every engine.
func TestMigrationSetsMatchAcrossEngines(t *testing.T) {
	sets := map[db.Engine][]string{}
	for _, engine := range enginetest.All {
		names, err := fs.Glob(sqlfiles.Migrations, path.Join("migrations", string(engine), "*.sql"))
		require.NoError(t, err)
		require.NotEmpty(t, names, engine)
		for i, n := range names {
			names[i] = path.Base(n)
			require.Regexp(t, `^[0-9]{14}_[a-z0-9_]+\.sql$`, names[i], "version_label.sql")
		}
		sort.Strings(names)
		sets[engine] = names
	}
	for _, engine := range enginetest.All[1:] {
		require.Equal(t, sets[enginetest.All[0]], sets[engine], "migrations of %s and %s", enginetest.All[0], engine)
	}
}

var (
	queryNameRE  = regexp.MustCompile(`^-- name: (\w+) :(\w+)\s*$`)
	engineOnlyRE = regexp.MustCompile(`^-- Engine-only \((\w+)\): `)
)

// queryNames parses `-- name: X :kind` lines: file -> query names in file order. A query whose comment line starts
// with "-- Engine-only (<engine>): " (CONTRIBUTING.md, SQL) is returned in engineOnly instead, and must be marked with
// the engine of its own file.
func queryNames(t *testing.T, engine db.Engine) (names map[string][]string, engineOnly []string) {
	t.Helper()
	files, err := fs.Glob(sqlfiles.Queries, path.Join("queries", string(engine), "*.sql"))
	require.NoError(t, err)
	names = map[string][]string{}
	for _, f := range files {
		b, err := fs.ReadFile(sqlfiles.Queries, f)
		require.NoError(t, err)
		var fileNames []string
		prev := ""
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "-- name:") {
				m := queryNameRE.FindStringSubmatch(line)
				require.NotNil(t, m, "%s: malformed %q", f, line)
				if only := engineOnlyRE.FindStringSubmatch(prev); only != nil {
					require.Equal(t, string(engine), only[1], "%s: %s is marked engine-only for another engine", f, m[1])
					engineOnly = append(engineOnly, m[1])
				} else {
					fileNames = append(fileNames, m[1])
				}
			}
			prev = line
		}
		require.NoError(t, sc.Err())
		names[path.Base(f)] = fileNames
	}
	return names, engineOnly
}

// TestQuerySetsMatchAcrossEngines requires the same query files and the same query names in every engine, except
// queries marked engine-only, which must exist in their engine alone.
func TestQuerySetsMatchAcrossEngines(t *testing.T) {
	want, _ := queryNames(t, enginetest.All[0])
	require.NotEmpty(t, want)
	all := map[string]bool{}
	for _, names := range want {
		for _, n := range names {
			all[n] = true
		}
	}
	onlyIn := map[string]db.Engine{}
	for _, engine := range enginetest.All {
		got, engineOnly := queryNames(t, engine)
		require.Equal(t, keys(want), keys(got), "query files of %s and %s", enginetest.All[0], engine)
		for file, names := range want {
			require.ElementsMatch(t, names, got[file], "queries of %s/%s and %s/%s", enginetest.All[0], file, engine, file)
		}
		for _, n := range engineOnly {
			require.False(t, all[n], "%s is marked engine-only for %s but exists on other engines too", n, engine)
			require.Empty(t, onlyIn[n], "%s is marked engine-only for both %s and %s", n, onlyIn[n], engine)
			onlyIn[n] = engine
		}
	}
}

// TestQueryFileStyle checks the CONTRIBUTING.md rules a machine can check: query names unique, alphabetical within a file,
// and one comment line directly above each `-- name:` line.
func TestQueryFileStyle(t *testing.T) {
	for _, engine := range enginetest.All {
		files, err := fs.Glob(sqlfiles.Queries, path.Join("queries", string(engine), "*.sql"))
		require.NoError(t, err)
		seen := map[string]string{}
		for _, f := range files {
			b, err := fs.ReadFile(sqlfiles.Queries, f)
			require.NoError(t, err)
			lines := strings.Split(string(b), "\n")
			var names []string
			for i, line := range lines {
				m := queryNameRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				name := m[1]
				require.Empty(t, seen[name], "%s: query %s is also defined in %s", f, name, seen[name])
				seen[name] = f
				names = append(names, name)
				require.True(t, i > 0 && strings.HasPrefix(lines[i-1], "--") && !strings.HasPrefix(lines[i-1], "-- name:"),
					"%s: %s needs one comment line directly above it (which lock it takes or guard it checks)", f, name)
			}
			require.True(t, sort.StringsAreSorted(names), "%s: queries must be alphabetical: %v", f, names)
		}
	}
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
