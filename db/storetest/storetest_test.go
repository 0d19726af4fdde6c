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
	engineOnlyRE = regexp.MustCompile(`^-- Engine-only \((\w+(?:, \w+)*)\): `)
	// setWordRE finds "Set" as a word of a CamelCase name (WorkItemSetPlan, WorkLaneLockSet), not inside one (Reset).
	setWordRE = regexp.MustCompile(`(^|[a-z0-9])Set([A-Z0-9]|$)`)
)

// queryNames parses `-- name: X :kind` lines: file -> query names in file order. A query whose comment line starts
// with "-- Engine-only (<engine>[, <engine>…]): " (CONTRIBUTING.md, SQL) exists on those engines alone; it is returned
// in engineOnly (name -> the engines its marker lists) instead, and the list must name the engine of its own file.
func queryNames(t *testing.T, engine db.Engine) (names map[string][]string, engineOnly map[string][]string) {
	t.Helper()
	files, err := fs.Glob(sqlfiles.Queries, path.Join("queries", string(engine), "*.sql"))
	require.NoError(t, err)
	names = map[string][]string{}
	engineOnly = map[string][]string{}
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
					engines := strings.Split(only[1], ", ")
					require.Contains(t, engines, string(engine), "%s: %s is marked engine-only for other engines", f, m[1])
					engineOnly[m[1]] = engines
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
// queries marked engine-only, which must exist on exactly the engines their marker lists, marked the same on each.
func TestQuerySetsMatchAcrossEngines(t *testing.T) {
	want, _ := queryNames(t, enginetest.All[0])
	require.NotEmpty(t, want)
	all := map[string]bool{}
	for _, names := range want {
		for _, n := range names {
			all[n] = true
		}
	}
	marked := map[string][]string{}  // engine-only name -> its marker's engines
	foundIn := map[string][]string{} // engine-only name -> the engines that define it
	for _, engine := range enginetest.All {
		got, engineOnly := queryNames(t, engine)
		require.Equal(t, keys(want), keys(got), "query files of %s and %s", enginetest.All[0], engine)
		for file, names := range want {
			require.ElementsMatch(t, names, got[file], "queries of %s/%s and %s/%s", enginetest.All[0], file, engine, file)
		}
		for n, engines := range engineOnly {
			require.False(t, all[n], "%s is marked engine-only for %s but exists on every engine", n, engine)
			if prev, ok := marked[n]; ok {
				require.Equal(t, prev, engines, "%s: the engine-only markers of its engines differ", n)
			}
			marked[n] = engines
			foundIn[n] = append(foundIn[n], string(engine))
		}
	}
	for n, engines := range marked {
		require.ElementsMatch(t, engines, foundIn[n], "%s is marked engine-only for %v but defined on %v", n, engines, foundIn[n])
	}
}

// TestQueryFileStyle checks the CONTRIBUTING.md rules a machine can check: query names unique, alphabetical within a
// file, one comment line directly above each `-- name:` line, and no "Set" in a name (it was both an adjective and a
// verb; "Many" says a statement works on a set).
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
				require.False(t, setWordRE.MatchString(name), "%s: %s: \"Set\" is not part of a query name (CONTRIBUTING.md, Names)", f, name)
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

// expandStatement lists the statement forms an expand_ migration may hold (README.md#rolling-upgrades): additions a
// binary built before the migration cannot notice. Statements are compared with comments stripped and whitespace
// collapsed, upper-cased.
var expandStatement = []*regexp.Regexp{
	regexp.MustCompile(`^CREATE (VIRTUAL )?TABLE (IF NOT EXISTS )?\w+ `),
	regexp.MustCompile(`^CREATE (UNIQUE |FULLTEXT )?INDEX (CONCURRENTLY )?(IF NOT EXISTS )?\w+ ON `),
	// a new column that old INSERTs can omit: nullable, or with a default
	regexp.MustCompile(`^ALTER TABLE \w+ ADD (COLUMN )?\w+ [^,]*$`),
	regexp.MustCompile(`^ALTER TABLE \w+ ADD (UNIQUE |FULLTEXT )?(INDEX|KEY) \w+ `),
	// a CHECK replaced by a wider one of the same name (dropped and added in one statement, or in two in a row)
	regexp.MustCompile(`^ALTER TABLE \w+ (DROP CONSTRAINT (\w+), )?ADD CONSTRAINT \w+ CHECK `),
	regexp.MustCompile(`^ALTER TABLE \w+ DROP CONSTRAINT \w+$`),
	// SQLite's table rebuild: copy into the new table, drop the old one, rename the new one into its place
	regexp.MustCompile(`^INSERT INTO \w+ `),
	regexp.MustCompile(`^DROP TABLE \w+$`),
	regexp.MustCompile(`^ALTER TABLE \w+ RENAME TO \w+$`),
}

var sqlComment = regexp.MustCompile(`(?m)--.*$`)

// TestExpandMigrationsOnlyAdd holds every expand_ migration of every engine to additive statements: only the forms
// of expandStatement; a new NOT NULL column needs a default; a dropped CHECK is re-added under the same name right
// away; a dropped table is replaced by a table the same file created and renamed into its place (SQLite's rebuild).
func TestExpandMigrationsOnlyAdd(t *testing.T) {
	notNullNoDefault := regexp.MustCompile(`NOT NULL`)
	dropConstraint := regexp.MustCompile(`^ALTER TABLE \w+ DROP CONSTRAINT (\w+)`)
	addConstraint := regexp.MustCompile(`ADD CONSTRAINT (\w+) CHECK`)
	createTable := regexp.MustCompile(`^CREATE TABLE (\w+)`)
	dropTable := regexp.MustCompile(`^DROP TABLE (\w+)$`)
	rename := regexp.MustCompile(`^ALTER TABLE (\w+) RENAME TO (\w+)$`)
	checked := 0
	for _, engine := range enginetest.All {
		dir, err := migrate.Dir(engine)
		require.NoError(t, err)
		files, err := dir.Files()
		require.NoError(t, err)
		for _, f := range files {
			if !strings.HasPrefix(f.Desc(), migrate.ExpandPrefix) {
				continue
			}
			checked++
			raw, err := f.Stmts()
			require.NoError(t, err)
			var stmts []string
			for _, s := range raw {
				s = strings.ToUpper(strings.Join(strings.Fields(sqlComment.ReplaceAllString(s, "")), " "))
				stmts = append(stmts, strings.TrimSuffix(s, ";"))
			}
			created := map[string]bool{}
			for i, s := range stmts {
				ok := false
				for _, re := range expandStatement {
					ok = ok || re.MatchString(s)
				}
				require.True(t, ok, "%s/%s: statement %d is not additive: %s", engine, f.Name(), i+1, s)
				if m := createTable.FindStringSubmatch(s); m != nil {
					created[m[1]] = true
				}
				if strings.Contains(s, " ADD ") && strings.HasPrefix(s, "ALTER TABLE") && !strings.Contains(s, "CONSTRAINT") &&
					!strings.Contains(s, "INDEX") && !strings.Contains(s, "KEY") {
					require.False(t, notNullNoDefault.MatchString(s) && !strings.Contains(s, "DEFAULT"),
						"%s/%s: a NOT NULL column without a default breaks older binaries' inserts: %s", engine, f.Name(), s)
				}
				if m := dropConstraint.FindStringSubmatch(s); m != nil {
					readded := addConstraint.FindStringSubmatch(s)
					if readded == nil && i+1 < len(stmts) {
						readded = addConstraint.FindStringSubmatch(stmts[i+1])
					}
					require.True(t, readded != nil && readded[1] == m[1],
						"%s/%s: CHECK %s is dropped without being re-added at once", engine, f.Name(), m[1])
				}
				if m := dropTable.FindStringSubmatch(s); m != nil {
					replaced := false
					for _, later := range stmts[i+1:] {
						if r := rename.FindStringSubmatch(later); r != nil && r[2] == m[1] && created[r[1]] {
							replaced = true
						}
					}
					require.True(t, replaced, "%s/%s: table %s is dropped, not rebuilt", engine, f.Name(), m[1])
				}
			}
		}
	}
	require.Positive(t, checked, "at least one expand migration is checked")
}
