package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/migrate"
)

// atlasBin finds the Atlas CLI: $ATLAS_BIN, the build beside the repository (../shared/tools/atlas from the root),
// or atlas on PATH. CI requires it (PC_TEST_REQUIRE_TOOLS=atlas).
func atlasBin(t *testing.T) string {
	return tool(t, "atlas", os.Getenv("ATLAS_BIN"), "../../shared/tools/atlas")
}

type atlasStatus struct {
	Status  string
	Current string
	Pending []struct{ Version string }
	Applied []struct {
		Version         string
		OperatorVersion string
	}
}

// atlasRun runs the Atlas CLI from the repository root with the migration URL in the variable atlas.hcl reads.
func atlasRun(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "POWERCONTEXT_MIGRATE_DATABASE_URL="+url, "ATLAS_NO_UPDATE_NOTIFIER=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "atlas %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

func atlasStatusOf(t *testing.T, bin, url string, engine db.Engine) atlasStatus {
	t.Helper()
	out := atlasRun(t, bin, url, "migrate", "status", "--env", string(engine), "--format", "{{ json . }}")
	var st atlasStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	return st
}

// serverMigrate runs `powercontext server migrate` and returns its output.
func serverMigrate(t *testing.T, url string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := app.Main(context.Background(), []string{"server", "migrate", "--database-url", url}, &out, &errb)
	require.Equal(t, app.ExitOK, code, "server migrate: %s%s", out.String(), errb.String())
	return out.String()
}

func versions(t *testing.T, engine db.Engine) []string {
	t.Helper()
	dir, err := migrate.Dir(engine)
	require.NoError(t, err)
	files, err := dir.Files()
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		out = append(out, f.Version())
	}
	require.GreaterOrEqual(t, len(out), 2, "the split rounds need at least two migrations")
	return out
}

// firstFiles is the embedded directory of engine cut after its first n migrations, with its own atlas.sum.
func firstFiles(t *testing.T, engine db.Engine, n int) atlasmigrate.Dir {
	t.Helper()
	full, err := migrate.Dir(engine)
	require.NoError(t, err)
	files, err := full.Files()
	require.NoError(t, err)
	cut := &atlasmigrate.MemDir{}
	for _, f := range files[:n] {
		require.NoError(t, cut.WriteFile(f.Name(), f.Bytes()))
	}
	sum, err := cut.Checksum()
	require.NoError(t, err)
	require.NoError(t, atlasmigrate.WriteSumFile(cut, sum))
	return cut
}

// TestAtlasCLIAndServerMigrateShareOneHistory proves the DBA path: for every engine, the Atlas CLI applies the
// migration directory to a fresh database with atlas.hcl, `atlas migrate status` is OK and `powercontext server
// migrate` finds nothing pending; and either tool finishes what the other started.
func TestAtlasCLIAndServerMigrateShareOneHistory(t *testing.T) {
	bin := atlasBin(t)
	for _, engine := range []db.Engine{db.EnginePostgres, db.EngineMySQL, db.EngineSQLite} {
		t.Run(string(engine), func(t *testing.T) {
			all := versions(t, engine)
			last := all[len(all)-1]
			half := (len(all) + 1) / 2

			t.Run("atlas applies everything", func(t *testing.T) {
				url := enginetest.NewDatabase(t, engine)
				atlasRun(t, bin, url, "migrate", "apply", "--env", string(engine))
				st := atlasStatusOf(t, bin, url, engine)
				require.Equal(t, "OK", st.Status)
				require.Equal(t, last, st.Current)
				require.Contains(t, serverMigrate(t, url), "nothing pending")
			})

			t.Run("atlas first, server migrate the rest", func(t *testing.T) {
				url := enginetest.NewDatabase(t, engine)
				atlasRun(t, bin, url, "migrate", "apply", "--env", string(engine), fmt.Sprint(half))
				st := atlasStatusOf(t, bin, url, engine)
				require.Equal(t, "PENDING", st.Status)
				require.Len(t, st.Pending, len(all)-half)
				out := serverMigrate(t, url)
				for _, v := range all[half:] {
					require.Contains(t, out, "applied "+v)
				}
				for _, v := range all[:half] {
					require.NotContains(t, out, "applied "+v, "server migrate reapplied what Atlas applied")
				}
				st = atlasStatusOf(t, bin, url, engine)
				require.Equal(t, "OK", st.Status)
				require.Equal(t, last, st.Current)
				require.Contains(t, serverMigrate(t, url), "nothing pending")
			})

			t.Run("server migrate first, atlas the rest", func(t *testing.T) {
				raw := enginetest.NewDatabase(t, engine)
				u := enginetest.ParseURL(t, raw)
				sqlDB := enginetest.OpenSQLDB(t, u)
				store := enginetest.OpenStore(t, u)
				res, err := migrate.Apply(context.Background(), engine, sqlDB, store, "atlas-test",
					migrate.WithDir(firstFiles(t, engine, half)))
				require.NoError(t, err)
				require.Len(t, res.Applied, half)
				st := atlasStatusOf(t, bin, raw, engine)
				require.Equal(t, "PENDING", st.Status, "Atlas sees the service's revisions")
				require.Equal(t, all[half-1], st.Current)
				atlasRun(t, bin, raw, "migrate", "apply", "--env", string(engine))
				st = atlasStatusOf(t, bin, raw, engine)
				require.Equal(t, "OK", st.Status)
				require.Equal(t, last, st.Current)
				require.Contains(t, serverMigrate(t, raw), "nothing pending")
			})
		})
	}
}

// reviewedLint lists lint diagnostics that were reviewed and accepted, by engine, file and analyzer code, with the
// reason. Anything else the linter reports fails the test.
var reviewedLint = map[string]string{
	// SQLite cannot change a CHECK constraint in place: the migration rebuilds the table (create, copy every row,
	// drop, rename) in one transaction, so no data is lost.
	"sqlite/20261207000000_expand_attempt_snoozed.sql DS102":   "table rebuild",
	"sqlite/20261207000100_expand_source_tombstones.sql DS102": "table rebuild",
}

// TestAtlasMigrateLint runs `atlas migrate lint` (the community build supports it) over every migration of every
// engine against a fresh dev database: destructive, data-dependent and backward-incompatible changes fail it
// unless reviewedLint accepts that diagnostic.
func TestAtlasMigrateLint(t *testing.T) {
	bin := atlasBin(t)
	const format = `{{ range .Files }}{{ $f := .Name }}{{ range .Reports }}{{ range .Diagnostics }}` +
		`{{ $f }} {{ .Code }} {{ .Text }}{{ "\n" }}{{ end }}{{ end }}{{ end }}`
	for _, engine := range []db.Engine{db.EnginePostgres, db.EngineMySQL, db.EngineSQLite} {
		t.Run(string(engine), func(t *testing.T) {
			dev := enginetest.NewDatabase(t, engine)
			if engine == db.EngineSQLite {
				dev = "sqlite://dev?mode=memory"
			}
			n := len(versions(t, engine))
			cmd := exec.Command(bin, "migrate", "lint", "--dir", "file://sql/migrations/"+string(engine),
				"--dev-url", dev, "--latest", fmt.Sprint(n), "--format", format)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "ATLAS_NO_UPDATE_NOTIFIER=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run() // exits non-zero when it reports an error-level diagnostic
			var unreviewed []string
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				if line == "" {
					continue
				}
				file, rest, _ := strings.Cut(line, " ")
				code, _, _ := strings.Cut(rest, " ")
				if _, ok := reviewedLint[string(engine)+"/"+file+" "+code]; !ok {
					unreviewed = append(unreviewed, line)
				}
			}
			require.Empty(t, unreviewed, "atlas migrate lint (%s): review each diagnostic, fix the migration or add it to reviewedLint", engine)
			if err != nil {
				require.NotEmpty(t, stdout.String(), "atlas migrate lint failed without a diagnostic: %v\n%s", err, stderr.String())
			}
		})
	}
}
