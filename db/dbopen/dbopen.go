// Package dbopen opens a database URL with the adapter or driver of its engine. app uses it to wire the service
// and db/enginetest uses it in tests (so test support does not import app, which imports everything).
package dbopen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/postgresstore"
	"github.com/powercontext/powercontext/db/sqlitestore"
)

// Store opens the db.Store adapter of u's engine.
func Store(ctx context.Context, u dburl.URL) (db.Store, error) {
	switch u.Engine {
	case db.EnginePostgres:
		return postgresstore.Open(ctx, u.DSN)
	case db.EngineMySQL:
		return mysqlstore.Open(ctx, u.DSN)
	case db.EngineSQLite:
		return sqlitestore.Open(ctx, u.DSN)
	default:
		return nil, fmt.Errorf("dbopen: unsupported engine %q", u.Engine)
	}
}

// mysqlSessionSetup runs on every new MySQL/OceanBase connection of OpenSQLDB. SET SESSION TRANSACTION works on
// MySQL 8, MariaDB and OceanBase alike (the variable is transaction_isolation on MySQL 8 but tx_isolation on MariaDB).
var mysqlSessionSetup = []string{
	"SET SESSION time_zone = '+00:00'",
	"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
}

// sqliteBusyTimeoutMillis matches the adapter: how long a connection waits for another one's write lock.
const sqliteBusyTimeoutMillis = 5000

// SQLDB opens a plain database/sql pool on u (migrations and schema checks): pgx's stdlib driver for
// PostgreSQL; go-sql-driver for MySQL with parseTime, loc=UTC, a UTC session time zone and READ COMMITTED; modernc
// for SQLite with busy_timeout, WAL and BEGIN IMMEDIATE transactions. The pool is pinged before it is returned.
func SQLDB(ctx context.Context, u dburl.URL) (*sql.DB, error) {
	var (
		sqlDB *sql.DB
		err   error
	)
	switch u.Engine {
	case db.EnginePostgres:
		sqlDB, err = sql.Open("pgx", u.DSN)
	case db.EngineMySQL:
		sqlDB, err = openMySQL(u.DSN)
	case db.EngineSQLite:
		sqlDB, err = openSQLite(u.DSN)
	default:
		return nil, fmt.Errorf("dbopen: unsupported engine %q", u.Engine)
	}
	if err != nil {
		return nil, fmt.Errorf("dbopen: open %s: %w", u.Redacted, err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("dbopen: connect %s: %w", u.Redacted, err)
	}
	return sqlDB, nil
}

func openMySQL(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	base, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&sessionConnector{base: base, setup: mysqlSessionSetup}), nil
}

func openSQLite(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, err
	}
	params := url.Values{
		"_txlock": {"immediate"},
		"_pragma": {fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeoutMillis), "journal_mode(WAL)"},
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: params.Encode()}
	sqlDB, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	// One connection: SQLite has one writer, and migrations are sequential anyway.
	sqlDB.SetMaxOpenConns(1)
	return sqlDB, nil
}

// sessionConnector runs setup statements on every new connection.
type sessionConnector struct {
	base  driver.Connector
	setup []string
}

func (c *sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	execer, ok := conn.(driver.ExecerContext)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("dbopen: driver connection cannot execute statements")
	}
	for _, stmt := range c.setup {
		if _, err := execer.ExecContext(ctx, stmt, nil); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("dbopen: session setup: %w", err)
		}
	}
	return conn, nil
}

func (c *sessionConnector) Driver() driver.Driver { return c.base.Driver() }
