// Package mysqlstore is the MySQL-mode adapter of db.Store (OceanBase 4.3.5 in production; MariaDB >= 10.6 and
// MySQL 8 as tested stand-ins). It runs the sqlc-generated queries of db/gen/mysqlgen over go-sql-driver/mysql.
//
// Every connection runs with time_zone '+00:00' and READ COMMITTED (set once per session when the connection is
// opened). Transactions run on a pool of their own whose sessions have autocommit off, so a transaction needs no
// START TRANSACTION (InTx). Affected-row counts are "rows matched" (CLIENT_FOUND_ROWS), as on
// PostgreSQL and SQLite, so a compare-and-set that writes unchanged values still reports one row. On OceanBase a
// "...Lock" method first runs the no-op "...Touch" update of the same row, so the server-side transaction and the
// row lock really start, and then the SELECT ... FOR UPDATE; on MariaDB and MySQL (InnoDB) the SELECT ... FOR
// UPDATE alone takes the lock and the touch is skipped (touch).
package mysqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// MySQL server error numbers interpreted by the adapter.
const (
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	errDeadlock          = 1213 // ER_LOCK_DEADLOCK
	errDupEntry          = 1062 // ER_DUP_ENTRY
	errDupEntryWithKeyNm = 1586 // ER_DUP_ENTRY_WITH_KEY_NAME
	errTooManyConns      = 1040 // ER_CON_COUNT_ERROR
	errServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	errConnectionKilled  = 1927 // ER_CONNECTION_KILLED (MariaDB)
)

// sessionSetup runs on every new connection. SET SESSION TRANSACTION works on MySQL 8, MariaDB and OceanBase,
// whereas the variable is named transaction_isolation on MySQL 8 and tx_isolation on MariaDB.
var sessionSetup = []string{
	"SET SESSION time_zone = '+00:00'",
	"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
}

// txSessionSetup runs on every new connection of the transaction pool (InTx): autocommit off, so a transaction
// starts with its first statement and needs no START TRANSACTION round trip.
var txSessionSetup = append(append([]string(nil), sessionSetup...), "SET SESSION autocommit = 0")

// The statements that end an InTx transaction, and how long a ROLLBACK may take once the caller's context has
// ended (it runs on a context without the caller's cancellation, so the transaction is ended either way).
const (
	commitSQL       = "COMMIT"
	rollbackSQL     = "ROLLBACK"
	rollbackTimeout = 10 * time.Second
)

// Store implements db.Store over two pools of the same size: sqlDB (autocommit on) runs single statements, txDB
// (autocommit off) runs InTx's transactions.
type Store struct {
	queries
	sqlDB *sql.DB
	txDB  *sql.DB
	// multi: the transaction pool sends multi-statements (parameters interpolated by the driver), so an enqueue's
	// writes go with the COMMIT (atcommit.go).
	multi bool
}

var _ db.Store = (*Store)(nil)

// Open connects with a go-sql-driver DSN such as "root@tcp(127.0.0.1:3306)/test" (see connector for the settings
// every connection gets). The pool is pinged once before Open returns.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	sqlDB, err := OpenDB(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	txDB, multi, err := openPool(ctx, dsn, txSessionSetup, true, opts)
	if err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	f, err := serverFlavor(ctx, sqlDB)
	if err != nil {
		_ = sqlDB.Close()
		_ = txDB.Close()
		return nil, err
	}
	return &Store{queries: queries{q: mysqlgen.New(sqlDB), flavor: f, byDue: &dueFirst{}}, sqlDB: sqlDB, txDB: txDB, multi: multi}, nil
}

// flavor is what the adapter needs to know of the server.
type flavor struct {
	// oceanBase: the server is OceanBase, whose locking reads need the no-op "...Touch" update first (touch).
	oceanBase bool
	// mariaDB: the server is MariaDB, the only one on which the folded statements of MariaDB-only queries were
	// tested (MySQL 8 keeps the statements they fold; see WorkItemUpdateStateFinishAttempt).
	mariaDB bool
	// perRow: run the set-based ledger methods as their per-row chains (db.Chain…), as on OceanBase; tests set it
	// to keep the chains checked on MariaDB.
	perRow bool
}

// chains reports whether the set-based methods run their per-row chains: on OceanBase, in tests that ask for it.
func (f flavor) chains() bool { return f.oceanBase || f.perRow }

// serverFlavor reads the server version once: OceanBase's MySQL mode reports e.g. "5.7.25-OceanBase-v4.3.5.0",
// MariaDB "10.11.6-MariaDB", MySQL "8.0.36".
func serverFlavor(ctx context.Context, sqlDB *sql.DB) (flavor, error) {
	var version string
	if err := sqlDB.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return flavor{}, fmt.Errorf("mysqlstore: server version: %w", interpretError(err))
	}
	v := strings.ToLower(version)
	return flavor{oceanBase: strings.Contains(v, "oceanbase"), mariaDB: strings.Contains(v, "mariadb")}, nil
}

// OpenDB opens the database/sql pool of Open without the Store around it: the migration and schema-check
// connection of package migrate, with the same session settings.
func OpenDB(ctx context.Context, dsn string, opts ...Option) (*sql.DB, error) {
	sqlDB, _, err := openPool(ctx, dsn, sessionSetup, false, opts)
	return sqlDB, err
}

// openPool opens a pool whose connections run setup when they are opened. With multi it also reports whether the
// pool sends multi-statements with parameters interpolated (what connector decided), which deferring an enqueue's
// writes to the COMMIT needs (atcommit.go).
func openPool(ctx context.Context, dsn string, setup []string, multi bool, opts []Option) (*sql.DB, bool, error) {
	dsn, maxConns, err := poolSize(dsn)
	if err != nil {
		return nil, false, err
	}
	c, cfg, err := connector(dsn, setup, multi)
	if err != nil {
		return nil, false, err
	}
	for _, opt := range opts {
		c = opt(c)
	}
	sqlDB := sql.OpenDB(c)
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, false, fmt.Errorf("mysqlstore: connect: %w", err)
	}
	return sqlDB, cfg.MultiStatements && cfg.InterpolateParams, nil
}

// connector parses dsn and forces what the adapter relies on: ParseTime with Loc=UTC, ClientFoundRows (rows
// matched, not changed), unless the DSN sets it InterpolateParams (one round trip per statement), and with multi
// MultiStatements (the transaction pool: an enqueue's writes go with the COMMIT, atcommit.go; every statement is
// sqlc's, its parameters escaped by the driver); every new connection then runs setup. It returns the
// configuration the connections use.
func connector(dsn string, setup []string, multi bool) (driver.Connector, *mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("mysqlstore: parse dsn: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.ClientFoundRows = true
	if !strings.Contains(dsn, "interpolateParams=") {
		cfg.InterpolateParams = true
	}
	cfg.MultiStatements = multi
	base, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("mysqlstore: connector: %w", err)
	}
	return &sessionConnector{base: base, setup: setup}, cfg, nil
}

// Option configures Open.
type Option func(driver.Connector) driver.Connector

// WithConnector wraps the pool's driver connector (for example to count round trips in a benchmark). The wrapped
// connector already runs the session setup.
func WithConnector(wrap func(driver.Connector) driver.Connector) Option { return Option(wrap) }

// DB returns the underlying pool (for migrations and tests).
func (s *Store) DB() *sql.DB { return s.sqlDB }

// Engine reports db.EngineMySQL.
func (s *Store) Engine() db.Engine { return db.EngineMySQL }

// SkipLocked reports whether the batched claim may use FOR UPDATE SKIP LOCKED: on MariaDB (>= 10.6, the supported
// floor) and MySQL 8, not on OceanBase (whose locking reads start with a no-op UPDATE, which would wait).
func (s *Store) SkipLocked() bool { return !s.flavor.oceanBase }

// Close closes both pools.
func (s *Store) Close() error { return errors.Join(s.sqlDB.Close(), s.txDB.Close()) }

// InTx runs fn in one READ COMMITTED transaction and commits it. The transaction runs on one connection of the
// transaction pool, whose session has autocommit off: fn's first statement starts it (no START TRANSACTION round
// trip, as with JDBC's setAutoCommit(false)) and COMMIT or ROLLBACK ends it (docs/protocol.md#round-trips). It rolls
// back when fn returns an error or panics, and never retries. A connection whose transaction could not be ended (a
// COMMIT or ROLLBACK that failed) is closed, never returned to the pool with a transaction open.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) error {
	conn, err := s.txDB.Conn(ctx)
	if err != nil {
		return interpretError(err)
	}
	ended := false
	defer func() {
		if !ended {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			_, err := conn.ExecContext(rctx, rollbackSQL)
			cancel()
			if err != nil {
				// Close the connection instead of pooling it (database/sql discards a connection on ErrBadConn).
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
		_ = conn.Close()
	}()
	q := queries{q: mysqlgen.New(conn), tx: conn, flavor: s.flavor, batch: &batchKeys{}, byDue: s.byDue}
	if s.multi {
		q.atCommit = &deferredWrites{}
	}
	if err := fn(ctx, q); err != nil {
		return err
	}
	if q.atCommit != nil && len(q.atCommit.query) > 0 {
		if err := commitDeferred(ctx, conn, q.atCommit); err != nil {
			return err
		}
		ended = true
		return nil
	}
	// A failed COMMIT leaves the transaction's fate to the server (a lost connection, or a context that ended while
	// it ran): the deferred ROLLBACK ends it if the session is still there.
	if _, err := conn.ExecContext(ctx, commitSQL); err != nil {
		return interpretError(err)
	}
	ended = true
	return nil
}

// queries implements db.Queries over one mysqlgen.Queries (the pool in autocommit mode, or a transaction). Its
// methods (one file per sql/queries/mysql file) call the generated statement and convert with package conv.
type queries struct {
	q      *mysqlgen.Queries
	tx     *sql.Conn // the connection of the transaction inside InTx (savepoints); nil in autocommit mode
	flavor flavor
	batch  *batchKeys // inside InTx: what the transaction's batch lock read (set.go)
	// byDue, shared by the store and its transactions: whether the next candidate query reads the due index first
	// (WorkItemClaimCandidates, work_item.go).
	byDue *dueFirst
	// atCommit, inside InTx when the pool can send multi-statements: the writes waiting for the COMMIT
	// (atcommit.go); nil otherwise, and inside a savepoint.
	atCommit *deferredWrites
}

// touch runs a locking read's no-op "...Touch" update on OceanBase, which starts the server-side transaction and
// the row lock only on a write (docs/protocol.md#engines). InnoDB (MariaDB, MySQL) locks on the SELECT ... FOR UPDATE
// itself, so there the touch is skipped: one round trip less per locking read, the same lock.
func touch[P any](ctx context.Context, q queries, fn func(context.Context, P) (int64, error), arg P) (int64, error) {
	if !q.flavor.oceanBase {
		return 0, nil
	}
	return fn(ctx, arg)
}

// errs interprets this engine's driver errors for the conv result helpers.
var errs = conv.Errors(interpretError)

// sessionConnector wraps the driver's connector so every new connection runs its setup statements.
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
		return nil, errors.New("mysqlstore: driver connection cannot execute statements")
	}
	for _, stmt := range c.setup {
		if _, err := execer.ExecContext(ctx, stmt, nil); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("mysqlstore: session setup: %w", err)
		}
	}
	return conn, nil
}

func (c *sessionConnector) Driver() driver.Driver { return c.base.Driver() }

// interpretError maps driver errors to the db sentinels: no rows → db.ErrNotFound; deadlock and lock wait timeout
// → db.ErrDeadlock (wrapped, never retried); duplicate key → db.ErrConflict (wrapped); a connection that cannot be
// made or was lost, a server shutting down, a killed connection or too many connections → db.ErrUnavailable.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return db.ErrNotFound
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errDeadlock, errLockWaitTimeout:
			return fmt.Errorf("%w: %w", db.ErrDeadlock, err)
		case errDupEntry, errDupEntryWithKeyNm:
			return fmt.Errorf("%w: %w", db.ErrConflict, err)
		case errTooManyConns, errServerShutdown, errConnectionKilled:
			return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
		}
	}
	if errors.Is(err, mysql.ErrInvalidConn) || db.ConnectionLost(err) {
		return fmt.Errorf("%w: %w", db.ErrUnavailable, err)
	}
	return err
}

// DefaultPoolMaxConns bounds a pool whose URL does not set pool_max_conns. database/sql's own default is no bound
// at all, so a burst of concurrent requests would open a connection each until the server refuses them (MariaDB's
// max_connections is 151) and every process sharing the server gets errors; with a bound, requests wait their turn.
const DefaultPoolMaxConns = 16

// poolSize takes the pool_max_conns parameter (the name pgx uses on PostgreSQL) out of dsn: go-sql-driver would send
// an unknown parameter to the server as a session variable. It returns the DSN without it and the bound.
func poolSize(dsn string) (string, int, error) {
	base, query, ok := strings.Cut(dsn, "?")
	if !ok {
		return dsn, DefaultPoolMaxConns, nil
	}
	n := DefaultPoolMaxConns
	var keep []string
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k != "pool_max_conns" {
			keep = append(keep, kv)
			continue
		}
		parsed, err := strconv.Atoi(v)
		if err != nil || parsed < 1 {
			return "", 0, errors.New("mysqlstore: pool_max_conns must be a whole number >= 1")
		}
		n = parsed
	}
	if len(keep) == 0 {
		return base, n, nil
	}
	return base + "?" + strings.Join(keep, "&"), n, nil
}
