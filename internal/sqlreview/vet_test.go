package sqlreview

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
)

// EnvSQLC names the sqlc binary TestSQLCVet runs (`make sql-vet` sets it); without it the test is skipped.
const EnvSQLC = "PC_SQLC"

// TestSQLCVet is `make sql-vet`: it creates a migrated scratch database on the PostgreSQL and MySQL test servers
// (PC_TEST_POSTGRES_DSN, PC_TEST_MYSQL_DSN), seeds them (Seed) and runs `sqlc vet` from the repository root with
// their URIs in PC_VET_POSTGRES_URI and PC_VET_MYSQL_URI, the variables sqlc.yaml's database settings reference.
func TestSQLCVet(t *testing.T) {
	sqlc := os.Getenv(EnvSQLC)
	if sqlc == "" {
		t.Skipf("%s is not set (make sql-vet sets it)", EnvSQLC)
	}
	t.Setenv(enginetest.EnvRequireEngines, "postgres,mysql")
	env := os.Environ()
	var pgURL dburl.URL
	for _, e := range []struct {
		engine db.Engine
		envVar string
	}{{db.EnginePostgres, "PC_VET_POSTGRES_URI"}, {db.EngineMySQL, "PC_VET_MYSQL_URI"}} {
		u := seededDatabase(t, e.engine)
		env = append(env, e.envVar+"="+u.DSN)
		if e.engine == db.EnginePostgres {
			pgURL = u
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	failures, accepted, err := runVet(ctx, t, sqlc, env)
	if len(failures) > 0 || (err != nil && len(accepted) == 0) {
		t.Fatalf("sqlc vet failed (%v):\n%s", err, strings.Join(failures, "\n"))
	}
	t.Logf("sqlc vet passed; not explained:\n%s", strings.Join(accepted, "\n"))

	// The rule can fail: without the index retention reads pc_sources through (a deliberately introduced full
	// scan), SourceListErasable's plan becomes a Seq Scan of pc_sources and sqlc vet must refuse it.
	pgDB := enginetest.OpenSQLDB(t, pgURL)
	if _, err := pgDB.ExecContext(ctx, `DROP INDEX pc_sources_created_idx`); err != nil {
		t.Fatal(err)
	}
	if _, err := pgDB.ExecContext(ctx, `ANALYZE pc_sources`); err != nil {
		t.Fatal(err)
	}
	failures, _, err = runVet(ctx, t, sqlc, env)
	want := ": SourceListErasable: pc-postgres-no-seq-scan: "
	var refused bool
	for _, f := range failures {
		refused = refused || strings.Contains(f, want)
	}
	if err == nil || !refused {
		t.Fatalf("sqlc vet without pc_sources_created_idx: err %v, failures %q; want a line containing %q", err, failures, want)
	}
	t.Logf("sqlc vet without pc_sources_created_idx refused, as it must:\n%s", strings.Join(failures, "\n"))
}

// runVet runs `sqlc vet` from the repository root and splits its output lines into failures and the accepted
// "error explaining query" lines of unexplainable queries.
func runVet(ctx context.Context, t *testing.T, sqlc string, env []string) (failures, accepted []string, err error) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, sqlc, "vet")
	cmd.Dir = root
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		if reason, ok := vetUnexplainable(line); ok {
			accepted = append(accepted, line+" (accepted: "+reason+")")
			continue
		}
		failures = append(failures, line)
	}
	return failures, accepted, err
}

// unexplainable lists the PostgreSQL queries sqlc vet cannot explain, with the reason. Query files carry no
// @sqlc-vet-disable flags because sqlc copies them into the generated code's comments.
var unexplainable = map[string]string{
	"ListenWorkEnqueued": "LISTEN is a utility statement; EXPLAIN does not take it",
	"ListenWorkFinished": "LISTEN is a utility statement; EXPLAIN does not take it",
	"WorkItemList":       "sqlc's default parameter for the keyset position is an empty string, which is no uuid; its plan is in docs/sql-review/postgres.md",
}

// vetUnexplainable reports whether a sqlc vet output line is an "error explaining query" of a query listed in
// unexplainable, and why.
func vetUnexplainable(line string) (string, bool) {
	parts := strings.SplitN(line, ": ", 4)
	if len(parts) < 4 || parts[2] != "pc-postgres-no-seq-scan" || !strings.HasPrefix(parts[3], "error explaining query: ") {
		return "", false
	}
	reason, ok := unexplainable[parts[1]]
	return reason, ok
}
