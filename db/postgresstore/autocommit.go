package postgresstore

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/powercontext/powercontext/db"
)

// autocommit is the Store's statement executor outside transactions: the pool, plus the recovery the pool does not
// make. A pooled connection whose server went away while it sat idle (a database restart) is found out only when a
// statement is sent on it, and then every other idle connection died the same way. So a lost connection resets the
// pool, and a read-only statement is sent once more, on a fresh connection: it changes nothing however often it
// runs. A statement that writes is not sent again — whether it ran before the connection was lost cannot be known —
// and its caller gets db.ErrUnavailable as before; the next statement finds a fresh pool. (Transactions recover in
// lazyTx.send, whose first batch cannot have applied anything.) Without this, the first read after a restart that
// no request had touched during the outage answered 503 although the database was back.
type autocommit struct{ pool *pgxpool.Pool }

var _ interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
} = autocommit{}

func (a autocommit) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := a.pool.Exec(ctx, sql, args...)
	if a.again(ctx, sql, err) {
		return a.pool.Exec(ctx, sql, args...)
	}
	return tag, err
}

func (a autocommit) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := a.pool.Query(ctx, sql, args...)
	if err != nil {
		if a.again(ctx, sql, err) {
			return a.pool.Query(ctx, sql, args...)
		}
		return nil, err
	}
	return &autocommitRows{Rows: rows, a: a, ctx: ctx, sql: sql, args: args}, nil
}

func (a autocommit) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return autocommitRow{a: a, ctx: ctx, sql: sql, args: args}
}

// again reports whether a statement that failed with err should be sent once more; a lost connection resets the
// pool first, whatever the answer. A connection that could not even be made (the server is down) is not retried.
func (a autocommit) again(ctx context.Context, sql string, err error) bool {
	var connErr *pgconn.ConnectError
	if err == nil || ctx.Err() != nil || errors.As(err, &connErr) || !errors.Is(interpretError(err), db.ErrUnavailable) {
		return false
	}
	a.pool.Reset()
	return readOnly(sql)
}

// readOnly reports whether a generated statement is a plain SELECT (after sqlc's "-- name:" comment lines). The
// SELECTs of sql/queries/postgres read, or call pg_notify (a second wake-up is harmless) or set_config local to
// their own transaction; a data-modifying statement starts with INSERT, UPDATE, DELETE or WITH.
func readOnly(sql string) bool {
	s := strings.TrimSpace(sql)
	for strings.HasPrefix(s, "--") {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return false
		}
		s = strings.TrimSpace(s[i+1:])
	}
	return len(s) >= 6 && strings.EqualFold(s[:6], "select")
}

// autocommitRow runs its statement when scanned (as pgx's own Row does), once more on a lost connection.
type autocommitRow struct {
	a    autocommit
	ctx  context.Context
	sql  string
	args []any
}

func (r autocommitRow) Scan(dest ...any) error {
	err := r.a.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	if r.a.again(r.ctx, r.sql, err) {
		return r.a.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	}
	return err
}

// autocommitRows finds a lost connection at its first Next (pgx reads the answer there when the statement was
// already prepared on the connection) and then reads the answer of the statement sent once more.
type autocommitRows struct {
	pgx.Rows
	a       autocommit
	ctx     context.Context
	sql     string
	args    []any
	started bool
}

func (r *autocommitRows) Next() bool {
	if r.started {
		return r.Rows.Next()
	}
	r.started = true
	if r.Rows.Next() {
		return true
	}
	if !r.a.again(r.ctx, r.sql, r.Err()) {
		return false
	}
	rows, err := r.a.pool.Query(r.ctx, r.sql, r.args...)
	if err != nil {
		return false // Err still reports the lost connection
	}
	r.Close()
	r.Rows = rows
	return r.Rows.Next()
}
