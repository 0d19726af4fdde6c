package sqlreview

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"ariga.io/atlas/sql/migrate"

	"github.com/powercontext/powercontext/db"
	pcmigrate "github.com/powercontext/powercontext/db/migrate"
)

// The migration review (docs/sql-review/migrations.md, `make migration-review`): every statement of every migration
// file, read with Atlas's statement scanner (the one db/migrate applies them with), is classified by the first rule
// of its engine that matches it (MigrationRules). A rule states the lock the statement takes, how long it holds it
// (Catalog: a catalog change, independent of the row count; Rows: a scan, a copy or an index build, proportional to
// the table) and whether writers to the table wait meanwhile. A statement is blocking when it does Rows work while
// writers wait, on a table that existed (or was filled) before the file. A blocking statement on a big table
// (BigTable) is a finding unless MigrationExceptions names its file and table with a reason. The server check
// (migrations_test.go) re-runs every statement on a scratch database and verifies the rule's claim: on MariaDB the
// ALGORITHM/LOCK clause the server accepts, on PostgreSQL the lock mode in pg_locks and whether the table's file was
// rewritten.

// Duration is how long a statement holds its lock.
type Duration string

// The two durations: Catalog, a catalog (metadata) change independent of the table's size; Rows, a scan, copy or
// index build proportional to the table's rows.
const (
	Catalog Duration = "catalog"
	Rows    Duration = "rows"
)

// MigrationRule classifies one kind of statement (or one clause of an ALTER TABLE) on one engine.
type MigrationRule struct {
	ID     string
	Engine db.Engine
	Match  *regexp.Regexp // on the normalized statement or ALTER TABLE clause (upper case, single spaces)
	What   string         // the operation, in words
	// Lock is what the statement takes: on PostgreSQL the strongest pg_locks mode on the table (verified); on
	// MySQL mode the strongest ALGORITHM (and LOCK) the server accepts (verified): INSTANT, INPLACE LOCK=NONE or
	// COPY LOCK=SHARED; on SQLite the database's write lock (rule only).
	Lock        string
	Duration    Duration
	WritersWait bool // writers to the table wait while the lock is held
	Note        string
}

// Algorithms on MySQL-mode servers, strongest first: the order the server check tries them in.
const (
	AlgInstant = "ALGORITHM=INSTANT"
	AlgInplace = "ALGORITHM=INPLACE, LOCK=NONE"
	AlgCopy    = "ALGORITHM=COPY, LOCK=SHARED"
)

// MySQLAlgorithms is the order in which the server check tries the algorithms.
var MySQLAlgorithms = []string{AlgInstant, AlgInplace, AlgCopy}

func rule(id string, e db.Engine, re, what, lock string, d Duration, writersWait bool, note string) MigrationRule {
	return MigrationRule{ID: id, Engine: e, Match: regexp.MustCompile(re), What: what, Lock: lock, Duration: d,
		WritersWait: writersWait, Note: note}
}

const (
	pg = db.EnginePostgres
	my = db.EngineMySQL
	sl = db.EngineSQLite
)

// MigrationRules are tried in order; the first match classifies. A statement no rule matches is a finding
// ("unreviewed"): add a rule before merging it.
var MigrationRules = []MigrationRule{
	// PostgreSQL (12+). Every lock below is held until the file's transaction commits (db/migrate runs a
	// PostgreSQL file in one transaction), so a file holds the strongest lock of all its statements until its end.
	rule("pg-create-table", pg, `^CREATE TABLE`, "create a table", "AccessExclusiveLock", Catalog, false,
		"only the new table is locked; no other session can use it yet"),
	rule("pg-create-index-concurrently", pg, `^CREATE (UNIQUE )?INDEX CONCURRENTLY`, "build an index without blocking writes",
		"ShareUpdateExclusiveLock", Rows, false, "cannot run inside a transaction block: the file starts with `-- atlas:txmode none`, "+
			"so db/migrate (and the Atlas CLI) run it statement by statement; a failed build leaves an invalid index to drop before the rerun"),
	rule("pg-create-index", pg, `^CREATE (UNIQUE )?INDEX`, "build an index", "ShareLock", Rows, true,
		"reads continue; INSERT, UPDATE and DELETE wait for the whole build"),
	rule("pg-drop-index-concurrently", pg, `^DROP INDEX CONCURRENTLY`, "drop an index", "ShareUpdateExclusiveLock", Catalog, false,
		"cannot run inside a transaction block: the file starts with `-- atlas:txmode none`"),
	rule("pg-drop-index", pg, `^DROP INDEX`, "drop an index", "AccessExclusiveLock", Catalog, true,
		"a catalog change, but reads and writes of the table wait for it (and for the file's commit)"),
	rule("pg-drop-table", pg, `^DROP TABLE`, "drop a table", "AccessExclusiveLock", Catalog, true, ""),
	rule("pg-add-check-not-valid", pg, `^ADD (CONSTRAINT \w+ )?CHECK .* NOT VALID$`, "add a CHECK constraint without validating",
		"AccessExclusiveLock", Catalog, true, "existing rows are checked later by VALIDATE CONSTRAINT"),
	rule("pg-add-check", pg, `^ADD (CONSTRAINT \w+ )?CHECK`, "add a CHECK constraint and validate every row",
		"AccessExclusiveLock", Rows, true, "reads and writes wait while the table is scanned; ADD … NOT VALID then VALIDATE CONSTRAINT avoids it"),
	rule("pg-add-key", pg, `^ADD (CONSTRAINT \w+ )?(UNIQUE|PRIMARY KEY|FOREIGN KEY)`, "add a key constraint (index build or scan)",
		"AccessExclusiveLock", Rows, true, ""),
	rule("pg-add-column-rewrite", pg, `^ADD (COLUMN )?\w+ .*(DEFAULT .*(\w+\(|NEXTVAL)|GENERATED .* STORED|SERIAL|IDENTITY)`,
		"add a column whose default is computed per row", "AccessExclusiveLock", Rows, true,
		"a volatile default, a stored generated column or an identity rewrites every row (any function call in the default counts: conservative)"),
	rule("pg-add-column", pg, `^ADD (COLUMN )?\w+ `, "add a column (no default or a constant one)", "AccessExclusiveLock", Catalog, true,
		"PostgreSQL 11+ stores a constant default in the catalog; no row is touched"),
	rule("pg-validate-constraint", pg, `^VALIDATE CONSTRAINT`, "validate a NOT VALID constraint", "ShareUpdateExclusiveLock", Rows, false, ""),
	rule("pg-drop-constraint", pg, `^DROP CONSTRAINT`, "drop a constraint", "AccessExclusiveLock", Catalog, true, ""),
	rule("pg-drop-column", pg, `^DROP (COLUMN )?\w+`, "drop a column (hidden, not rewritten)", "AccessExclusiveLock", Catalog, true, ""),
	rule("pg-alter-column-rewrite", pg, `^ALTER (COLUMN )?\w+ (SET DATA )?TYPE|^ALTER (COLUMN )?\w+ SET NOT NULL`,
		"change a column's type or nullability", "AccessExclusiveLock", Rows, true, "a type change rewrites the table; SET NOT NULL scans it"),
	rule("pg-rename", pg, `^RENAME `, "rename", "AccessExclusiveLock", Catalog, true, ""),
	rule("pg-backfill", pg, `^INSERT INTO \w+ .*SELECT .* FROM \w+`, "copy rows of a table into another (a backfill)",
		"AccessShareLock", Rows, false, "the source is only read: its writers continue; the target (a new table) is the file's until it commits"),

	// MariaDB 10.6+ / MySQL 8.0 (InnoDB online DDL). Each statement commits on its own; the metadata lock is
	// exclusive only briefly at its start and end (a long transaction on the table delays both).
	rule("my-create-table", my, `^CREATE TABLE`, "create a table", "", Catalog, false, "only the new table"),
	rule("my-create-index", my, `^CREATE (UNIQUE )?INDEX|^ADD (UNIQUE )?(INDEX|KEY)|^ADD CONSTRAINT \w+ UNIQUE`, "build a secondary index",
		AlgInplace, Rows, false, "built in place while reads and writes continue (changes logged and applied at the end)"),
	rule("my-drop-index", my, `^DROP INDEX|^DROP KEY`, "drop a secondary index", AlgInplace, Catalog, false, "metadata only (MariaDB: NOCOPY)"),
	rule("my-drop-table", my, `^DROP TABLE`, "drop a table", "", Catalog, true, ""),
	rule("my-add-check", my, `^ADD (CONSTRAINT \w+ )?CHECK`, "add a CHECK constraint", AlgCopy, Rows, true,
		"MariaDB refuses INSTANT and INPLACE for it: the table is copied while writes wait"),
	rule("my-drop-check", my, `^DROP (CONSTRAINT|CHECK) `, "drop a constraint", AlgInstant, Catalog, false, ""),
	rule("my-add-foreign-key", my, `^ADD (CONSTRAINT \w+ )?FOREIGN KEY`, "add a foreign key", AlgCopy, Rows, true,
		"INPLACE only with foreign_key_checks=0"),
	rule("my-add-column", my, `^ADD (COLUMN )?\w+ `, "add a column", AlgInstant, Catalog, false, "MariaDB 10.3+ / MySQL 8.0.29+ at any position"),
	rule("my-drop-column", my, `^DROP (COLUMN )?\w+$`, "drop a column", AlgInstant, Catalog, false, "MariaDB 10.4+ / MySQL 8.0.29+"),
	rule("my-modify-column", my, `^(MODIFY|CHANGE|ALTER) `, "change a column", AlgCopy, Rows, true,
		"conservative: only some changes (e.g. widening a VARCHAR within its length byte) are INPLACE; add an explicit rule when one is"),
	rule("my-rename", my, `^RENAME `, "rename", AlgInstant, Catalog, false, ""),
	rule("my-backfill", my, `^INSERT INTO \w+ .*SELECT .* FROM \w+`, "copy rows of a table into another (a backfill)",
		"shared row locks", Rows, true, "InnoDB's INSERT … SELECT share-locks the source rows it reads: their writers wait until the statement ends"),

	// SQLite. A migration file is one write transaction: writers (there is one writer connection) wait for the whole
	// file; readers continue on the last committed state (WAL). Rows work makes that wait proportional to the table.
	rule("sqlite-create-table", sl, `^CREATE TABLE`, "create a table", "write lock", Catalog, false, "only the new table"),
	rule("sqlite-create-index", sl, `^CREATE (UNIQUE )?INDEX`, "build an index", "write lock", Rows, true, ""),
	rule("sqlite-drop-index", sl, `^DROP INDEX`, "drop an index", "write lock", Rows, true, "frees the index's pages"),
	rule("sqlite-copy", sl, `^INSERT INTO \w+ .*SELECT .* FROM \w+`, "copy a table's rows (table rebuild)", "write lock", Rows, true,
		"SQLite cannot change a constraint in place: create, copy, drop, rename"),
	rule("sqlite-drop-table", sl, `^DROP TABLE`, "drop a table", "write lock", Rows, true, "frees every page of the table"),
	rule("sqlite-add-column", sl, `^ADD (COLUMN )?\w+ (\w+)?$`, "add a column without constraints", "write lock", Catalog, false,
		"rewrites the schema entry only (a CHECK or NOT NULL column would scan the table)"),
	rule("sqlite-rename", sl, `^RENAME `, "rename", "write lock", Catalog, false, ""),
}

// BigTable reports whether a table is one the issue 33 review treats as big (unbounded with the workload).
func BigTable(table string) bool {
	switch table {
	case "pc_work_items", "pc_work_attempts", "pc_work_keys", "pc_sources":
		return true
	}
	return strings.HasPrefix(table, "pc_memory_")
}

// MigrationExceptions lists the blocking statements on big tables that were accepted, by engine, file and table,
// with the reason. Every entry must match a blocking statement (the test fails on a stale one).
var MigrationExceptions = map[db.Engine]map[string]string{
	pg: {
		"20261203000000_claim_candidate_index.sql pc_work_items": landedBefore + " The index build " +
			"runs after the DROP INDEX in the same transaction, so reads of pc_work_items wait too (AccessExclusiveLock until commit).",
		"20261207000000_expand_attempt_snoozed.sql pc_work_attempts": landedBefore + " The file says so: one ALTER, so " +
			"there is no moment without the constraint.",
		"20261207000100_expand_source_tombstones.sql pc_sources":    landedBefore,
		"20261207000200_expand_source_created_index.sql pc_sources": landedBefore + " CONCURRENTLY was not available then: db/migrate ran every PostgreSQL file in one transaction.",
	},
	my: {
		"20261207000000_expand_attempt_snoozed.sql pc_work_attempts": landedBefore + " MariaDB copies the table to add a CHECK constraint.",
		"20261207000100_expand_source_tombstones.sql pc_sources":     landedBefore + " MariaDB copies the table to add a CHECK constraint.",
	},
	sl: {
		"20261203000000_claim_candidate_index.sql pc_work_items":     sqliteSingleNode,
		"20261207000000_expand_attempt_snoozed.sql pc_work_attempts": sqliteSingleNode,
		"20261207000100_expand_source_tombstones.sql pc_sources":     sqliteSingleNode,
		"20261207000200_expand_source_created_index.sql pc_sources":  sqliteSingleNode,
	},
}

const (
	landedBefore = "Landed before the migration review; forward-only and hashed in atlas.sum, so it stays as written: " +
		"apply it when writes may wait for a full pass over the table (time it on a copy of production first)."
	sqliteSingleNode = "SQLite is the single-node engine: single_node applies migrations at start, before it serves, " +
		"so nothing waits but the start itself."
)

// ReviewedStatement is one statement of a migration file with its classification.
type ReviewedStatement struct {
	File     string
	Index    int // 1-based within the file
	SQL      string
	Clauses  []string // the normalized statement, or an ALTER TABLE's clauses
	Rules    []MigrationRule
	Table    string // the table the lock is on (for a copy: the table copied from)
	New      bool   // the table was created in this file and is still empty
	Verified string // the server check's result (migrations_test.go)
}

// Rule returns the statement's governing rule: the clause with the most work (rows work while writers wait, then
// rows work, then a catalog change while writers wait; on MySQL mode then the weaker algorithm).
func (s ReviewedStatement) Rule() MigrationRule {
	if len(s.Rules) == 0 {
		return MigrationRule{ID: "unreviewed"}
	}
	best, bestScore := s.Rules[0], -1
	for _, r := range s.Rules {
		score := 0
		switch {
		case r.Duration == Rows && r.WritersWait:
			score = 30
		case r.Duration == Rows:
			score = 20
		case r.WritersWait:
			score = 10
		}
		for i, a := range MySQLAlgorithms {
			if r.Lock == a {
				score += i
			}
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	return best
}

// Unreviewed reports whether some clause matched no rule.
func (s ReviewedStatement) Unreviewed() bool { return len(s.Rules) < len(s.Clauses) }

// Blocking reports whether writers to an existing (or filled) table wait for work proportional to its rows.
func (s ReviewedStatement) Blocking() bool {
	r := s.Rule()
	return !s.New && r.Duration == Rows && r.WritersWait
}

// MySQLAlgorithm is the strongest algorithm the rules claim for the statement (the weakest of its clauses').
func (s ReviewedStatement) MySQLAlgorithm() string {
	worst := -1
	for _, r := range s.Rules {
		for i, a := range MySQLAlgorithms {
			if r.Lock == a && i > worst {
				worst = i
			}
		}
	}
	if worst < 0 {
		return ""
	}
	return MySQLAlgorithms[worst]
}

// ReviewedFile is one migration file.
type ReviewedFile struct {
	Name       string
	Statements []ReviewedStatement
	// OwnTx: the file runs in one transaction on PostgreSQL and SQLite (no `-- atlas:txmode none`).
	OwnTx bool
	// Held (PostgreSQL, from the server check): table → the strongest mode in pg_locks after every statement of the
	// file ran in one transaction, as db/migrate runs it, for the tables that existed before the file.
	Held map[string]string
}

var (
	spaceRe       = regexp.MustCompile(`\s+`)
	createTableRe = regexp.MustCompile(`^CREATE TABLE (IF NOT EXISTS )?(\w+)`)
	createIndexRe = regexp.MustCompile(`^CREATE (UNIQUE )?INDEX (CONCURRENTLY )?(IF NOT EXISTS )?(\w+) ON (ONLY )?(\w+)`)
	dropIndexRe   = regexp.MustCompile(`^DROP INDEX (CONCURRENTLY )?(IF EXISTS )?(\w+)( ON (\w+))?`)
	dropTableRe   = regexp.MustCompile(`^DROP TABLE (IF EXISTS )?(\w+)`)
	alterTableRe  = regexp.MustCompile(`^ALTER TABLE (IF EXISTS )?(ONLY )?(\w+) (.*)$`)
	insertRe      = regexp.MustCompile(`^INSERT INTO (\w+)\b.*\bFROM (\w+)`)
	renameToRe    = regexp.MustCompile(`^RENAME TO (\w+)$`)
	inlineKeyRe   = regexp.MustCompile(`\b(?:KEY|INDEX) (\w+) \(`)
	algClauseRe   = regexp.MustCompile(`^(ALGORITHM|LOCK) ?=`)
	addIndexRe    = regexp.MustCompile(`^ADD (UNIQUE )?(?:INDEX|KEY) (\w+)`)
)

// normalize removes comment lines and folds whitespace; keywords are compared in upper case, names keep theirs
// (the migrations spell every name in lower case).
func normalize(stmt string) string {
	var lines []string
	for _, l := range strings.Split(stmt, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			lines = append(lines, t)
		}
	}
	s := strings.TrimSpace(spaceRe.ReplaceAllString(strings.Join(lines, " "), " "))
	return strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(s, ";")), ";")
}

// upperKeywords upper-cases everything outside quotes, so rules match keywords whatever their case.
func upperKeywords(s string) string {
	var b strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			b.WriteRune(r)
		case r == '\'' || r == '"' || r == '`':
			quote = r
			b.WriteRune(r)
		default:
			b.WriteString(strings.ToUpper(string(r)))
		}
	}
	return b.String()
}

// splitClauses splits an ALTER TABLE's action list at top-level commas.
func splitClauses(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"' || r == '`':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func matchRule(engine db.Engine, clause string) (MigrationRule, bool) {
	for _, r := range MigrationRules {
		if r.Engine == engine && r.Match.MatchString(clause) {
			return r, true
		}
	}
	return MigrationRule{}, false
}

// ReviewMigrations classifies every statement of files (in order: the tables and indexes a file creates are known
// to the later ones).
func ReviewMigrations(engine db.Engine, files []migrate.File) ([]ReviewedFile, error) {
	indexTable := map[string]string{} // index name → table, for PostgreSQL's and SQLite's DROP INDEX
	var out []ReviewedFile
	for _, f := range files {
		decls, err := f.StmtDecls()
		if err != nil {
			return nil, fmt.Errorf("sqlreview: %s: %w", f.Name(), err)
		}
		ownTx, err := pcmigrate.OwnTransaction(f)
		if err != nil {
			return nil, fmt.Errorf("sqlreview: %w", err)
		}
		rf := ReviewedFile{Name: f.Name(), OwnTx: ownTx}
		empty := map[string]bool{} // tables created in this file and not filled yet
		for i, d := range decls {
			n := upperKeywords(normalize(d.Text))
			st := ReviewedStatement{File: f.Name(), Index: i + 1, SQL: normalize(d.Text), Clauses: []string{n}}
			switch {
			case createTableRe.MatchString(n):
				st.Table = strings.ToLower(createTableRe.FindStringSubmatch(n)[2])
				empty[st.Table] = true
				for _, m := range inlineKeyRe.FindAllStringSubmatch(n, -1) {
					indexTable[strings.ToLower(m[1])] = st.Table
				}
			case createIndexRe.MatchString(n):
				m := createIndexRe.FindStringSubmatch(n)
				st.Table = strings.ToLower(m[6])
				indexTable[strings.ToLower(m[4])] = st.Table
			case dropIndexRe.MatchString(n):
				m := dropIndexRe.FindStringSubmatch(n)
				st.Table = strings.ToLower(m[5])
				if st.Table == "" {
					st.Table = indexTable[strings.ToLower(m[3])]
				}
			case dropTableRe.MatchString(n):
				st.Table = strings.ToLower(dropTableRe.FindStringSubmatch(n)[2])
			case insertRe.MatchString(n):
				m := insertRe.FindStringSubmatch(n)
				st.Table = strings.ToLower(m[2])
				delete(empty, strings.ToLower(m[1]))
			case alterTableRe.MatchString(n):
				m := alterTableRe.FindStringSubmatch(n)
				st.Table = strings.ToLower(m[3])
				st.Clauses = nil
				for _, c := range splitClauses(m[4]) {
					if algClauseRe.MatchString(c) {
						continue
					}
					st.Clauses = append(st.Clauses, c)
					if rm := renameToRe.FindStringSubmatch(c); rm != nil {
						to := strings.ToLower(rm[1])
						if empty[st.Table] {
							empty[to] = true
						}
						delete(empty, st.Table)
						renameIndexes(indexTable, st.Table, to)
					}
					if mm := addIndexRe.FindStringSubmatch(c); mm != nil {
						indexTable[strings.ToLower(mm[2])] = st.Table
					}
				}
			}
			st.New = empty[st.Table] && !dropTableRe.MatchString(n)
			if createTableRe.MatchString(n) {
				st.New = true
			}
			for _, c := range st.Clauses {
				if r, ok := matchRule(engine, c); ok {
					st.Rules = append(st.Rules, r)
				}
			}
			rf.Statements = append(rf.Statements, st)
		}
		out = append(out, rf)
	}
	return out, nil
}

func renameIndexes(indexTable map[string]string, from, to string) {
	for ix, t := range indexTable {
		if t == from {
			indexTable[ix] = to
		}
	}
}

// EngineMigrations reviews the migration directory engine's binary embeds (sql/migrations/<engine>).
func EngineMigrations(engine db.Engine) ([]ReviewedFile, error) {
	files, err := engineDirFiles(engine)
	if err != nil {
		return nil, err
	}
	return ReviewMigrations(engine, files)
}

// engineDirFiles returns the embedded migration files of engine, in order.
func engineDirFiles(engine db.Engine) ([]migrate.File, error) {
	dir, err := pcmigrate.Dir(engine)
	if err != nil {
		return nil, err
	}
	return dir.Files()
}

// exceptionKey is the MigrationExceptions key of a statement.
func exceptionKey(s ReviewedStatement) string { return s.File + " " + s.Table }

// MigrationFindings returns the migration rules' findings: an unreviewed statement, a statement PostgreSQL refuses
// inside the file's transaction, a blocking statement on a big table without an exception, an exception that
// matches no blocking statement.
func MigrationFindings(engine db.Engine, files []ReviewedFile) []string {
	var out []string
	used := map[string]bool{}
	for _, f := range files {
		for _, s := range f.Statements {
			if s.Unreviewed() {
				out = append(out, fmt.Sprintf("%s %s#%d: no rule matches (add one to MigrationRules): %s", engine, s.File, s.Index, short(s.SQL)))
				continue
			}
			if engine == pg && f.OwnTx && outsideTxOnly(s) {
				out = append(out, fmt.Sprintf("%s %s#%d: PostgreSQL refuses %s inside the file's transaction: start the file with "+
					"`-- atlas:txmode none` (and a blank line): %s", engine, s.File, s.Index, s.Rule().ID, short(s.SQL)))
			}
			if !s.Blocking() {
				continue
			}
			key := exceptionKey(s)
			if _, ok := MigrationExceptions[engine][key]; ok {
				used[key] = true
				continue
			}
			if BigTable(s.Table) {
				out = append(out, fmt.Sprintf("%s %s#%d: blocking on big table %s (%s: %s, writers wait for %s work) without an exception in MigrationExceptions: %s",
					engine, s.File, s.Index, s.Table, s.Rule().ID, s.Rule().Lock, s.Rule().Duration, short(s.SQL)))
			}
		}
	}
	for key := range MigrationExceptions[engine] {
		if !used[key] {
			out = append(out, fmt.Sprintf("%s: exception %q matches no blocking statement: remove it", engine, key))
		}
	}
	sort.Strings(out)
	return out
}

// outsideTxOnly reports whether PostgreSQL refuses the statement inside a transaction block.
func outsideTxOnly(s ReviewedStatement) bool {
	for _, r := range s.Rules {
		if r.ID == "pg-create-index-concurrently" || r.ID == "pg-drop-index-concurrently" {
			return true
		}
	}
	return false
}

func short(s string) string {
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

// Verdict is the statement's one-line verdict in the review file.
func (s ReviewedStatement) Verdict(engine db.Engine) string {
	r := s.Rule()
	_, excepted := MigrationExceptions[engine][exceptionKey(s)]
	switch {
	case s.Unreviewed():
		return "**unreviewed**"
	case s.New:
		return "online: new table"
	case s.Blocking() && excepted:
		return "**blocking**: exception"
	case s.Blocking() && BigTable(s.Table):
		return "**blocking**: no exception (finding)"
	case s.Blocking():
		return "blocking, small table"
	case r.WritersWait:
		return "brief: catalog change under the lock"
	default:
		return "online"
	}
}

// RenderMigrations writes docs/sql-review/migrations.md from the reviewed directories of every engine.
func RenderMigrations(engines []db.Engine, reviewed map[db.Engine][]ReviewedFile) string {
	var b strings.Builder
	b.WriteString("# Migration review\n\n")
	b.WriteString("Generated by `make migration-review` (internal/sqlreview/migrations.go); do not edit. `make sql-review-check`\n")
	b.WriteString("fails when this file differs from the migrations (a new file, a changed rule or a changed server verdict).\n")
	b.WriteString("How to use it in a review: the section Reviewing SQL of docs/deployment.md.\n\n")
	b.WriteString("Every statement of every file in sql/migrations/<engine>, as Atlas's scanner splits it, is classified by the\n")
	b.WriteString("first rule of its engine that matches it (an ALTER TABLE clause by clause; the clause with the most work\n")
	b.WriteString("governs). **Work** is `catalog` (a metadata change, independent of the table's size) or `rows` (a scan, a\n")
	b.WriteString("copy or an index build: proportional to the table). A statement is **blocking** when writers to the table\n")
	b.WriteString("wait for `rows` work on a table that existed (or was filled) before the file. On a big table (pc_work_items,\n")
	b.WriteString("pc_work_attempts, pc_work_keys, pc_sources, pc_memory_*) that is a test failure (TestMigrationRules) unless the\n")
	b.WriteString("file and table are listed as an exception below, with the reason.\n\n")
	b.WriteString("**Verified** is what the server said when the statement was re-run on a scratch database, migrated up to it:\n")
	b.WriteString("on PostgreSQL, the strongest lock mode the statement's transaction holds on the table in `pg_locks`, and\n")
	b.WriteString("whether the table's file node changed (a rewrite); on MariaDB, the statement re-run with an explicit\n")
	b.WriteString("`ALGORITHM=INSTANT`, then `ALGORITHM=INPLACE, LOCK=NONE`, then `ALGORITHM=COPY, LOCK=SHARED`: the first one the\n")
	b.WriteString("server accepts. The test fails when that differs from the rule's claim. SQLite has no lock modes to read:\n")
	b.WriteString("its rows are the rules' claims (every statement is still run, in the file's transaction: \"ran (rule only)\").\n")
	b.WriteString("How long the blocking statements take at the seeded size: `make migration-timings` (logged, machine-dependent).\n\n")
	b.WriteString("How long locks are held: PostgreSQL and SQLite run a file in one transaction (db/migrate), so every lock of\n")
	b.WriteString("a file is held until its last statement commits (on PostgreSQL the line \"Held until the file commits\" is read\n")
	b.WriteString("from `pg_locks` after the whole file ran in one transaction, then rolled back, and must agree with the rules);\n")
	b.WriteString("a file that starts with `-- atlas:txmode none` (required for CREATE or DROP INDEX CONCURRENTLY, a finding\n")
	b.WriteString("without it) runs statement by statement instead, each committed on its own, as MySQL-mode servers run\n")
	b.WriteString("every file. On\n")
	b.WriteString("PostgreSQL even a `catalog` statement queues behind any open transaction on the table and everything else\n")
	b.WriteString("queues behind it: run migrations with a `lock_timeout`.\n\n")

	b.WriteString("## Rules\n\n| Rule | Matches | Lock | Work | Writers wait | Note |\n|---|---|---|---|---|---|\n")
	for _, r := range MigrationRules {
		wait := "no"
		if r.WritersWait {
			wait = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.ID, cell(r.What), cell(r.Lock), r.Duration, wait, cell(r.Note))
	}

	b.WriteString("\n## Exceptions\n\n| Engine | File | Table | Reason |\n|---|---|---|---|\n")
	for _, e := range engines {
		keys := make([]string, 0, len(MigrationExceptions[e]))
		for k := range MigrationExceptions[e] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			file, table, _ := strings.Cut(k, " ")
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e, file, table, cell(MigrationExceptions[e][k]))
		}
	}

	for _, e := range engines {
		fmt.Fprintf(&b, "\n## %s\n", e)
		for _, f := range reviewed[e] {
			fmt.Fprintf(&b, "\n### %s\n\n", f.Name)
			var blocking []string
			for _, s := range f.Statements {
				if s.Blocking() {
					blocking = append(blocking, s.Table)
				}
			}
			if len(blocking) == 0 {
				b.WriteString("No blocking statement.\n")
			} else {
				fmt.Fprintf(&b, "Blocking on: %s.\n", strings.Join(uniq(blocking), ", "))
			}
			if (e == pg || e == sl) && !f.OwnTx {
				b.WriteString("Statement by statement (`-- atlas:txmode none`): each statement commits on its own.\n")
			}
			if e == pg && f.OwnTx {
				if held := heldLine(f); held != "" {
					fmt.Fprintf(&b, "Held until the file commits: %s.\n", held)
				}
			}
			b.WriteString("\n")
			b.WriteString("| # | Statement | Table | Rule | Lock | Work | Verdict | Verified |\n|---|---|---|---|---|---|---|---|\n")
			for _, s := range f.Statements {
				r := s.Rule()
				lock := r.Lock
				if e == my {
					lock = s.MySQLAlgorithm()
				}
				fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s | %s | %s | %s |\n", s.Index, cell(short(s.SQL)), s.Table, r.ID,
					cell(lock), r.Duration, s.Verdict(e), cell(s.Verified))
			}
		}
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// HeldUntilCommit returns, for a PostgreSQL file, the strongest lock its statements' rules take on each table that
// existed before it (the file is one transaction, so each is held until its end).
func HeldUntilCommit(f ReviewedFile) map[string]string {
	strongest := map[string]string{}
	for _, s := range f.Statements {
		if s.New || s.Table == "" {
			continue
		}
		for _, r := range s.Rules {
			if cur, seen := strongest[s.Table]; !seen || pgLockRank(r.Lock) > pgLockRank(cur) {
				strongest[s.Table] = r.Lock
			}
		}
	}
	return strongest
}

// heldLine renders the file's held locks, the server's (Held) when the check ran, else the rules'.
func heldLine(f ReviewedFile) string {
	held, source := HeldUntilCommit(f), "the rules"
	if f.Held != nil {
		held, source = f.Held, "pg_locks before the commit"
	}
	tables := make([]string, 0, len(held))
	for t := range held {
		tables = append(tables, t)
	}
	if len(tables) == 0 {
		return ""
	}
	sort.Strings(tables)
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = held[t] + " on " + t
	}
	return strings.Join(out, ", ") + " (" + source + ")"
}

// pgLockModes are PostgreSQL's table lock modes, weakest first.
var pgLockModes = []string{"AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
	"ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"}

func pgLockRank(m string) int {
	for i, x := range pgLockModes {
		if x == m {
			return i
		}
	}
	return -1
}
