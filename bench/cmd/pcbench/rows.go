package main

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
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

// tableWrites is one table's share of the rows written in a run, per item: inserted, updated (hot of them as heap-only
// tuple updates, which write no index entry), deleted.
type tableWrites struct {
	table              string
	ins, upd, hot, del float64
}

// pgTableWrites reads pg_stat_user_tables per table of schema (the same tables as pgRowsWritten), as cumulative counts.
func pgTableWrites(ctx context.Context, conn *sql.DB, schema string) (map[string][4]int64, error) {
	rs, err := conn.QueryContext(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
		FROM pg_stat_user_tables WHERE schemaname = $1 AND relname NOT LIKE '%migration%'`, schema)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string][4]int64{}
	for rs.Next() {
		var name string
		var c [4]int64
		if err := rs.Scan(&name, &c[0], &c[1], &c[2], &c[3]); err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, rs.Err()
}

// perItemWrites turns two pgTableWrites snapshots into per-item figures, tables that wrote nothing left out, sorted
// by name.
func perItemWrites(before, after map[string][4]int64, n int) []tableWrites {
	var out []tableWrites
	for name, a := range after {
		b := before[name]
		d := [4]float64{}
		sum := 0.0
		for i := range d {
			d[i] = float64(a[i]-b[i]) / float64(n)
			sum += d[i]
		}
		if sum == 0 {
			continue
		}
		out = append(out, tableWrites{table: name, ins: d[0], upd: d[1], hot: d[2], del: d[3]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].table < out[j].table })
	return out
}

// writesSummary prints per-item writes as "table ins/upd(hot)/del" for the B1 summary line.
func writesSummary(ws []tableWrites) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s %.2f/%.2f(%.2f HOT)/%.2f", strings.TrimPrefix(w.table, "pc_"), w.ins, w.upd, w.hot, w.del))
	}
	return strings.Join(parts, ", ")
}
