package app

import (
	"context"
	"database/sql"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dbopen"
	"github.com/powercontext/powercontext/db/dburl"
)

// OpenStore opens the db.Store adapter of u's engine (PostgreSQL, MySQL/OceanBase or SQLite). app is the only
// production code that picks an engine.
func OpenStore(ctx context.Context, u dburl.URL) (db.Store, error) { return dbopen.Store(ctx, u) }

// OpenSQLDB opens a plain database/sql pool on u for migrations and schema checks, with the connection settings
// of u's adapter.
func OpenSQLDB(ctx context.Context, u dburl.URL) (*sql.DB, error) { return dbopen.SQLDB(ctx, u) }
