package postgresstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/postgresstore"
)

// roundTrips counts statements and pipelined batches (one round trip each).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestNotifyOnCommit: a transaction's notification is delivered when it commits, in the COMMIT's round trip, and
// never when it rolls back; the listener's connection is not one of the pool's.
func TestNotifyOnCommit(t *testing.T) {
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EnginePostgres)
	rt := &roundTrips{}
	s, err := postgresstore.Open(ctx, u.DSN, postgresstore.WithPoolConfig(func(c *pgxpool.Config) { c.ConnConfig.Tracer = rt }))
	require.NoError(t, err)
	defer s.Close()

	got := make(chan string, 16)
	connected := make(chan struct{}, 4)
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Listen(lctx, db.ListenHandlers{Connected: func() { connected <- struct{}{} }, Notified: func(ch, _ string) { got <- ch }})
	}()
	<-connected
	require.Zero(t, rt.n.Load(), "the listener does not use the pool (nor its tracer)")
	expect := func(want string) {
		t.Helper()
		select {
		case ch := <-got:
			require.Equal(t, want, ch)
		case <-time.After(5 * time.Second):
			t.Fatalf("no notification on %s", want)
		}
	}
	none := func() {
		t.Helper()
		select {
		case ch := <-got:
			t.Fatalf("unexpected notification on %s", ch)
		case <-time.After(300 * time.Millisecond):
		}
	}
	lane := "1111111111111111111111111111111111111111111111111111111111111111"
	_, err = s.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err)

	txn := func(notify bool, fail error) error {
		return s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLock(ctx, lane); err != nil {
				return err
			}
			if notify {
				require.True(t, db.Notifies(ctx))
				require.True(t, db.NotifyOnCommit(ctx, db.ChannelWorkEnqueued))
				require.True(t, db.NotifyOnCommit(ctx, db.ChannelWorkEnqueued)) // once per channel and transaction
			}
			return fail
		})
	}
	before := rt.n.Load()
	require.NoError(t, txn(false, nil))
	plain := rt.n.Load() - before
	before = rt.n.Load()
	require.NoError(t, txn(true, nil))
	require.Equal(t, plain, rt.n.Load()-before, "the notification rides in the COMMIT's round trip")
	expect(db.ChannelWorkEnqueued)
	none()

	boom := errors.New("boom")
	require.ErrorIs(t, txn(true, boom), boom)
	none()

	var ended []bool
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if _, _, err := q.WorkLaneLock(ctx, lane); err != nil {
			return err
		}
		db.NotifyOnCommit(ctx, db.ChannelWorkFinished)
		db.AfterTx(ctx, func(committed bool) { ended = append(ended, committed) })
		return nil
	}))
	expect(db.ChannelWorkFinished)
	_ = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		db.AfterTx(ctx, func(committed bool) { ended = append(ended, committed) })
		_, _, err := q.WorkLaneLock(ctx, lane)
		require.NoError(t, err)
		return boom
	})
	require.Equal(t, []bool{true, false}, ended)

	require.NoError(t, s.Notify(ctx, db.ChannelWorkEnqueued)) // autocommit
	expect(db.ChannelWorkEnqueued)
	require.False(t, db.Notifies(ctx), "outside InTx there is no transaction to notify with")
}

// TestNotificationsStayInTheirSchema: channels are database-wide, but a listener acts only on notifications sent
// from its own schema (the payload), so two deployments in one database — or parallel tests, which each get a
// schema — never wake each other. An empty payload (an older build's) is still taken.
func TestNotificationsStayInTheirSchema(t *testing.T) {
	ctx := context.Background()
	mine := enginetest.MigratedDatabase(t, db.EnginePostgres)
	other := enginetest.MigratedDatabase(t, db.EnginePostgres) // another schema of the same database
	s, err := postgresstore.Open(ctx, mine.DSN)
	require.NoError(t, err)
	defer s.Close()
	o, err := postgresstore.Open(ctx, other.DSN)
	require.NoError(t, err)
	defer o.Close()

	got := make(chan string, 16)
	connected := make(chan struct{}, 4)
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Listen(lctx, db.ListenHandlers{Connected: func() { connected <- struct{}{} },
			Notified: func(ch, payload string) { got <- ch + " " + payload }})
	}()
	<-connected

	require.NoError(t, o.Notify(ctx, db.ChannelWorkEnqueued)) // the other schema's: ignored
	admin, err := pgx.Connect(ctx, mine.DSN)
	require.NoError(t, err)
	defer func() { _ = admin.Close(ctx) }()
	_, err = admin.Exec(ctx, "SELECT pg_notify($1, '')", db.ChannelWorkFinished) // an older build's: taken
	require.NoError(t, err)
	require.NoError(t, s.Notify(ctx, db.ChannelWorkEnqueued)) // this schema's: taken
	var schema string
	require.NoError(t, admin.QueryRow(ctx, "SELECT current_schema()").Scan(&schema))

	// Notifications arrive in commit order: the other schema's, sent first, would be first.
	for _, want := range []string{db.ChannelWorkFinished + " ", db.ChannelWorkEnqueued + " " + schema} {
		select {
		case g := <-got:
			require.Equal(t, want, g)
		case <-time.After(5 * time.Second):
			t.Fatalf("no notification %q", want)
		}
	}
	select {
	case g := <-got:
		t.Fatalf("unexpected notification %q", g)
	case <-time.After(300 * time.Millisecond):
	}
}
