// Package postgresstore is the PostgreSQL (pgx/v5) adapter of db.Store over the sqlc queries in
// sql/queries/postgres. Locking reads are SELECT ... FOR UPDATE; database time is clock_timestamp().
package postgresstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

var _ db.Store = (*Store)(nil)

// Store is a pgx connection pool plus the ledger and domain statements. Its embedded queries run in autocommit mode.
type Store struct {
	queries
	pool *pgxpool.Pool
}

// queries implements db.Queries over one pgx executor: the pool (autocommit) or a transaction.
type queries struct {
	q *postgresgen.Queries
}

// Option configures Open.
type Option func(*pgxpool.Config)

// WithPoolConfig lets the caller adjust the parsed pool configuration before the pool is created (for example a
// pgx QueryTracer that counts round trips in a benchmark, or the pool size).
func WithPoolConfig(fn func(*pgxpool.Config)) Option { return Option(fn) }

// Open connects to dsn (a pgx connection string or postgres:// URL) and checks the connection.
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
	return &Store{queries: queries{q: postgresgen.New(pool)}, pool: pool}, nil
}

// Pool exposes the connection pool to test support and migrations.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Engine reports db.EnginePostgres.
func (s *Store) Engine() db.Engine { return db.EnginePostgres }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// interpretError maps driver errors onto the db sentinels: no rows → ErrNotFound; deadlock (40P01) and
// serialization failure (40001) → ErrDeadlock (wrapped, never retried); unique violation (23505) → ErrConflict.
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
		}
	}
	return err
}

// Conversions between neutral zero values and SQL NULL. Times are written in UTC truncated to the microsecond and
// read back in UTC.

func toTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func fromTime(t time.Time) time.Time { return t.UTC() }

func toTimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	v := toTime(t)
	return &v
}

func fromTimePtr(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func toTextPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func fromTextPtr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func toSeqPtr(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func fromSeqPtr(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// rowsOrNotFound turns a single-row update that matched nothing into db.ErrNotFound.
func rowsOrNotFound(rows int64, err error) error {
	if err != nil {
		return interpretError(err)
	}
	if rows == 0 {
		return db.ErrNotFound
	}
	return nil
}
