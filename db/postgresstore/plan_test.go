package postgresstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

// TestBatchGuardPlanReadsByPrimaryKey: the batch finish's guard (WorkItemAssertSucceededMany) reads the listed
// items and attempts by primary key in the generic plan of tables analyzed while empty, under the plan settings of
// the batch's transaction (WorkItemPinPlan). In B1 the plan cached while the items table was small read every
// succeeded item on every batch (docs/protocol.md#set-based-completion); written as a plain join, the statement
// plans here a full pass over pc_work_attempts' primary key, which this test refuses.
func TestBatchGuardPlanReadsByPrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EnginePostgres)
	conn, err := pgx.Connect(ctx, u.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "ANALYZE pc_work_items, pc_work_attempts")
	require.NoError(t, err)

	var rec sqlRecorder
	_ = postgresgen.New(&rec).WorkItemAssertSucceededMany(ctx, postgresgen.WorkItemAssertSucceededManyParams{})
	require.NotEmpty(t, rec.sql)
	for _, s := range []string{
		"SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off", "SET enable_bitmapscan = off",
		"PREPARE guard AS " + rec.sql,
	} {
		_, err := conn.Exec(ctx, s)
		require.NoError(t, err, s)
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE guard('{00000000-0000-0000-0000-000000000001}', '{1}')")
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")

	// Every scan node of the two tables carries an index condition (a lookup, not a pass over the table or index).
	scans := 0
	for i, l := range lines {
		if !strings.Contains(l, "Scan") || !strings.Contains(l, "pc_work_items") && !strings.Contains(l, "pc_work_attempts") {
			continue
		}
		scans++
		require.NotContains(t, l, "Seq Scan", "%s", plan)
		cond := false
		for _, next := range lines[i+1:] {
			if strings.Contains(next, "->") {
				break
			}
			cond = cond || (strings.Contains(next, "Index Cond: (") && strings.Contains(next, "work_id = "))
		}
		require.True(t, cond, "scan without a primary key condition: %s\n%s", strings.TrimSpace(l), plan)
	}
	require.Equal(t, 2, scans, "%s", plan)
}

// sqlRecorder is a postgresgen.DBTX that keeps the SQL of the statement it is given instead of running it.
type sqlRecorder struct{ sql string }

var errRecorded = errors.New("recorded")

func (r *sqlRecorder) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	r.sql = sql
	return pgconn.CommandTag{}, errRecorded
}

func (r *sqlRecorder) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errRecorded
}

func (r *sqlRecorder) QueryRow(context.Context, string, ...any) pgx.Row { return nil }
