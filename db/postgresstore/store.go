// Package postgresstore is the PostgreSQL (pgx/v5) adapter of db.Store over the sqlc queries in
// sql/queries/postgres. Locking reads are SELECT ... FOR UPDATE; database time is clock_timestamp().
package postgresstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

var _ db.Store = (*Store)(nil)

// Store is a pgx connection pool plus the ledger and domain statements. Its embedded queries run in autocommit mode.
type Store struct {
	queries
	pool *pgxpool.Pool
}

// queries implements db.Queries over one pgx executor: the pool (autocommit) or a transaction. Its methods (one
// file per sql/queries/postgres file) call the generated statement and convert with package conv.
type queries struct {
	q  *postgresgen.Queries
	tx *lazyTx // the transaction inside InTx (composite steps pipeline on it); nil in autocommit mode
}

// errs interprets this engine's driver errors for the conv result helpers.
var errs = conv.Errors(interpretError)

// Option configures Open.
type Option func(*pgxpool.Config)

// WithPoolConfig lets the caller adjust the parsed pool configuration before the pool is created (for example a
// pgx QueryTracer that counts round trips in a benchmark, or the pool size).
func WithPoolConfig(fn func(*pgxpool.Config)) Option { return Option(fn) }

// Open connects to dsn (a pgx connection string or postgres:// URL; pool size and other pool settings as pgxpool
// reads them from the DSN, e.g. pool_max_conns) and checks the connection.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgresstore: parse dsn: %w", err)
	}
	for _, opt := range opts {
		opt(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgresstore: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgresstore: ping: %w", err)
	}
	return &Store{queries: queries{q: postgresgen.New(autocommit{pool})}, pool: pool}, nil
}

// Pool exposes the connection pool to test support and migrations.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Engine reports db.EnginePostgres.
func (s *Store) Engine() db.Engine { return db.EnginePostgres }

// SkipLocked reports true: PostgreSQL has FOR UPDATE SKIP LOCKED.
func (s *Store) SkipLocked() bool { return true }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// OpenDB opens a plain database/sql pool (pgx's stdlib driver) on dsn and checks the connection: the migration
// and schema-check connection of package migrate.
func OpenDB(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgresstore: parse dsn: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("postgresstore: ping: %w", err)
	}
	return sqlDB, nil
}

// DSNFromURL checks a postgres:// (or postgresql://) database URL and returns it as the DSN: pgx reads the URL
// syntax itself. Its errors never contain the password.
func DSNFromURL(raw string) (string, error) {
	if _, err := pgconn.ParseConfig(raw); err != nil {
		return "", err
	}
	return raw, nil
}

// interpretError maps driver errors onto the db sentinels: no rows → ErrNotFound; deadlock (40P01) and
// serialization failure (40001) → ErrDeadlock (wrapped, never retried); unique violation (23505) → ErrConflict; a
// connection that cannot be made or was lost, a connection exception (class 08), a server shutting down (57P01,
// 57P02) or still starting (57P03) → ErrUnavailable.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40P01", "40001":
			return fmt.Errorf("%w: %w", db.ErrDeadlock, err)
		case "23505":
			return fmt.Errorf("%w: %w", db.ErrConflict, err)
		case "57P01", "57P02", "57P03":
			return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
		}
		if strings.HasPrefix(pgErr.Code, "08") {
			return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
		}
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, pgconn.ErrConnClosed) || db.ConnectionLost(err) {
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	return err
}
