package mysqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// An enqueue's writes with the COMMIT on MariaDB and MySQL 8 (docs/protocol.md#set-based-steps-in-mysql-mode):
// WorkKeyItemInsertAtCommit queues the key insert, the lane update and the item insert, and InTx sends them and the
// COMMIT as one multi-statement (the transaction pool's sessions allow them), so creating an item costs two round
// trips (the lane lock, then this) as on PostgreSQL. The statements are sqlc's, with their parameters interpolated
// by the driver, joined with ";". The key insert is a plain INSERT: an existing key fails it as a duplicate, the
// server runs nothing after it, and InTx commits what the transaction wrote before (nothing of the item) and
// reports the key as not inserted, so the enqueue joins it in a new transaction.

// A claim pass's writes wait for the COMMIT the same way (claimWrites in set.go), each followed by DBAssertRowCount,
// which fails the multi-statement before its COMMIT unless the write matched exactly the rows it must.

// deferredWrites are the statements waiting for the COMMIT: one WorkKeyItemInsertAtCommit, or a claim pass's writes
// with their guards.
type deferredWrites struct {
	query    []string
	args     []any
	workID   string // the new item, whose key row tells which statement a duplicate came from
	inserted *bool  // the caller's: set to false when the key existed; nil when no enqueue is deferred
}

// WorkKeyItemInsertAtCommit queues the writes of WorkKeyItemInsert for the COMMIT's round trip (see above). Outside
// a transaction, on OceanBase (no multi-statement tested there), with the per-row chains or without interpolated
// parameters it runs them at once (db.ChainWorkKeyItemInsertAtCommit). A second one in the transaction is
// db.ErrAtCommitTwice: run at once, it would write before the first.
func (q queries) WorkKeyItemInsertAtCommit(ctx context.Context, p db.WorkKeyItemInsertParams, inserted *bool) error {
	d := q.atCommit
	if d == nil || q.flavor.chains() {
		return db.ChainWorkKeyItemInsertAtCommit(ctx, q, p, inserted)
	}
	if d.inserted != nil {
		return db.ErrAtCommitTwice
	}
	g := mysqlgen.New(recorder{d})
	if err := g.WorkKeyInsert(ctx, mysqlgen.WorkKeyInsertParams{LogicalKey: p.Key.LogicalKey, WorkID: p.Key.WorkID,
		LaneKey: p.Key.LaneKey, CreatedAt: conv.TimeToGen[time.Time](p.Key.CreatedAt)}); err != nil {
		return err
	}
	if _, err := g.WorkLaneUpdate(ctx, conv.WorkLaneUpdateToGen[mysqlgen.WorkLaneUpdateParams](p.Lane)); err != nil {
		return err
	}
	if err := g.WorkItemInsert(ctx, conv.WorkItemToGen[mysqlgen.WorkItemInsertParams](p.Item)); err != nil {
		return err
	}
	d.workID, d.inserted = p.Key.WorkID, inserted
	return nil
}

// commitDeferred sends the queued writes and the COMMIT in one round trip. A failed DBAssertRowCount fails the
// transaction (the caller rolls back). For an enqueue, a duplicate whose key row is not this item's means the key
// existed: nothing of the item was written, so the transaction's earlier work is committed
// alone and the key reported as not inserted. Any other failure is returned (the caller rolls back).
func commitDeferred(ctx context.Context, conn *sql.Conn, d *deferredWrites) error {
	query := strings.Join(append(d.query, commitSQL), ";\n")
	_, err := conn.ExecContext(ctx, query, d.args...)
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errSubqueryRows {
		return fmt.Errorf("mysqlstore: a write waiting for the COMMIT matched other than the rows it must (DBAssertRowCount); nothing was committed: %w", err)
	}
	if err = interpretError(err); err == nil || !errors.Is(err, db.ErrConflict) || d.inserted == nil {
		return err
	}
	owners, rerr := mysqlgen.New(conn).WorkKeyListOwnersMany(ctx, []string{d.workID})
	if rerr != nil {
		return interpretError(rerr)
	}
	if len(owners) > 0 { // the key is this item's: a later statement collided
		return err
	}
	if _, err := conn.ExecContext(ctx, commitSQL); err != nil {
		return interpretError(err)
	}
	*d.inserted = false
	return nil
}

// errSubqueryRows is ER_SUBQUERY_NO_1_ROW ("Subquery returns more than 1 row"), the failure DBAssertRowCount raises.
const errSubqueryRows = 1242

// execMulti sends the statements d recorded as one multi-statement on the transaction's connection and returns the
// rows each matched (the driver's per-statement counts, which database/sql does not pass on: the statement goes to
// the driver connection directly, its parameters converted as database/sql would and interpolated by the driver).
// The first failing statement ends it; its error is returned, and the caller fails the transaction.
func execMulti(ctx context.Context, conn *sql.Conn, d *deferredWrites) ([]int64, error) {
	query := strings.Join(d.query, ";\n")
	var counts []int64
	err := conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("mysqlstore: the driver connection cannot execute statements")
		}
		args := make([]driver.NamedValue, len(d.args))
		for i, a := range d.args {
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return fmt.Errorf("mysqlstore: parameter %d: %w", i+1, err)
			}
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		res, err := ex.ExecContext(ctx, query, args)
		if err != nil {
			return err
		}
		all, ok := res.(mysql.Result)
		if !ok {
			return errors.New("mysqlstore: the driver reports no per-statement counts")
		}
		counts = all.AllRowsAffected()
		return nil
	})
	return counts, interpretError(err)
}

// recorder is a mysqlgen.DBTX that queues each Exec instead of running it. Only :exec and :execrows statements are
// queued; the rest is never called.
type recorder struct{ d *deferredWrites }

var errNotQueueable = errors.New("mysqlstore: only statements without results can wait for the COMMIT")

func (r recorder) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	r.d.query = append(r.d.query, strings.TrimRight(strings.TrimSpace(query), ";"))
	r.d.args = append(r.d.args, args...)
	return queuedResult{}, nil
}

func (recorder) PrepareContext(context.Context, string) (*sql.Stmt, error) {
	return nil, errNotQueueable
}

func (recorder) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errNotQueueable
}

func (recorder) QueryRowContext(context.Context, string, ...any) *sql.Row { return nil }

// queuedResult answers a queued statement as it will match when it runs: one row (the lane row is locked by the
// transaction; the key and item inserts fail the whole batch instead of matching nothing).
type queuedResult struct{}

func (queuedResult) LastInsertId() (int64, error) { return 0, nil }
func (queuedResult) RowsAffected() (int64, error) { return 1, nil }
