// Package sqlitestore is the embedded SQLite adapter (modernc.org/sqlite, no cgo) of the db.Store boundary.
//
// One database file, two connection pools:
//   - the writer: exactly one connection; every write and every InTx runs on it, and InTx begins with
//     BEGIN IMMEDIATE, so a ledger transaction holds the database write lock from its first statement. That is why
//     the "Lock" queries are plain SELECTs here: the write lock already serialises every ledger transaction.
//   - the reader: a few query_only connections for autocommitted reads on the Store (WAL lets them run beside the
//     writer).
//
// Times are INTEGER unix microseconds UTC; the database clock has millisecond resolution. A second process on the
// same file waits for the write lock: each BEGIN IMMEDIATE up to busy_timeout, and InTx asks again for up to
// writeLockWait before it fails with db.ErrDeadlock. A BEGIN that could not take the lock ran nothing, so asking
// again is safe; the transaction body itself is never retried.
package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// busyTimeoutMillis is how long a connection waits for a lock held by another connection or process.
const busyTimeoutMillis = 5000

// writeLockWait bounds how long InTx keeps asking for the write lock when another connection or process holds it.
// busy_timeout alone is not enough: SQLite's busy handler polls every 100 ms after the first quarter second, so a
// writer on a second pool (a second process, or a second Store on the same file) can miss every short gap between a
// busy pool's transactions for longer than busy_timeout on a loaded machine. That waiter is starved, not deadlocked.
const writeLockWait = 60 * time.Second

// readerConns is the size of the autocommitted read pool.
const readerConns = 4

// Store is the SQLite db.Store.
type Store struct {
	queries
	writer *sql.DB
	reader *sql.DB
	// lockWait is writeLockWait (a test shortens it to see the failure).
	lockWait time.Duration
	// busyRetries counts BEGINs refused as busy and asked again (a test waits for one).
	busyRetries atomic.Int64
}

var _ db.Store = (*Store)(nil)

// queries implements db.Queries over two sqlc handles: r for reads, w for writes. On the Store they are the reader
// and writer pools; inside InTx both are the transaction.
type queries struct {
	r  *sqlitegen.Queries
	w  *sqlitegen.Queries
	tx *sql.Tx // the transaction inside InTx (savepoints); nil on the Store
}

var _ db.Queries = (*queries)(nil)

// errs interprets this engine's driver errors for the conv result helpers.
var errs = conv.Errors(interpretError)

// Open opens (creating if missing) the database file at path and its parent directory. It does not apply the
// schema; migrations do.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	writer, err := openWriter(ctx, abs, opts)
	if err != nil {
		return nil, err
	}
	reader, err := openPool(fileDSN(abs, url.Values{
		"_pragma":     {busyPragma},
		"_query_only": {"1"},
	}), opts)
	if err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("sqlitestore: open reader: %w", err)
	}
	reader.SetMaxOpenConns(readerConns)
	reader.SetMaxIdleConns(readerConns)
	reader.SetConnMaxLifetime(0)
	if err := reader.PingContext(ctx); err != nil {
		_ = reader.Close()
		_ = writer.Close()
		return nil, fmt.Errorf("sqlitestore: connect reader: %w", interpretError(err))
	}

	return &Store{
		queries:  queries{r: sqlitegen.New(reader), w: sqlitegen.New(writer)},
		writer:   writer,
		reader:   reader,
		lockWait: writeLockWait,
	}, nil
}

// OpenDB opens the writer pool of Open without the Store around it: the migration and schema-check connection of
// package migrate (one connection, BEGIN IMMEDIATE transactions, the same pragmas).
func OpenDB(ctx context.Context, path string, opts ...Option) (*sql.DB, error) {
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	return openWriter(ctx, abs, opts)
}

// busyPragma makes every connection wait up to busyTimeoutMillis for a lock held by another one.
var busyPragma = fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis)

// absPath resolves path and creates its parent directory.
func absPath(path string) (string, error) {
	if path == "" {
		return "", errors.New("sqlitestore: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("sqlitestore: resolve path: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return "", fmt.Errorf("sqlitestore: create directory: %w", err)
	}
	return abs, nil
}

// openWriter opens the single-connection writer pool: BEGIN IMMEDIATE transactions, WAL, synchronous=NORMAL. Its
// first connection switches the file to WAL (persistent) before any reader opens it.
func openWriter(ctx context.Context, abs string, opts []Option) (*sql.DB, error) {
	writer, err := openPool(fileDSN(abs, url.Values{
		"_txlock": {"immediate"},
		"_pragma": {busyPragma, "journal_mode(WAL)", "synchronous(NORMAL)"},
	}), opts)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("sqlitestore: connect writer: %w", interpretError(err))
	}
	return writer, nil
}

// Option configures Open.
type Option func(driver.Connector) driver.Connector

// WithConnector wraps the driver connector of both pools (for example to count statements in a benchmark).
func WithConnector(wrap func(driver.Connector) driver.Connector) Option { return Option(wrap) }

// openPool opens a database/sql pool on dsn with modernc's driver, through the wrapped connector when opts are set.
func openPool(dsn string, opts []Option) (*sql.DB, error) {
	if len(opts) == 0 {
		return sql.Open("sqlite", dsn)
	}
	registered, err := sql.Open("sqlite", dsn) // does not connect; only resolves the registered driver
	if err != nil {
		return nil, err
	}
	var c driver.Connector = dsnConnector{dsn: dsn, drv: registered.Driver()}
	_ = registered.Close()
	for _, opt := range opts {
		c = opt(c)
	}
	return sql.OpenDB(c), nil
}

// dsnConnector is the driver.Connector modernc's driver does not provide.
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }

func (c dsnConnector) Driver() driver.Driver { return c.drv }

// fileDSN builds modernc's URI DSN: file:///abs/path?params. The path is percent-escaped (SQLite decodes it);
// SQLite ignores the driver's underscore parameters, which modernc applies itself.
func fileDSN(absPath string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(absPath), RawQuery: params.Encode()}
	return u.String()
}

// Engine reports db.EngineSQLite.
func (s *Store) Engine() db.Engine { return db.EngineSQLite }

// Close closes both pools.
func (s *Store) Close() error {
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// SkipLocked reports true: inside BEGIN IMMEDIATE no other transaction ever holds a row, so nothing is skipped.
func (s *Store) SkipLocked() bool { return true }

// InTx runs fn in one BEGIN IMMEDIATE transaction on the writer connection, commits, and rolls back on error or
// panic. Only a BEGIN refused as busy is asked again (begin); fn runs at most once. fn must use q, not the Store: a write on the Store from inside fn would wait for the
// single writer connection that fn's transaction holds.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (err error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	gq := sqlitegen.New(tx)
	if err := fn(ctx, &queries{r: gq, w: gq, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return interpretError(err)
	}
	committed = true
	return nil
}

// begin starts a BEGIN IMMEDIATE transaction on the writer, asking again after a short random pause while the
// write lock is busy, for up to s.lockWait; then the busy error is returned as db.ErrDeadlock.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	start := time.Now()
	for {
		tx, err := s.writer.BeginTx(ctx, nil)
		if err == nil {
			return tx, nil
		}
		if !isBusy(err) || time.Since(start) >= s.lockWait {
			return nil, interpretError(err)
		}
		s.busyRetries.Add(1)
		pause := time.NewTimer(time.Duration(1+rand.IntN(4)) * time.Millisecond)
		select {
		case <-ctx.Done():
			pause.Stop()
			return nil, interpretError(err)
		case <-pause.C:
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// interpretError maps driver errors to the db sentinels: no rows → ErrNotFound; SQLITE_BUSY/SQLITE_LOCKED (after
// busy_timeout) → ErrDeadlock; UNIQUE/PRIMARY KEY violations → ErrConflict. Others pass through.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return db.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %w", db.ErrDeadlock, err)
		case sqlite3.SQLITE_CONSTRAINT:
			if se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
				return fmt.Errorf("%w: %w", db.ErrConflict, err)
			}
		}
	}
	return err
}
