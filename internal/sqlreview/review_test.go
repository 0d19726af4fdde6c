package sqlreview

import (
	"context"
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
