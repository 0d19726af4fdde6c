package postgresstore_test

import (
	"context"
	"strings"
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
	s, admin := openNoPing(t, u.DSN, 4), adminConn(t, u.DSN)

	for round := range 3 {
		endPooledConnections(t, s, admin)
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

// endPooledConnections opens the pool's connections, puts them back idle and has the server end them (as a
// database restart does), waiting until their server processes are gone. It takes every connection the pool may
// open (four or one here).
func endPooledConnections(t *testing.T, s *postgresstore.Store, admin *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	var pids []uint32
	var held []*pgxpool.Conn
	for range s.Pool().Config().MaxConns {
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
}

// TestAutocommitReadsSurviveDeadPooledConnections: outside transactions too, a statement that finds its pooled
// connection ended resets the pool. A read (one row, several rows) is sent once more on a fresh connection and no
// caller sees an error; a write is not sent again (whether it ran cannot be known): its caller gets
// db.ErrUnavailable, it was not applied, and the next write runs on a fresh connection. The pool never pings here.
func TestAutocommitReadsSurviveDeadPooledConnections(t *testing.T) {
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EnginePostgres)
	s, admin := openNoPing(t, u.DSN, 4), adminConn(t, u.DSN)

	for round := range 2 {
		endPooledConnections(t, s, admin)
		for i := range 4 {
			now, err := s.DBNow(ctx)
			require.NoError(t, err, "round %d one-row read %d on a dead pooled connection", round, i)
			require.False(t, now.IsZero())
		}
		endPooledConnections(t, s, admin)
		for i := range 4 {
			_, err := s.WorkItemList(ctx, db.WorkItemListParams{Limit: 10})
			require.NoError(t, err, "round %d many-row read %d on a dead pooled connection", round, i)
		}
	}

	// A statement already prepared on the connection finds the loss only when its rows are read (the first Next).
	one := openNoPing(t, u.DSN, 1)
	for round := range 3 {
		_, err := one.WorkItemList(ctx, db.WorkItemListParams{Limit: 10}) // prepared on the one connection
		require.NoError(t, err)
		endPooledConnections(t, one, admin)
		_, err = one.WorkItemList(ctx, db.WorkItemListParams{Limit: 10})
		require.NoError(t, err, "round %d: a prepared many-row read on a dead pooled connection", round)
	}

	endPooledConnections(t, s, admin)
	lane := strings.Repeat("c", 64)
	_, err := s.WorkLaneInsertIfAbsent(ctx, lane)
	require.ErrorIs(t, err, db.ErrUnavailable, "a write on a dead connection is not sent again")
	inserted, err := s.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err, "the pool was reset: the next write runs on a fresh connection")
	require.True(t, inserted, "the refused write was not applied")
}

// openNoPing opens a store of maxConns connections whose pool never pings a connection before handing it out, so
// only the store's own recovery can save a statement sent on a dead one.
func openNoPing(t *testing.T, dsn string, maxConns int32) *postgresstore.Store {
	t.Helper()
	s, err := postgresstore.Open(context.Background(), dsn, postgresstore.WithPoolConfig(func(c *pgxpool.Config) {
		c.MaxConns = maxConns
		c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// adminConn is a connection of its own, for ending the pool's backends.
func adminConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}
