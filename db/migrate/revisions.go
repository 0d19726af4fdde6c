package migrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/powercontext/powercontext/internal/clock"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
)

// RevisionsTable is the Atlas CLI's revision table.
const RevisionsTable = "atlas_schema_revisions"

// atlasCloudIdentifier is a row the Atlas CLI may add to the revisions table; it is not a revision.
const atlasCloudIdentifier = ".atlas_cloud_identifier"

// Revision types, as the Atlas CLI records them (ariga.io/atlas/sql/migrate.RevisionType).
const (
	revisionTypeBaseline = 1 << 0
	revisionTypeExecute  = 1 << 1
)

// The revisions table with the column layout the Atlas CLI creates (its ent schema
// cmd/atlas/internal/migrate/ent/schema/revision.go, rendered per dialect), so that the CLI finds nothing to change.
const (
	revisionsDDLPostgres = `CREATE TABLE IF NOT EXISTS atlas_schema_revisions (
    version          character varying NOT NULL,
    description      character varying NOT NULL,
    type             bigint            NOT NULL DEFAULT 2,
    applied          bigint            NOT NULL DEFAULT 0,
    total            bigint            NOT NULL DEFAULT 0,
    executed_at      timestamptz       NOT NULL,
    execution_time   bigint            NOT NULL,
    error            text              NULL,
    error_stmt       text              NULL,
    hash             character varying NOT NULL,
    partial_hashes   jsonb             NULL,
    operator_version character varying NOT NULL,
    PRIMARY KEY (version)
)`
	// executed_at is always written explicitly: on MariaDB < 10.10 (explicit_defaults_for_timestamp=OFF) the first
	// TIMESTAMP NOT NULL column silently gets ON UPDATE CURRENT_TIMESTAMP, which an explicit assignment suppresses.
	revisionsDDLMySQL = "CREATE TABLE IF NOT EXISTS `atlas_schema_revisions` (\n" +
		"    `version`          varchar(255)    NOT NULL,\n" +
		"    `description`      varchar(255)    NOT NULL,\n" +
		"    `type`             bigint unsigned NOT NULL DEFAULT 2,\n" +
		"    `applied`          bigint          NOT NULL DEFAULT 0,\n" +
		"    `total`            bigint          NOT NULL DEFAULT 0,\n" +
		"    `executed_at`      timestamp       NOT NULL,\n" +
		"    `execution_time`   bigint          NOT NULL,\n" +
		"    `error`            longtext        NULL,\n" +
		"    `error_stmt`       longtext        NULL,\n" +
		"    `hash`             varchar(255)    NOT NULL,\n" +
		"    `partial_hashes`   json            NULL,\n" +
		"    `operator_version` varchar(255)    NOT NULL,\n" +
		"    PRIMARY KEY (`version`)\n" +
		") CHARSET utf8mb4 COLLATE utf8mb4_bin"
	revisionsDDLSQLite = "CREATE TABLE IF NOT EXISTS `atlas_schema_revisions` (\n" +
		"    `version`          text     NOT NULL,\n" +
		"    `description`      text     NOT NULL,\n" +
		"    `type`             integer  NOT NULL DEFAULT (2),\n" +
		"    `applied`          integer  NOT NULL DEFAULT (0),\n" +
		"    `total`            integer  NOT NULL DEFAULT (0),\n" +
		"    `executed_at`      datetime NOT NULL,\n" +
		"    `execution_time`   integer  NOT NULL,\n" +
		"    `error`            text     NULL,\n" +
		"    `error_stmt`       text     NULL,\n" +
		"    `hash`             text     NOT NULL,\n" +
		"    `partial_hashes`   json     NULL,\n" +
		"    `operator_version` text     NOT NULL,\n" +
		"    PRIMARY KEY (`version`)\n" +
		")"
)

// Whether the revisions table exists in the connected schema.
const (
	// pg_class, unlike information_schema, lists tables the role has no privilege on.
	revisionsExistPostgres = `SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relname = 'atlas_schema_revisions' AND c.relkind IN ('r', 'p')`
	revisionsExistMySQL  = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'atlas_schema_revisions'`
	revisionsExistSQLite = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'atlas_schema_revisions'`
)

const (
	revisionsSelect = `SELECT version, description, type, applied, total, error, error_stmt, hash, partial_hashes
FROM atlas_schema_revisions WHERE version <> '` + atlasCloudIdentifier + `' ORDER BY version`
	revisionInsert = `INSERT INTO atlas_schema_revisions
(version, description, type, applied, total, executed_at, execution_time, error, error_stmt, hash, partial_hashes, operator_version)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// executed_at keeps the start of the first attempt (the Atlas CLI never updates it) but is assigned anyway; see
	// revisionsDDLMySQL.
	revisionUpdate = `UPDATE atlas_schema_revisions
SET applied = ?, total = ?, executed_at = executed_at, execution_time = ?, error = ?, error_stmt = ?, hash = ?,
    partial_hashes = ?, operator_version = ?
WHERE version = ?`
)

// Revision is one row of atlas_schema_revisions.
type Revision struct {
	Version       string
	Description   string
	Type          int64
	Applied       int
	Total         int
	Error         string
	ErrorStmt     string
	Hash          string
	PartialHashes []string

	executedAt time.Time
	execTime   time.Duration
}

// Name is the migration file name of the revision.
func (r Revision) Name() string { return fileName(r.Version, r.Description) }

// Complete reports whether every statement of the revision was applied (a baseline revision counts as complete).
func (r Revision) Complete() bool { return r.Applied >= r.Total }

// execQuerier is a *sql.DB or a *sql.Tx.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// revisions reads and writes atlas_schema_revisions of one engine.
type revisions struct {
	engine   db.Engine
	operator string
}

func (r revisions) createTable(ctx context.Context, q execQuerier) error {
	ddl := map[db.Engine]string{
		db.EnginePostgres: revisionsDDLPostgres,
		db.EngineMySQL:    revisionsDDLMySQL,
		db.EngineSQLite:   revisionsDDLSQLite,
	}[r.engine]
	if _, err := q.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("migrate: create %s: %w", RevisionsTable, err)
	}
	return nil
}

func (r revisions) tableExists(ctx context.Context, q execQuerier) (bool, error) {
	query := map[db.Engine]string{
		db.EnginePostgres: revisionsExistPostgres,
		db.EngineMySQL:    revisionsExistMySQL,
		db.EngineSQLite:   revisionsExistSQLite,
	}[r.engine]
	var n int64
	if err := q.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return false, fmt.Errorf("migrate: look up %s: %w", RevisionsTable, err)
	}
	return n > 0, nil
}

// read returns every revision ordered by version.
func (r revisions) read(ctx context.Context, q execQuerier) ([]Revision, error) {
	rows, err := q.QueryContext(ctx, revisionsSelect)
	if err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", RevisionsTable, err)
	}
	defer rows.Close()
	var revs []Revision
	for rows.Next() {
		var (
			rev                       Revision
			applied, total            int64
			errText, errStmt, partial sql.NullString
		)
		if err := rows.Scan(&rev.Version, &rev.Description, &rev.Type, &applied, &total, &errText, &errStmt,
			&rev.Hash, &partial); err != nil {
			return nil, fmt.Errorf("migrate: read %s: %w", RevisionsTable, err)
		}
		rev.Applied, rev.Total = int(applied), int(total)
		rev.Error, rev.ErrorStmt = errText.String, errStmt.String
		if partial.Valid && partial.String != "" && partial.String != "null" {
			if err := json.Unmarshal([]byte(partial.String), &rev.PartialHashes); err != nil {
				return nil, fmt.Errorf("migrate: revision %s: partial_hashes: %w", rev.Version, err)
			}
		}
		revs = append(revs, rev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("migrate: read %s: %w", RevisionsTable, err)
	}
	return revs, nil
}

// insert records a revision that is about to run. The primary key makes it a claim on the version.
func (r revisions) insert(ctx context.Context, q execQuerier, rev *Revision) error {
	rev.executedAt = clock.Now().UTC().Truncate(time.Microsecond)
	partial, err := partialHashesArg(rev.PartialHashes)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, r.rebind(revisionInsert), rev.Version, rev.Description, rev.Type, rev.Applied,
		rev.Total, r.timeArg(rev.executedAt), int64(clock.Since(rev.executedAt)), nullString(rev.Error),
		nullString(rev.ErrorStmt), rev.Hash, partial, r.operator)
	if err != nil {
		return fmt.Errorf("migrate: record revision %s (is another `server migrate` running? rerun when it has "+
			"finished): %w", rev.Version, err)
	}
	return nil
}

// update writes the progress of a revision.
func (r revisions) update(ctx context.Context, q execQuerier, rev *Revision) error {
	partial, err := partialHashesArg(rev.PartialHashes)
	if err != nil {
		return err
	}
	if !rev.executedAt.IsZero() {
		rev.execTime = clock.Since(rev.executedAt)
	}
	_, err = q.ExecContext(ctx, r.rebind(revisionUpdate), rev.Applied, rev.Total, int64(rev.execTime),
		nullString(rev.Error), nullString(rev.ErrorStmt), rev.Hash, partial, r.operator, rev.Version)
	if err != nil {
		return fmt.Errorf("migrate: record revision %s: %w", rev.Version, err)
	}
	return nil
}

// rebind turns ? placeholders into $n for PostgreSQL. The statements above contain no other question marks.
func (r revisions) rebind(query string) string {
	if r.engine != db.EnginePostgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// timeArg encodes executed_at. SQLite stores it as text in the format the Atlas CLI's driver writes and reads.
func (r revisions) timeArg(t time.Time) any {
	if r.engine == db.EngineSQLite {
		return t.Format("2006-01-02 15:04:05.999999999-07:00")
	}
	return t
}

func partialHashesArg(h []string) (any, error) {
	if len(h) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
