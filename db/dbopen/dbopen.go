// Package dbopen opens a database URL with the adapter of its engine. app uses it to wire the service and
// db/enginetest uses it in tests (so test support does not import app, which imports everything). The connection
// settings of each engine live in its adapter.
package dbopen

import (
	"context"
	"database/sql"
	"fmt"

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

// SQLDB opens a plain database/sql pool on u with the adapter's connection settings (migrations and schema
// checks). The pool is pinged before it is returned.
func SQLDB(ctx context.Context, u dburl.URL) (*sql.DB, error) {
	var (
		sqlDB *sql.DB
		err   error
	)
	switch u.Engine {
	case db.EnginePostgres:
		sqlDB, err = postgresstore.OpenDB(ctx, u.DSN)
	case db.EngineMySQL:
		sqlDB, err = mysqlstore.OpenDB(ctx, u.DSN)
	case db.EngineSQLite:
		sqlDB, err = sqlitestore.OpenDB(ctx, u.DSN)
	default:
		return nil, fmt.Errorf("dbopen: unsupported engine %q", u.Engine)
	}
	if err != nil {
		return nil, fmt.Errorf("dbopen: open %s: %w", u.Redacted, err)
	}
	return sqlDB, nil
}
