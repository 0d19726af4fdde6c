package postgresstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/postgresstore"
)

// TestTransactionsSurviveDeadPooledConnections: after the server ended every pooled connection while it was idle
// (as a database restart does), each transaction still runs: the first one finds its connection lost before
// anything was applied, resets the pool and runs on a fresh connection, and no caller sees an error. The pool
// never pings here, so only that replacement can save them.
func TestTransactionsSurviveDeadPooledConnections(t *testing.T) {
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EnginePostgres)
	s, err := postgresstore.Open(ctx, u.DSN, postgresstore.WithPoolConfig(func(c *pgxpool.Config) {
		c.MaxConns = 4
		c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	}))
	require.NoError(t, err)
	defer s.Close()
	admin, err := pgx.Connect(ctx, u.DSN)
	require.NoError(t, err)
	defer func() { _ = admin.Close(ctx) }()

	for round := range 3 {
		// Open four pooled connections, note their server processes, and put them back idle.
		var pids []uint32
		var held []*pgxpool.Conn
		for range 4 {
			c, err := s.Pool().Acquire(ctx)
			require.NoError(t, err)
			pids = append(pids, c.Conn().PgConn().PID())
			held = append(held, c)
		}
		for _, c := range held {
			c.Release()
		}
		for _, pid := range pids {
			_, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", int32(pid))
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&n))
			return n == 0
		}, 10*time.Second, 10*time.Millisecond)
		for i := range 4 {
			var now time.Time
			err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				var err error
				now, err = q.DBNow(ctx)
				return err
			})
			require.NoError(t, err, "round %d transaction %d on a dead pooled connection", round, i)
			require.False(t, now.IsZero())
		}
	}
}
