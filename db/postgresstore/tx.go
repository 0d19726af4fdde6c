package postgresstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

// beginSQL starts every transaction (what pgx's BeginTx sends for pgx.ReadCommitted).
const beginSQL = "begin isolation level read committed"

// InTx runs fn in one READ COMMITTED transaction and commits it; it rolls back when fn fails or panics.
// It never retries.
//
// The BEGIN is not a round trip of its own: it is pipelined (one pgx batch) with the transaction's first statement,
// which in the ledger is always a locking read, so a transaction costs its statements plus the COMMIT. A
// transaction in which fn runs no statement sends nothing at all.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, q db.Queries) error) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return interpretError(err)
	}
	tx := &lazyTx{conn: conn.Conn(), pc: conn, pool: s.pool}
	// Release destroys the connection instead of pooling it if a transaction is still open on it (a failed ROLLBACK)
	// or it was closed. tx.pc, not conn: a lost pooled connection is replaced before the first statement (send).
	defer func() { tx.pc.Release() }()
	committed := false
	ctx, notes := db.WithTxNotes(ctx) // wake-ups sent with the COMMIT (notify.go); End runs after the rollback below
	defer func() { notes.End(committed && err == nil) }()
	defer func() {
		if !committed && tx.begun {
			// Roll back even when ctx is already cancelled, so the connection returns to the pool clean.
			if _, rerr := tx.conn.Exec(context.WithoutCancel(ctx), "rollback"); rerr != nil {
				_ = tx.conn.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	if err := fn(ctx, queries{q: postgresgen.New(tx), tx: tx}); err != nil {
		return err
	}
	if !tx.begun && len(tx.atCommit) == 0 {
		committed = true
		return nil
	}
	tag, err := tx.commitNotifying(ctx, notes.Channels())
	if err != nil {
		return interpretError(err)
	}
	committed = true
	if tag.String() == "ROLLBACK" { // COMMIT of an aborted transaction
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// lazyTx is the postgresgen.DBTX of one transaction on one connection: its first statement is sent in one batch
// (one round trip) after the BEGIN; later statements run on the connection directly. Savepoint statements are not
// sent on their own either: they wait in pending and go in front of the next statement (or the COMMIT), in the
// same batch.
type lazyTx struct {
	conn    *pgx.Conn
	pc      *pgxpool.Conn // conn's pool handle (nil outside InTx: no replacement)
	pool    *pgxpool.Pool
	begun   bool
	pending []string
	// atCommit are statements queued to run in the COMMIT's batch, in front of it (WorkKeyItemInsertAtCommit).
	atCommit []func(q *postgresgen.Queries) error
}

// send sends b, whose first n statements are the prefix, and consumes the prefix's results. When b opens the
// transaction (begins) and the connection turns out lost — a pooled connection that died while idle, for example
// after the database restarted — nothing of the transaction can have been applied (an uncommitted transaction dies
// with its session), so the pool is reset (its other idle connections died the same way) and b is sent once more on
// a fresh connection; fn never sees the dead one. Any later failure is returned as it is.
func (t *lazyTx) send(ctx context.Context, b *pgx.Batch, n int, begins bool) (pgx.BatchResults, error) {
	br, err := t.sendOnce(ctx, b, n)
	if err == nil || !begins || t.pc == nil || ctx.Err() != nil || !errors.Is(interpretError(err), db.ErrUnavailable) {
		return br, err
	}
	again := &pgx.Batch{}
	for _, qq := range b.QueuedQueries {
		again.Queue(qq.SQL, qq.Arguments...)
	}
	_ = t.conn.Close(context.WithoutCancel(ctx)) // Release destroys it
	t.pool.Reset()
	pc, aerr := t.pool.Acquire(ctx)
	if aerr != nil {
		return nil, aerr
	}
	t.pc.Release()
	t.pc, t.conn = pc, pc.Conn()
	return t.sendOnce(ctx, again, n)
}

func (t *lazyTx) sendOnce(ctx context.Context, b *pgx.Batch, n int) (pgx.BatchResults, error) {
	br := t.conn.SendBatch(ctx, b)
	for range n {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	return br, nil
}

// prefix is what must precede the next statement: the BEGIN if the transaction has not started, then the pending
// savepoint statements. It empties pending.
func (t *lazyTx) prefix(b *pgx.Batch) int {
	n := 0
	if !t.begun {
		b.Queue(beginSQL)
		n++
	}
	for _, stmt := range t.pending {
		b.Queue(stmt)
		n++
	}
	t.pending = t.pending[:0]
	t.begun = true // from here on the transaction may be open: roll it back on failure
	return n
}

// direct reports whether the next statement can go to the connection as is (nothing must precede it).
func (t *lazyTx) direct() bool { return t.begun && len(t.pending) == 0 }

// first sends the prefix and the statement in one pipelined batch and consumes the prefix's results. The caller
// reads the statement's result from the returned batch and must close it.
func (t *lazyTx) first(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	begins := !t.begun
	n := t.prefix(b)
	b.Queue(sql, args...)
	return t.send(ctx, b, n, begins)
}

// commit sends the pending savepoint statements, if any, and the COMMIT in one batch.
func (t *lazyTx) commit(ctx context.Context) (pgconn.CommandTag, error) {
	if t.direct() {
		return t.conn.Exec(ctx, "commit")
	}
	br, err := t.first(ctx, "commit", nil)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.direct() {
		return t.conn.Exec(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.direct() {
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.direct() {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := t.Query(ctx, sql, args...)
	return &batchRow{rows: rows, err: err}
}

// batchRows closes the batch when the rows of its last statement are closed.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.err = r.br.Close()
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// batchRow is pgx.Row over batchRows, with QueryRow's semantics (pgx.ErrNoRows when there is no row).
type batchRow struct {
	rows pgx.Rows
	err  error
}

func (r *batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// errRecorded is what the recording executor answers: the statement was queued, not run.
var errRecorded = errors.New("postgresstore: statement recorded for a pipeline")

// recorder is a postgresgen.DBTX that queues every statement into a batch instead of running it.
type recorder struct{ b *pgx.Batch }

func (r recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.b.Queue(sql, args...)
	return pgconn.CommandTag{}, errRecorded
}

func (r recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.b.Queue(sql, args...)
	return nil, errRecorded
}

func (r recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.b.Queue(sql, args...)
	return errRow{errRecorded}
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// replayer is a postgresgen.DBTX that answers each statement with the next result of a sent batch, in order.
type replayer struct{ br pgx.BatchResults }

func (r replayer) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return r.br.Exec()
}

func (r replayer) Query(context.Context, string, ...any) (pgx.Rows, error) { return r.br.Query() }

func (r replayer) QueryRow(context.Context, string, ...any) pgx.Row { return r.br.QueryRow() }

// pipeline runs the steps — each exactly one generated statement — in one round trip: it runs every step against a
// recorder to collect the statements (and the BEGIN if the transaction has not started), sends them as one pgx
// batch, and runs every step again against the batch's results, so the generated code scans them as usual. The
// statements execute on the server one after the other, in order, inside the transaction: locks are taken in the
// steps' order exactly as if they were sent one by one. Each step's error is returned in steps order; a failed
// statement aborts the transaction, so the steps after it fail too.
func (t *lazyTx) pipeline(ctx context.Context, steps ...func(q *postgresgen.Queries) error) []error {
	b := &pgx.Batch{}
	begins := !t.begun
	n := t.prefix(b)
	rec := postgresgen.New(recorder{b})
	for _, step := range steps {
		_ = step(rec) // errRecorded: each step queues exactly its one statement
	}
	errs := make([]error, len(steps))
	br, err := t.send(ctx, b, n, begins)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	rep := postgresgen.New(replayer{br})
	for i, step := range steps {
		errs[i] = step(rep)
	}
	if err := br.Close(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// savepoint is db.Queries.Savepoint inside InTx: the SAVEPOINT, and the RELEASE after fn, are queued in pending, so
// they cost no round trip of their own; a failed fn costs one (ROLLBACK TO and RELEASE). When fn sent nothing,
// nothing is sent.
func (t *lazyTx) savepoint(ctx context.Context, q queries, fn func(ctx context.Context, q db.Queries) error) (error, error) {
	mark := len(t.pending)
	t.pending = append(t.pending, db.SavepointSQL)
	fnErr := fn(ctx, q)
	if len(t.pending) == mark+1 && t.pending[mark] == db.SavepointSQL {
		t.pending = t.pending[:mark] // fn sent no statement: no savepoint needed
		return fnErr, nil
	}
	if fnErr != nil {
		// Roll back at once, in one simple-protocol round trip: a failed statement leaves the transaction aborted,
		// and pgx cannot prepare (or deallocate) the next batch's statements until it is restored.
		if _, err := t.conn.Exec(ctx, db.RollbackSavepointSQL+"; "+db.ReleaseSavepointSQL); err != nil {
			return fnErr, interpretError(err)
		}
		return fnErr, nil
	}
	t.pending = append(t.pending, db.ReleaseSavepointSQL)
	return fnErr, nil
}

// oneShot runs the steps — each exactly one generated statement — as one whole transaction in one round trip: BEGIN,
// the steps and COMMIT in one pipelined batch, whose results the steps then read (as in pipeline). No Go code runs
// between the statements, so it fits a transaction whose statements do not depend on each other's answers. When a
// statement fails the transaction is rolled back and that error returned.
func (s *Store) oneShot(ctx context.Context, steps ...func(q *postgresgen.Queries) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return interpretError(err)
	}
	defer conn.Release() // destroyed instead of pooled if a transaction is still open on it
	b := &pgx.Batch{}
	b.Queue(beginSQL)
	rec := postgresgen.New(recorder{b})
	for _, step := range steps {
		_ = step(rec) // errRecorded: each step queues exactly its one statement
	}
	b.Queue("commit")
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	rep := postgresgen.New(replayer{br})
	for _, step := range steps {
		if err == nil {
			err = step(rep)
		}
	}
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	err = errors.Join(err, br.Close())
	if err != nil {
		// An aborted transaction may still be open; end it so the connection returns to the pool clean.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "rollback"); rerr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		return interpretError(err)
	}
	if tag.String() == "ROLLBACK" { // COMMIT of an aborted transaction
		return pgx.ErrTxCommitRollback
	}
	return nil
}
