package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the admin pools

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dbopen"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/postgresstore"
	"github.com/powercontext/powercontext/db/sqlitestore"
)

// servers holds the admin connections that create and drop the benchmark's isolated databases: a fresh schema on
// PostgreSQL (selected with search_path), a fresh database on MariaDB/MySQL, a temporary file for SQLite.
type servers struct {
	pgDSN    string // postgres:// URL of an existing database
	mysqlDSN string // go-sql-driver DSN of an existing database
	tmpDir   string

	pgAdmin    *sql.DB
	mysqlAdmin *sql.DB
}

func newServers(ctx context.Context, pgDSN, mysqlDSN string) (*servers, error) {
	tmp, err := os.MkdirTemp("", "pcbench-")
	if err != nil {
		return nil, err
	}
	s := &servers{pgDSN: pgDSN, mysqlDSN: mysqlDSN, tmpDir: tmp}
	if pgDSN != "" {
		s.pgAdmin, err = postgresstore.OpenDB(ctx, pgDSN)
		if err != nil {
			return nil, fmt.Errorf("postgres admin connection: %w", err)
		}
	}
	if mysqlDSN != "" {
		s.mysqlAdmin, err = mysqlstore.OpenDB(ctx, mysqlDSN)
		if err != nil {
			return nil, fmt.Errorf("mysql admin connection: %w", err)
		}
	}
	return s, nil
}

func (s *servers) close() {
	if s.pgAdmin != nil {
		_ = s.pgAdmin.Close()
	}
	if s.mysqlAdmin != nil {
		_ = s.mysqlAdmin.Close()
	}
	_ = os.RemoveAll(s.tmpDir)
}

func (s *servers) has(e db.Engine) bool {
	switch e {
	case db.EnginePostgres:
		return s.pgAdmin != nil
	case db.EngineMySQL:
		return s.mysqlAdmin != nil
	}
	return true
}

func newName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s_%d_%s", prefix, time.Now().Unix(), hex.EncodeToString(b))
}

// benchDB is one fresh, migrated database.
type benchDB struct {
	engine db.Engine
	url    dburl.URL
	raw    string // the database URL (passed to B5's worker process)
	name   string // schema (postgres), database (mysql) or file path (sqlite)
	drop   func()
}

// createDB creates a fresh database on engine and applies the service's migrations to it.
func (s *servers) createDB(ctx context.Context, engine db.Engine) (*benchDB, error) {
	name := newName("pcb")
	var raw string
	b := &benchDB{engine: engine, name: name}
	switch engine {
	case db.EnginePostgres:
		if _, err := s.pgAdmin.ExecContext(ctx, `CREATE SCHEMA "`+name+`"`); err != nil {
			return nil, err
		}
		u, _ := url.Parse(s.pgDSN)
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		raw = u.String()
		b.drop = func() { _, _ = s.pgAdmin.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+name+`" CASCADE`) }
	case db.EngineMySQL:
		if _, err := s.mysqlAdmin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
			return nil, err
		}
		var err error
		if raw, err = mysqlstore.URLFromDSN(s.mysqlDSN, name); err != nil {
			return nil, err
		}
		b.drop = func() { _, _ = s.mysqlAdmin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`") }
	case db.EngineSQLite:
		dir := filepath.Join(s.tmpDir, name)
		path := filepath.Join(dir, "powercontext.db")
		raw = "sqlite://" + filepath.ToSlash(path)
		b.name = path
		b.drop = func() { _ = os.RemoveAll(dir) }
	default:
		return nil, fmt.Errorf("unknown engine %q", engine)
	}
	u, err := dburl.Parse(raw)
	if err != nil {
		b.drop()
		return nil, err
	}
	b.url = u
	b.raw = raw
	if err := migrateDB(ctx, u); err != nil {
		b.drop()
		return nil, err
	}
	return b, nil
}

func migrateDB(ctx context.Context, u dburl.URL) error {
	store, err := dbopen.Store(ctx, u)
	if err != nil {
		return err
	}
	defer store.Close()
	sqlDB, err := dbopen.SQLDB(ctx, u)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	if _, err := migrate.Apply(ctx, u.Engine, sqlDB, store, "pcbench"); err != nil {
		return fmt.Errorf("migrate %s: %w", u.Engine, err)
	}
	return nil
}

// storeOptions tune how openStore opens a store.
type storeOptions struct {
	maxConns int      // pool size (0 = the adapter's default)
	counter  *counter // counts round trips through a driver hook when set
}

// openStore opens the service's adapter for b, with an optional pool size and round-trip counter.
func openStore(ctx context.Context, b *benchDB, o storeOptions) (db.Store, error) {
	switch b.engine {
	case db.EnginePostgres:
		return postgresstore.Open(ctx, b.url.DSN, postgresstore.WithPoolConfig(func(cfg *pgxpool.Config) {
			if o.maxConns > 0 {
				cfg.MaxConns = int32(o.maxConns)
			}
			if o.counter != nil {
				cfg.ConnConfig.Tracer = o.counter
			}
		}))
	case db.EngineMySQL:
		var opts []mysqlstore.Option
		if o.counter != nil {
			opts = append(opts, mysqlstore.WithConnector(o.counter.wrapConnector))
		}
		dsn := b.url.DSN
		if o.maxConns > 0 {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + "pool_max_conns=" + strconv.Itoa(o.maxConns)
		}
		return mysqlstore.Open(ctx, dsn, opts...)
	case db.EngineSQLite:
		var opts []sqlitestore.Option
		if o.counter != nil {
			opts = append(opts, sqlitestore.WithConnector(o.counter.wrapConnector))
		}
		return sqlitestore.Open(ctx, b.url.DSN, opts...)
	}
	return nil, fmt.Errorf("unknown engine %q", b.engine)
}

// engineVersion asks the server (SELECT version()) or the embedded library (sqlite_version()).
func (s *servers) engineVersion(ctx context.Context, e db.Engine) string {
	var v string
	var err error
	switch e {
	case db.EnginePostgres:
		err = s.pgAdmin.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	case db.EngineMySQL:
		err = s.mysqlAdmin.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	case db.EngineSQLite:
		u, perr := dburl.Parse("sqlite://" + filepath.ToSlash(filepath.Join(s.tmpDir, "version.db")))
		if perr != nil {
			return "unknown"
		}
		sqlDB, oerr := dbopen.SQLDB(ctx, u)
		if oerr != nil {
			return "unknown"
		}
		defer sqlDB.Close()
		err = sqlDB.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
		v = "SQLite " + v + " (modernc.org/sqlite, embedded)"
	}
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if i := strings.Index(v, ", compiled by"); i > 0 {
		v = v[:i]
	}
	return v
}
