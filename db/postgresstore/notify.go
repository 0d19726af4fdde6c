package postgresstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

// Cross-process wake-ups over LISTEN/NOTIFY (docs/protocol.md#wake-ups).

var _ db.Notifications = (*Store)(nil)

const (
	listenConnectTimeout = 10 * time.Second
	// listenIdleCheck is how long the listener waits for a notification before it pings its connection, so a
	// connection that died silently (no FIN, no RST) is noticed and replaced.
	listenIdleCheck   = 30 * time.Second
	listenPingTimeout = 5 * time.Second
	listenBackoffMin  = 50 * time.Millisecond
	listenBackoffMax  = 5 * time.Second
)

// Notify notifies channel in a transaction of its own.
func (s *Store) Notify(ctx context.Context, channel string) error {
	return interpretError(s.q.WorkNotify(ctx, channel))
}

// Listen listens on both wake-up channels on a dedicated connection (opened with the pool's connection settings,
// but not taken from the pool, so it never holds a transaction's connection), until ctx is done. A lost connection
// is replaced after a backoff (50 ms doubling to 5 s, full jitter, reset by a successful LISTEN); h.Connected runs
// after every LISTEN, since notifications sent in between are lost.
func (s *Store) Listen(ctx context.Context, h db.ListenHandlers) error {
	backoff := listenBackoffMin
	for {
		listened, err := s.listenOnce(ctx, h)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if h.Lost != nil {
			h.Lost(interpretError(err))
		}
		if listened {
			backoff = listenBackoffMin
		}
		t := time.NewTimer(backoff/2 + rand.N(backoff/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce connects, listens and delivers notifications until the connection fails or ctx is done. It reports
// whether LISTEN took effect.
func (s *Store) listenOnce(ctx context.Context, h db.ListenHandlers) (bool, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.Tracer = nil // the pool's tracer (a benchmark's round-trip counter) observes transactions, not the listener
	cctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenPingTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	q := postgresgen.New(conn)
	if err := q.ListenWorkEnqueued(ctx); err != nil {
		return false, err
	}
	if err := q.ListenWorkFinished(ctx); err != nil {
		return false, err
	}
	schema, err := q.CurrentSchema(ctx)
	if err != nil {
		return false, err
	}
	if h.Connected != nil {
		h.Connected()
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdleCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if h.Notified != nil && ownSchema(n.Payload, schema) {
				h.Notified(n.Channel, n.Payload)
			}
		case ctx.Err() != nil:
			return true, ctx.Err()
		case pgconn.Timeout(err) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
		default:
			return true, err
		}
	}
}

// commitNotifying is commit (the pending savepoint statements, then the COMMIT) with, in the same pipelined batch
// (one round trip), the statements queued to run at commit (atCommit) and the transaction's notifications in front of
// the COMMIT: they are delivered if and only if the COMMIT succeeds. A queued statement that fails aborts the
// transaction (the COMMIT then rolls back) and its error is returned.
func (t *lazyTx) commitNotifying(ctx context.Context, channels []string) (pgconn.CommandTag, error) {
	if len(channels) == 0 && len(t.atCommit) == 0 {
		return t.commit(ctx)
	}
	b := &pgx.Batch{}
	n := t.prefix(b)
	rec := postgresgen.New(recorder{b})
	for _, step := range t.atCommit {
		_ = step(rec) // errRecorded: each step queues exactly its one statement
	}
	queue := postgresgen.New(batchQueue{b})
	for _, ch := range channels {
		if err := queue.WorkNotify(ctx, ch); err != nil {
			return pgconn.CommandTag{}, err
		}
	}
	b.Queue("commit")
	br := t.conn.SendBatch(ctx, b)
	for range n {
		if _, err := br.Exec(); err != nil {
			return pgconn.CommandTag{}, errors.Join(err, br.Close())
		}
	}
	rep := postgresgen.New(replayer{br})
	for _, step := range t.atCommit {
		if err := step(rep); err != nil {
			return pgconn.CommandTag{}, errors.Join(err, br.Close())
		}
	}
	for range channels {
		if _, err := br.Exec(); err != nil {
			return pgconn.CommandTag{}, errors.Join(err, br.Close())
		}
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

// batchQueue is a postgresgen.DBTX that queues each generated :exec statement on a batch instead of running it.
type batchQueue struct{ b *pgx.Batch }

var errNotQueueable = errors.New("postgresstore: only :exec statements can be queued on a batch")

func (q batchQueue) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

func (q batchQueue) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errNotQueueable
}

func (q batchQueue) QueryRow(context.Context, string, ...any) pgx.Row { return notQueueableRow{} }

type notQueueableRow struct{}

func (notQueueableRow) Scan(...any) error { return errNotQueueable }

// ownSchema reports whether a notification's payload comes from the listener's schema. Channels are database-wide
// but a deployment lives in one schema (the DSN's search_path), so every notification names the sender's schema
// and a listener ignores the others': two deployments (or parallel tests) in one database do not wake each other.
// The payload is the schema, optionally followed by ":" and a tag (tests send one as a barrier); an empty payload
// is an older build's, and is kept.
func ownSchema(payload, schema string) bool {
	return payload == "" || payload == schema || strings.HasPrefix(payload, schema+":")
}
