package sqlreview

import (
	"strings"
	"testing"

	"ariga.io/atlas/sql/migrate"

	"github.com/powercontext/powercontext/db"
)

var reviewEngines = []db.Engine{db.EnginePostgres, db.EngineMySQL, db.EngineSQLite}

// TestMigrationRules needs no database: every statement of every migration matches a rule, a blocking statement on
// a big table has an exception with a reason, and every exception is still needed.
func TestMigrationRules(t *testing.T) {
	for _, e := range reviewEngines {
		files, err := EngineMigrations(e)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s: no migration files", e)
		}
		for _, f := range MigrationFindings(e, files) {
			t.Errorf("migration rule: %s", f)
		}
		for key, reason := range MigrationExceptions[e] {
			if strings.TrimSpace(reason) == "" {
				t.Errorf("%s: exception %q has no reason", e, key)
			}
		}
		for _, f := range files {
			for _, s := range f.Statements {
				if s.Table == "" && !s.Unreviewed() {
					t.Errorf("%s %s#%d: no table found in %q", e, s.File, s.Index, s.SQL)
				}
			}
		}
	}
}

// synthetic reviews a migration directory given as file name → text, after the real baseline (so the big tables
// exist).
func synthetic(t *testing.T, engine db.Engine, name, text string) []ReviewedFile {
	t.Helper()
	files := []migrate.File{baselineFile(t, engine), migrate.NewLocalFile(name, []byte(text))}
	rs, err := ReviewMigrations(engine, files)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func baselineFile(t *testing.T, engine db.Engine) migrate.File {
	t.Helper()
	dir, err := engineDirFiles(engine)
	if err != nil {
		t.Fatal(err)
	}
	return dir[0]
}

// TestMigrationRulesRefuseBlockingDDL shows the rules fail: a synthetic migration that blocks writers on a big
// table is a finding on each engine, and its online spelling is not.
func TestMigrationRulesRefuseBlockingDDL(t *testing.T) {
	cases := []struct {
		engine        db.Engine
		sql           string
		rule          string
		blocking      bool
		wantFinding   bool
		wantAlgorithm string
	}{
		{db.EnginePostgres, "CREATE INDEX pc_work_items_kind_idx ON pc_work_items (kind);", "pg-create-index", true, true, ""},
		{db.EnginePostgres, "-- atlas:txmode none\n\nCREATE INDEX CONCURRENTLY pc_work_items_kind_idx ON pc_work_items (kind);", "pg-create-index-concurrently", false, false, ""},
		{db.EnginePostgres, "CREATE INDEX CONCURRENTLY pc_work_items_kind_idx ON pc_work_items (kind);", "pg-create-index-concurrently", false, true, ""}, // refused in the file's transaction
		{db.EnginePostgres, "-- atlas:txmode none\n\nDROP INDEX CONCURRENTLY pc_work_items_lane_status_idx;", "pg-drop-index-concurrently", false, false, ""},
		{db.EnginePostgres, "DROP INDEX CONCURRENTLY pc_work_items_lane_status_idx;", "pg-drop-index-concurrently", false, true, ""},
		{db.EnginePostgres, "ALTER TABLE pc_sources ADD CONSTRAINT pc_sources_type_check CHECK (source_type <> '');", "pg-add-check", true, true, ""},
		{db.EnginePostgres, "ALTER TABLE pc_sources ADD CONSTRAINT pc_sources_type_check CHECK (source_type <> '') NOT VALID;", "pg-add-check-not-valid", false, false, ""},
		{db.EnginePostgres, "ALTER TABLE pc_work_items ADD COLUMN note text NULL;", "pg-add-column", false, false, ""},
		{db.EnginePostgres, "ALTER TABLE pc_work_items ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();", "pg-add-column-rewrite", true, true, ""},
		{db.EnginePostgres, "ALTER TABLE pc_work_items ALTER COLUMN kind TYPE text;", "pg-alter-column-rewrite", true, true, ""},
		{db.EnginePostgres, "CREATE INDEX pc_ui_sessions_name_idx ON pc_ui_sessions (principal_name);", "pg-create-index", true, false, ""}, // small table: recorded, not refused
		{db.EngineMySQL, "ALTER TABLE pc_work_items MODIFY COLUMN kind VARCHAR(300) NOT NULL;", "my-modify-column", true, true, AlgCopy},
		{db.EngineMySQL, "ALTER TABLE pc_work_items ADD CONSTRAINT pc_work_items_kind_check CHECK (kind <> '');", "my-add-check", true, true, AlgCopy},
		{db.EngineMySQL, "CREATE INDEX pc_work_items_kind_idx ON pc_work_items (kind);", "my-create-index", false, false, AlgInplace},
		{db.EngineMySQL, "ALTER TABLE pc_work_items ADD COLUMN note TEXT NULL, DROP INDEX pc_work_items_status_available_idx;", "my-drop-index", false, false, AlgInplace},
		{db.EngineSQLite, "CREATE INDEX pc_work_items_kind_idx ON pc_work_items (kind);", "sqlite-create-index", true, true, ""},
		{db.EngineSQLite, "CREATE TABLE pc_work_keys_new (logical_key TEXT NOT NULL);\nINSERT INTO pc_work_keys_new (logical_key) SELECT logical_key FROM pc_work_keys;", "sqlite-copy", true, true, ""},
		{db.EngineSQLite, "ALTER TABLE pc_work_items ADD COLUMN note TEXT;", "sqlite-add-column", false, false, ""},
		{db.EnginePostgres, "VACUUM FULL pc_work_items;", "unreviewed", false, true, ""},
	}
	for _, c := range cases {
		rs := synthetic(t, c.engine, "20991231000000_synthetic.sql", c.sql)
		f := rs[len(rs)-1]
		s := f.Statements[len(f.Statements)-1]
		if got := s.Rule().ID; got != c.rule {
			t.Errorf("%s %q: rule %s, want %s", c.engine, c.sql, got, c.rule)
		}
		if s.Blocking() != c.blocking {
			t.Errorf("%s %q: blocking %v, want %v", c.engine, c.sql, s.Blocking(), c.blocking)
		}
		findings := MigrationFindings(c.engine, rs)
		var found bool
		for _, fd := range findings {
			if strings.Contains(fd, "20991231000000_synthetic.sql") {
				found = true
			}
		}
		if found != c.wantFinding {
			t.Errorf("%s %q: finding %v, want %v (findings: %q)", c.engine, c.sql, found, c.wantFinding, findings)
		}
		if c.engine == db.EngineMySQL && s.MySQLAlgorithm() != c.wantAlgorithm {
			t.Errorf("%s %q: algorithm %q, want %q", c.engine, c.sql, s.MySQLAlgorithm(), c.wantAlgorithm)
		}
	}
}

// TestMigrationExceptionMustBeUsed: an exception whose statement became online is reported as stale.
func TestMigrationExceptionMustBeUsed(t *testing.T) {
	saved := MigrationExceptions[db.EnginePostgres]
	t.Cleanup(func() { MigrationExceptions[db.EnginePostgres] = saved })
	MigrationExceptions[db.EnginePostgres] = map[string]string{"20991231000000_synthetic.sql pc_work_items": "test"}
	rs := synthetic(t, db.EnginePostgres, "20991231000000_synthetic.sql",
		"-- atlas:txmode none\n\nCREATE INDEX CONCURRENTLY pc_work_items_kind_idx ON pc_work_items (kind);")
	var findings []string
	for _, f := range MigrationFindings(db.EnginePostgres, rs) {
		if strings.Contains(f, "synthetic") {
			findings = append(findings, f)
		}
	}
	if len(findings) != 1 || !strings.Contains(findings[0], "matches no blocking statement") {
		t.Fatalf("findings %q, want one stale exception", findings)
	}
}

// TestMigrationReviewRendersTxModeNone: a file run statement by statement says so and claims no lock held to its
// end; a file in one transaction keeps its "Held until the file commits" line.
func TestMigrationReviewRendersTxModeNone(t *testing.T) {
	online := synthetic(t, db.EnginePostgres, "20991231000000_online.sql",
		"-- atlas:txmode none\n\nCREATE INDEX CONCURRENTLY pc_work_items_kind_idx ON pc_work_items (kind);\nDROP INDEX CONCURRENTLY pc_work_items_lane_status_idx;")
	inTx := synthetic(t, db.EnginePostgres, "20991231000000_in_tx.sql", "DROP INDEX pc_work_items_lane_status_idx;")
	section := func(rs []ReviewedFile, name string) string {
		text := RenderMigrations([]db.Engine{db.EnginePostgres}, map[db.Engine][]ReviewedFile{db.EnginePostgres: rs})
		_, after, _ := strings.Cut(text, "### "+name)
		return after
	}
	if got := section(online, "20991231000000_online.sql"); !strings.Contains(got, "Statement by statement (`-- atlas:txmode none`)") ||
		strings.Contains(got, "Held until the file commits") {
		t.Errorf("txmode none file rendered as:\n%s", got)
	}
	if got := section(inTx, "20991231000000_in_tx.sql"); !strings.Contains(got, "Held until the file commits: AccessExclusiveLock on pc_work_items") {
		t.Errorf("file in one transaction rendered as:\n%s", got)
	}
}
