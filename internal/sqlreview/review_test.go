package sqlreview

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// EnvReview selects TestSQLReview's mode: "write" (`make sql-review`) rewrites docs/sql-review/<engine>.md, "check"
// (`make sql-review-check`) regenerates them into a temporary directory and compares the shapes. Unset: skipped
// (the seeding is kept out of `make test`).
const EnvReview = "PC_SQL_REVIEW"

// TestSQLReview seeds a scratch database per engine, explains every query, applies the plan rules (a full scan of
// a big table, a filesort in a claim; MySQL and SQLite — PostgreSQL's rule is sqlc vet's) and writes or checks the
// review file.
func TestSQLReview(t *testing.T) {
	mode := os.Getenv(EnvReview)
	if mode != "write" && mode != "check" {
		t.Skipf("%s is not write or check (make sql-review, make sql-review-check)", EnvReview)
	}
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := seededDatabase(t, engine)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ex, err := NewExplainer(ctx, engine, enginetest.OpenSQLDB(t, u))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ex.Close() }()
		qs, err := Queries(engine)
		if err != nil {
			t.Fatal(err)
		}
		var rs []Reviewed
		for _, q := range qs {
			p, err := ex.Explain(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", q.Name, err)
			}
			rs = append(rs, Reviewed{Query: q, Plan: p})
			if engine == db.EnginePostgres && p.Depth > pgRuleDepth {
				t.Errorf("%s: plan is %d levels deep; sqlc.yaml's pc-postgres-no-seq-scan rule looks %d deep: extend it", q.Name, p.Depth, pgRuleDepth)
			}
		}
		// Locks after every plan: the MySQL statements run (and are rolled back), which must not move the statistics
		// under a later EXPLAIN.
		for i := range rs {
			if engine == db.EngineSQLite || !LedgerLocking(rs[i].Query) {
				continue
			}
			if rs[i].Locks, err = ex.Locks(ctx, rs[i].Query); err != nil {
				t.Fatalf("%s: locks: %v", rs[i].Name, err)
			}
		}
		if engine != db.EnginePostgres {
			for _, f := range Findings(engine, rs) {
				t.Errorf("plan rule: %s", f)
			}
			refuteWithoutIndex(ctx, t, engine, enginetest.OpenSQLDB(t, u), rs)
		}
		text := Render(engine, rs)
		committedPath := filepath.Join("..", "..", "docs", "sql-review", string(engine)+".md")
		if mode == "write" {
			if err := os.MkdirAll(filepath.Dir(committedPath), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(committedPath, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		// Kept when the check fails, for a diff against the committed file.
		dir, err := os.MkdirTemp("", "sql-review-")
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, string(engine)+".md")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(committedPath)
		if err != nil {
			t.Fatalf("%v (run make sql-review)", err)
		}
		diffs := CompareShapes(Shapes(string(committed)), Shapes(text))
		if len(diffs) > 0 {
			t.Errorf("plan shapes differ from %s (regenerated: %s); review them and run make sql-review:\n%s",
				committedPath, tmp, strings.Join(diffs, "\n"))
			return
		}
		_ = os.RemoveAll(dir)
	})
}

// pgRuleDepth is how deep sqlc.yaml's pc-postgres-no-seq-scan rule walks a plan.
const pgRuleDepth = 11

// refuteWithoutIndex shows the plan rule failing on the real server: after the index retention reads pc_sources
// through is dropped (a deliberately introduced full scan), SourceListErasable must be reported. It runs after
// every plan and lock of rs was taken.
func refuteWithoutIndex(ctx context.Context, t *testing.T, engine db.Engine, sqlDB *sql.DB, rs []Reviewed) {
	t.Helper()
	drop := map[db.Engine]string{
		db.EngineMySQL:  `DROP INDEX pc_sources_created_idx ON pc_sources`,
		db.EngineSQLite: `DROP INDEX pc_sources_created_idx`,
	}[engine]
	if _, err := sqlDB.ExecContext(ctx, drop); err != nil {
		t.Fatal(err)
	}
	// A new explainer: the first one's connection may still see the old schema.
	ex, err := NewExplainer(ctx, engine, sqlDB)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ex.Close() }()
	var broken []Reviewed
	for _, r := range rs {
		if r.Name != "SourceListErasable" {
			continue
		}
		p, err := ex.Explain(ctx, r.Query)
		if err != nil {
			t.Fatal(err)
		}
		broken = append(broken, Reviewed{Query: r.Query, Plan: p})
	}
	want := "SourceListErasable (source.sql): full scan of pc_sources"
	if f := Findings(engine, broken); len(f) != 1 || f[0] != want {
		var plans []string
		for _, b := range broken {
			plans = append(plans, strings.Join(b.Plan.Lines, "\n"))
		}
		t.Fatalf("without pc_sources_created_idx: findings %q, want [%q]; plan:\n%s", f, want, strings.Join(plans, "\n"))
	}
	t.Logf("without pc_sources_created_idx the plan rule reports, as it must: %s", want)
}
