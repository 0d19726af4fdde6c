package main

import (
	"context"
	"database/sql"
	"time"

	"github.com/powercontext/powercontext/db"
)

// rowReader reads a cumulative count of rows written (inserted + updated + deleted).
type rowReader func(context.Context) (int64, error)

// pgRowsWritten sums n_tup_ins + n_tup_upd + n_tup_del over the tables of schema in pg_stat_user_tables (the
// database conn is connected to), leaving out the migration bookkeeping tables (their rows come from setup, not from
// the workload). PostgreSQL 15's cumulative statistics reach shared memory when a backend flushes them: at the end of
// a transaction no more often than once a second, after 10 s idle, and when the backend exits; so read it after every
// pool of the run has been closed, through settledRows.
func pgRowsWritten(conn *sql.DB, schema string) rowReader {
	return func(ctx context.Context) (int64, error) {
		var n int64
		err := conn.QueryRowContext(ctx, `SELECT COALESCE(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
			FROM pg_stat_user_tables WHERE schemaname = $1 AND relname NOT LIKE '%migration%'`, schema).Scan(&n)
		return n, err
	}
}

// mysqlRowsWritten sums the server-wide Handler_write + Handler_update + Handler_delete (SHOW GLOBAL STATUS): every
// session of the server counts, internal temporary tables included, so other clients during the run inflate it.
func mysqlRowsWritten(conn *sql.DB) rowReader {
	return func(ctx context.Context) (int64, error) {
		var n int64
		err := conn.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(VARIABLE_VALUE), 0) AS SIGNED) FROM information_schema.GLOBAL_STATUS
			WHERE VARIABLE_NAME IN ('HANDLER_WRITE', 'HANDLER_UPDATE', 'HANDLER_DELETE')`).Scan(&n)
		return n, err
	}
}

// ledgerRows is the row counter of a ledger run's database (nil on SQLite: not measured).
func ledgerRows(srv *servers, b *benchDB) rowReader {
	switch b.engine {
	case db.EnginePostgres:
		return pgRowsWritten(srv.pgAdmin, b.name)
	case db.EngineMySQL:
		return mysqlRowsWritten(srv.mysqlAdmin)
	}
	return nil
}

// settledRows reads r once the statistics have settled: it asks this backend to flush its own pending statistics
// (pg_stat_force_next_flush on PostgreSQL), then reads every 250 ms until two reads in a row agree, at least 500 ms
// after it was called and at most 15 s (beyond PostgreSQL's 10 s idle flush).
func settledRows(ctx context.Context, r rowReader, pg *sql.DB) (int64, error) {
	if pg != nil {
		_, _ = pg.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`)
	}
	start := time.Now()
	prev := int64(-1)
	for {
		n, err := r(ctx)
		if err != nil {
			return 0, err
		}
		if (n == prev && time.Since(start) >= 500*time.Millisecond) || time.Since(start) > 15*time.Second {
			return n, nil
		}
		prev = n
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
