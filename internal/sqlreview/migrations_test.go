package sqlreview

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

// migrationReviewPath is the committed migration review.
var migrationReviewPath = filepath.Join("..", "..", "docs", "sql-review", "migrations.md")

// TestMigrationReview re-runs every migration statement on a scratch database per engine (PostgreSQL and MariaDB
// verify the rules' lock and algorithm claims; SQLite runs them), then writes (PC_SQL_REVIEW=write, `make
// migration-review`) or checks (PC_SQL_REVIEW=check, `make sql-review-check`) docs/sql-review/migrations.md.
func TestMigrationReview(t *testing.T) {
	mode := os.Getenv(EnvReview)
	if mode != "write" && mode != "check" {
		t.Skipf("%s is not write or check (make migration-review, make sql-review-check)", EnvReview)
	}
	reviewed := map[db.Engine][]ReviewedFile{}
	for _, e := range reviewEngines {
		files, err := EngineMigrations(e)
		if err != nil {
			t.Fatal(err)
		}
		ok := t.Run(string(e), func(t *testing.T) {
			u := enginetest.ParseURL(t, enginetest.NewDatabase(t, e))
			sqlDB := enginetest.OpenSQLDB(t, u)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for fi := range files {
				if err := verifyFile(ctx, e, sqlDB, &files[fi]); err != nil {
					t.Fatalf("%s: %v", files[fi].Name, err)
				}
				if files[fi].Held != nil {
					for table, mode := range HeldUntilCommit(files[fi]) {
						if got := files[fi].Held[table]; got != mode {
							t.Errorf("%s: the rules say the file holds %s on %s until its commit, pg_locks shows %q", files[fi].Name, mode, table, got)
						}
					}
				}
				for _, s := range files[fi].Statements {
					if msg := mismatch(e, s); msg != "" {
						t.Errorf("%s#%d (%s): the server contradicts rule %s: %s", s.File, s.Index, short(s.SQL), s.Rule().ID, msg)
					}
				}
			}
		})
		if !ok {
			t.FailNow()
		}
		reviewed[e] = files
	}
	text := RenderMigrations(reviewEngines, reviewed)
	if mode == "write" {
		if err := os.WriteFile(migrationReviewPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(migrationReviewPath)
	if err != nil {
		t.Fatalf("%v (run make migration-review)", err)
	}
	if string(committed) != text {
		dir, err := os.MkdirTemp("", "migration-review-")
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "migrations.md")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s is stale (regenerated: %s): review the difference and run make migration-review", migrationReviewPath, tmp)
	}
}

// verifyFile runs the statements of f in order on sqlDB and records what the server showed in each statement's
// Verified.
func verifyFile(ctx context.Context, engine db.Engine, sqlDB *sql.DB, f *ReviewedFile) error {
	switch engine {
	case db.EnginePostgres:
		held, err := heldByFile(ctx, sqlDB, f)
		if err != nil {
			return err
		}
		f.Held = held
		for i := range f.Statements {
			if err := verifyPostgres(ctx, sqlDB, &f.Statements[i]); err != nil {
				return err
			}
		}
	case db.EngineMySQL:
		for i := range f.Statements {
			if err := verifyMySQL(ctx, sqlDB, &f.Statements[i]); err != nil {
				return err
			}
		}
	case db.EngineSQLite:
		// One transaction per file, as db/migrate applies it (statement by statement with txmode none); nothing to
		// read back but success.
		if !f.OwnTx {
			for i, s := range f.Statements {
				if _, err := sqlDB.ExecContext(ctx, s.SQL); err != nil {
					return fmt.Errorf("#%d: %w", s.Index, err)
				}
				f.Statements[i].Verified = "ran (rule only)"
			}
			return nil
		}
		tx, err := sqlDB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		for i, s := range f.Statements {
			if _, err := tx.ExecContext(ctx, s.SQL); err != nil {
				return fmt.Errorf("#%d: %w", s.Index, err)
			}
			f.Statements[i].Verified = "ran (rule only)"
		}
		return tx.Commit()
	}
	return nil
}

// heldByFile runs every statement of f in one transaction, as db/migrate does, reads the strongest lock mode the
// transaction holds on each table that existed before the file, and rolls back.
func heldByFile(ctx context.Context, sqlDB *sql.DB, f *ReviewedFile) (map[string]string, error) {
	if !f.OwnTx {
		return nil, nil // statement by statement: nothing is held beyond a statement
	}
	for _, s := range f.Statements {
		if outsideTxOnly(s) {
			return nil, nil // refused in a transaction: a finding of TestMigrationRules
		}
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var before []string
	rows, err := tx.QueryContext(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			_ = rows.Close()
			return nil, err
		}
		before = append(before, name)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, s := range f.Statements {
		if _, err := tx.ExecContext(ctx, s.SQL); err != nil {
			return nil, fmt.Errorf("#%d in the file's transaction: %w", s.Index, err)
		}
	}
	rows, err = tx.QueryContext(ctx, `SELECT c.relname, l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted AND c.relkind IN ('r', 'p')
		  AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)`, before)
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for rows.Next() {
		var table, mode string
		if err := rows.Scan(&table, &mode); err != nil {
			_ = rows.Close()
			return nil, err
		}
		if pgLockRank(mode) > pgLockRank(held[table]) {
			held[table] = mode
		}
	}
	_ = rows.Close()
	return held, rows.Err()
}

// verifyPostgres runs the statement in its own transaction and reads, before the commit, the strongest lock mode the
// transaction holds on the statement's table and whether the table's file node changed.
func verifyPostgres(ctx context.Context, sqlDB *sql.DB, s *ReviewedStatement) error {
	if strings.Contains(strings.ToUpper(s.SQL), " CONCURRENTLY ") {
		if _, err := sqlDB.ExecContext(ctx, s.SQL); err != nil {
			return fmt.Errorf("#%d: %w", s.Index, err)
		}
		s.Verified = "run outside a transaction (CONCURRENTLY)"
		return nil
	}
	var before sql.NullString
	if err := sqlDB.QueryRowContext(ctx, `SELECT pg_relation_filenode(to_regclass($1))::text`, s.Table).Scan(&before); err != nil {
		return err
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, s.SQL); err != nil {
		return fmt.Errorf("#%d: %w", s.Index, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted
		  AND c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, s.Table)
	if err != nil {
		return err
	}
	strongest := ""
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			_ = rows.Close()
			return err
		}
		if pgLockRank(m) > pgLockRank(strongest) {
			strongest = m
		}
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var after sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT pg_relation_filenode(to_regclass($1))::text`, s.Table).Scan(&after); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	switch {
	case strongest == "":
		s.Verified = "pg_locks: no lock on the table (dropped)"
	case !before.Valid:
		s.Verified = "pg_locks: " + strongest + " (new table)"
	case before.String != after.String:
		s.Verified = "pg_locks: " + strongest + "; table rewritten"
	default:
		s.Verified = "pg_locks: " + strongest + "; not rewritten"
	}
	return nil
}

// verifyMySQL runs an ALTER TABLE, CREATE INDEX or DROP INDEX with each explicit algorithm, strongest first, until
// the server accepts one (the statement is then applied); other statements run as written.
func verifyMySQL(ctx context.Context, sqlDB *sql.DB, s *ReviewedStatement) error {
	upper := strings.ToUpper(s.SQL)
	var withAlg func(string) string
	switch {
	case strings.HasPrefix(upper, "ALTER TABLE "):
		withAlg = func(a string) string { return s.SQL + ", " + a }
	case strings.HasPrefix(upper, "CREATE INDEX "), strings.HasPrefix(upper, "CREATE UNIQUE INDEX "), strings.HasPrefix(upper, "DROP INDEX "):
		withAlg = func(a string) string { return s.SQL + " " + strings.ReplaceAll(a, ",", "") }
	}
	if withAlg == nil {
		if _, err := sqlDB.ExecContext(ctx, s.SQL); err != nil {
			return fmt.Errorf("#%d: %w", s.Index, err)
		}
		return nil
	}
	var refused []string
	for _, a := range MySQLAlgorithms {
		_, err := sqlDB.ExecContext(ctx, withAlg(a))
		if err == nil {
			s.Verified = strings.Join(append(refused, a+" accepted"), "; ")
			return nil
		}
		var me *mysql.MySQLError
		// 1845 ER_ALTER_OPERATION_NOT_SUPPORTED, 1846 ER_ALTER_OPERATION_NOT_SUPPORTED_REASON.
		if errors.As(err, &me) && (me.Number == 1845 || me.Number == 1846) {
			refused = append(refused, strings.SplitN(a, ",", 2)[0]+" refused")
			continue
		}
		return fmt.Errorf("#%d with %s: %w", s.Index, a, err)
	}
	return fmt.Errorf("#%d: every algorithm refused: %s", s.Index, strings.Join(refused, "; "))
}

// mismatch compares what the server showed with the statement's rule.
func mismatch(engine db.Engine, s ReviewedStatement) string {
	switch engine {
	case db.EnginePostgres:
		mode, rest, ok := strings.Cut(strings.TrimPrefix(s.Verified, "pg_locks: "), ";")
		if !strings.HasPrefix(s.Verified, "pg_locks: ") || strings.HasSuffix(s.Verified, "(dropped)") {
			return ""
		}
		mode = strings.TrimSuffix(mode, " (new table)")
		want := ""
		for _, r := range s.Rules {
			if pgLockRank(r.Lock) > pgLockRank(want) {
				want = r.Lock
			}
		}
		if mode != want {
			return fmt.Sprintf("pg_locks shows %s, the rule claims %s", mode, want)
		}
		if ok && strings.Contains(rest, "rewritten") && !strings.Contains(rest, "not rewritten") && s.Rule().Duration == Catalog {
			return "the table was rewritten, the rule claims a catalog change"
		}
	case db.EngineMySQL:
		if s.Verified == "" {
			return ""
		}
		want := s.MySQLAlgorithm()
		if !strings.HasSuffix(s.Verified, want+" accepted") {
			return fmt.Sprintf("server: %s; the rule claims %s", s.Verified, want)
		}
	}
	return ""
}

// EnvMigrationTimings turns on TestMigrationTimings (`make migration-timings`).
const EnvMigrationTimings = "PC_MIGRATION_TIMINGS"

var (
	indexNameRe = regexp.MustCompile(`(?i)^(CREATE (?:UNIQUE )?INDEX )(\w+)( ON )`)
	addCheckRe  = regexp.MustCompile(`(?i)^ALTER TABLE (\w+) ADD CONSTRAINT (\w+) CHECK`)
)

// TestMigrationTimings answers "for how long" at the seeded size: on a seeded database per engine it re-runs the
// blocking statements of every file with an exception in MigrationExceptions and logs how long each held its lock.
// The schema is left as it was: PostgreSQL and SQLite run them in a transaction that is rolled back (an index under
// another name; on SQLite the whole file, so that a rebuild runs whole), MariaDB drops the CHECK constraint first and
// adds it back timed. Timings vary with the machine: they are logged, not recorded in the review file.
func TestMigrationTimings(t *testing.T) {
	if os.Getenv(EnvMigrationTimings) == "" {
		t.Skipf("%s is not set (make migration-timings)", EnvMigrationTimings)
	}
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		files, err := EngineMigrations(engine)
		if err != nil {
			t.Fatal(err)
		}
		u := seededDatabase(t, engine)
		sqlDB := enginetest.OpenSQLDB(t, u)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for _, f := range files {
			var blocking []ReviewedStatement
			for _, s := range f.Statements {
				if _, ok := MigrationExceptions[engine][exceptionKey(s)]; ok && s.Blocking() {
					blocking = append(blocking, s)
				}
			}
			if len(blocking) == 0 {
				continue
			}
			if engine == db.EngineMySQL {
				for _, s := range blocking {
					m := addCheckRe.FindStringSubmatch(s.SQL)
					if m == nil {
						t.Fatalf("%s#%d: no timing recipe for %q", s.File, s.Index, short(s.SQL))
					}
					if _, err := sqlDB.ExecContext(ctx, "ALTER TABLE "+m[1]+" DROP CONSTRAINT "+m[2]); err != nil {
						t.Fatal(err)
					}
					start := time.Now()
					if _, err := sqlDB.ExecContext(ctx, s.SQL); err != nil {
						t.Fatal(err)
					}
					t.Logf("%s %s#%d on %s (%s): %s", engine, s.File, s.Index, s.Table, s.Rule().ID, time.Since(start).Round(time.Millisecond))
				}
				continue
			}
			tx, err := sqlDB.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range f.Statements {
				if strings.HasPrefix(strings.ToUpper(s.SQL), "DROP INDEX") || (engine == db.EnginePostgres && !s.Blocking()) {
					continue // the index it dropped is gone already; PostgreSQL's blocking statements stand alone
				}
				stmt := indexNameRe.ReplaceAllString(s.SQL, "${1}${2}_timing${3}")
				start := time.Now()
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					_ = tx.Rollback()
					t.Fatalf("%s#%d: %v", s.File, s.Index, err)
				}
				if s.Blocking() {
					t.Logf("%s %s#%d on %s (%s): %s", engine, s.File, s.Index, s.Table, s.Rule().ID, time.Since(start).Round(time.Millisecond))
				}
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
