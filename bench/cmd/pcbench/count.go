package main

import (
	"context"
	"database/sql/driver"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// counter counts database round trips through a driver hook (B4).
//
//   - pgx (PostgreSQL): a QueryTracer on the pool's connection config sees every Query/QueryRow/Exec, including the
//     BEGIN and COMMIT a pgx.Tx sends; a BatchTracer counts one round trip per pipelined batch; a PrepareTracer
//     counts explicit prepares (after warm-up the statement cache answers, so none are expected).
//   - database/sql (MariaDB, SQLite): the driver.Connector is wrapped so every driver.Conn counts Exec, Query,
//     Prepare, Begin, Commit and Rollback (one round trip each; go-sql-driver interpolates parameters, so an Exec is
//     one COM_QUERY). Session setup statements run inside the wrapped connector when a connection is opened and
//     are not counted (they are per connection, not per item).
type counter struct {
	roundTrips atomic.Int64
	prepares   atomic.Int64
	stmts      stmtStats // with -statements: per statement (database/sql only)
}

func (c *counter) load() int64 { return c.roundTrips.Load() }

// pgx tracers.

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *counter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.prepares.Add(1)
	return ctx
}

func (c *counter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// database/sql wrappers.

func (c *counter) wrapConnector(base driver.Connector) driver.Connector {
	return &countingConnector{base: base, c: c}
}

type countingConnector struct {
	base driver.Connector
	c    *counter
}

func (cc *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := cc.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: cc.c}, nil
}

func (cc *countingConnector) Driver() driver.Driver { return cc.base.Driver() }

// countingConn delegates every optional interface database/sql looks for, so wrapping never changes the path a
// statement takes (a missing ExecerContext would turn every Exec into Prepare+Exec+Close).
type countingConn struct {
	driver.Conn
	c *counter
}

func (w *countingConn) Prepare(query string) (driver.Stmt, error) {
	return w.PrepareContext(context.Background(), query)
}

func (w *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	w.c.roundTrips.Add(1)
	w.c.prepares.Add(1)
	var (
		st  driver.Stmt
		err error
	)
	if p, ok := w.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = w.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &countingStmt{Stmt: st, c: w.c}, nil
}

func (w *countingConn) Begin() (driver.Tx, error) { //nolint:staticcheck // required by driver.Conn
	return w.BeginTx(context.Background(), driver.TxOptions{})
}

func (w *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	w.c.roundTrips.Add(1)
	var (
		tx  driver.Tx
		err error
	)
	if b, ok := w.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = w.Conn.Begin() //nolint:staticcheck // fallback of database/sql itself
	}
	if err != nil {
		return nil, err
	}
	return &countingTx{Tx: tx, c: w.c}, nil
}

func (w *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := w.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	start := time.Now()
	res, err := e.ExecContext(ctx, query, args)
	if err != driver.ErrSkip {
		w.c.roundTrips.Add(1)
		if profileStatements {
			w.c.stmts.record(query, time.Since(start))
		}
	}
	return res, err
}

func (w *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := w.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	start := time.Now()
	rows, err := q.QueryContext(ctx, query, args)
	if err != driver.ErrSkip {
		w.c.roundTrips.Add(1)
		if profileStatements {
			w.c.stmts.record(query, time.Since(start))
		}
	}
	return rows, err
}

func (w *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := w.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (w *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := w.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (w *countingConn) IsValid() bool {
	if v, ok := w.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (w *countingConn) Ping(ctx context.Context) error {
	if p, ok := w.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

type countingTx struct {
	driver.Tx
	c *counter
}

func (t *countingTx) Commit() error {
	t.c.roundTrips.Add(1)
	return t.Tx.Commit()
}

func (t *countingTx) Rollback() error {
	t.c.roundTrips.Add(1)
	return t.Tx.Rollback()
}

type countingStmt struct {
	driver.Stmt
	c *counter
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.roundTrips.Add(1)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return s.Stmt.Exec(values(args)) //nolint:staticcheck // fallback of database/sql itself
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.roundTrips.Add(1)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return s.Stmt.Query(values(args)) //nolint:staticcheck // fallback of database/sql itself
}

func (s *countingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func values(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
