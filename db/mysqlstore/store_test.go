// The engine-specific tests of the MySQL adapter: session setup, row locks that block, deadlock and lock-wait
// mapping, UTC storage. Every statement's contract is checked by the conformance suite (db/storetest).
package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/storetest"
)

// open is a fresh migrated MySQL store (skipped without a server unless PC_TEST_REQUIRE_ENGINES names mysql).
func open(t *testing.T) *mysqlstore.Store {
	t.Helper()
	return enginetest.Open(t, db.EngineMySQL).(*mysqlstore.Store)
}

func TestSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	require.Equal(t, db.EngineMySQL, store.Engine())

	// Pin one connection so both reads see the same session.
	conn, err := store.DB().Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	var tz string
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT @@session.time_zone").Scan(&tz))
	require.Equal(t, "+00:00", tz)

	// MariaDB names the variable tx_isolation; MySQL 8 transaction_isolation.
	var iso string
	if err := conn.QueryRowContext(ctx, "SELECT @@session.transaction_isolation").Scan(&iso); err != nil {
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT @@session.tx_isolation").Scan(&iso))
	}
	require.Equal(t, "READ-COMMITTED", iso)

	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	require.Equal(t, time.UTC, now.Location())
	require.WithinDuration(t, time.Now(), now, 5*time.Second)
}

// TestLockBlocks checks that Touch + SELECT FOR UPDATE holds the row lock until commit: a second transaction's
// lock of the same lane waits for the first to finish.
func TestLockBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	lane := strings.Repeat("c", 64)
	_, err := store.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err)

	locked := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			l, _, err := q.WorkLaneLock(ctx, lane)
			if err != nil {
				return err
			}
			close(locked)
			<-release
			l.NextSequence++
			return q.WorkLaneUpdate(ctx, l)
		})
	}()
	<-locked

	second := make(chan db.WorkLane, 1)
	secondErr := make(chan error, 1)
	go func() {
		secondErr <- store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			l, _, err := q.WorkLaneLock(ctx, lane)
			if err != nil {
				return err
			}
			second <- l
			return nil
		})
	}()

	select {
	case <-second:
		t.Fatal("second transaction locked the lane while the first held it")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first)
	l := <-second
	require.NoError(t, <-secondErr)
	require.EqualValues(t, 2, l.NextSequence, "the second lock sees the first transaction's committed write")
}

// TestDeadlockMapping checks that a lock wait timeout (1205) and a real deadlock (1213) come back as db.ErrDeadlock.
func TestDeadlockMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	laneA, laneB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, lane := range []string{laneA, laneB} {
		_, err := store.WorkLaneInsertIfAbsent(ctx, lane)
		require.NoError(t, err)
	}

	// A second store on the same database whose sessions give up waiting for a lock after one second.
	var dbName string
	require.NoError(t, store.DB().QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName))
	cfg, err := mysql.ParseDSN(enginetest.URLOf(t, store).DSN)
	require.NoError(t, err)
	require.Equal(t, dbName, cfg.DBName)
	cfg.Params = map[string]string{"innodb_lock_wait_timeout": "1"}
	impatient, err := mysqlstore.Open(ctx, cfg.FormatDSN())
	require.NoError(t, err)
	defer impatient.Close()

	lockBoth := func(s db.Store, first, second string, locked chan<- struct{}, proceed <-chan struct{}) error {
		return s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLock(ctx, first); err != nil {
				return err
			}
			close(locked)
			<-proceed
			_, _, err := q.WorkLaneLock(ctx, second)
			return err
		})
	}

	// Lock wait timeout.
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { done <- lockBoth(store, laneA, laneA, locked, release) }()
	<-locked
	err = impatient.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneA)
		return err
	})
	require.ErrorIs(t, err, db.ErrDeadlock)
	close(release)
	require.NoError(t, <-done)

	// Deadlock: opposite lock order.
	lockedA, lockedB, proceed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	errs := make(chan error, 2)
	go func() { errs <- lockBoth(store, laneA, laneB, lockedA, proceed) }()
	go func() { errs <- lockBoth(store, laneB, laneA, lockedB, proceed) }()
	<-lockedA
	<-lockedB
	close(proceed)
	err1, err2 := <-errs, <-errs
	require.True(t, errors.Is(err1, db.ErrDeadlock) != errors.Is(err2, db.ErrDeadlock), "exactly one victim: %v / %v", err1, err2)
	require.True(t, err1 == nil || err2 == nil)
}

// TestTimesRoundTrip checks that a time is stored as its UTC wall time (the session time zone is +00:00).
func TestTimesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	loc := time.FixedZone("UTC+5", 5*3600)
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, loc)
	rev := db.MemoryRevision{ScopeID: "s", Revision: 1, WorkID: strings.Repeat("0", 36), CreatedAt: at}
	require.NoError(t, store.MemoryRevisionInsert(ctx, rev))
	got, err := store.MemoryRevisionLatest(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, at.UTC().Truncate(time.Microsecond), got.CreatedAt)
	require.Equal(t, time.UTC, got.CreatedAt.Location())

	// Stored as UTC wall time.
	var wall string
	require.NoError(t, store.DB().QueryRowContext(ctx,
		"SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f') FROM pc_memory_revisions").Scan(&wall))
	require.Equal(t, "2030-01-01 22:04:05.123456", wall)
}

// TestPoolIsBounded: the pool opens at most pool_max_conns connections (DefaultPoolMaxConns when the URL does not
// say), and the parameter never reaches the server as a session variable.
func TestPoolIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EngineMySQL)
	def, err := mysqlstore.Open(ctx, u.DSN)
	require.NoError(t, err)
	defer def.Close()
	require.Equal(t, mysqlstore.DefaultPoolMaxConns, def.DB().Stats().MaxOpenConnections)

	sep := "?"
	if strings.Contains(u.DSN, "?") {
		sep = "&"
	}
	small, err := mysqlstore.Open(ctx, u.DSN+sep+"pool_max_conns=2")
	require.NoError(t, err)
	defer small.Close()
	require.Equal(t, 2, small.DB().Stats().MaxOpenConnections)
	require.Equal(t, 2, mysqlstore.TxDB(small).Stats().MaxOpenConnections, "the transaction pool has the same bound")
	// Three concurrent transactions on two connections: the third waits for one of the first two to end.
	var conns []*sql.Conn
	for range 2 {
		c, err := small.DB().Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = small.DB().Conn(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a third connection waits")
	for _, c := range conns {
		require.NoError(t, c.Close())
	}

	_, err = mysqlstore.Open(ctx, u.DSN+sep+"pool_max_conns=zero")
	require.ErrorContains(t, err, "pool_max_conns")

	// The service's database URL carries it the same way (mysql://…?pool_max_conns=N).
	raw, err := mysqlstore.URLFromDSN(u.DSN, mustDBName(t, u.DSN))
	require.NoError(t, err)
	parsed, err := dburl.Parse(raw + sep + "pool_max_conns=3")
	require.NoError(t, err)
	viaURL, err := mysqlstore.Open(ctx, parsed.DSN)
	require.NoError(t, err)
	defer viaURL.Close()
	require.Equal(t, 3, viaURL.DB().Stats().MaxOpenConnections)
}

func mustDBName(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	return cfg.DBName
}

// TestJoinedLocksKeepTheLockOrder checks that the joined locking reads of the composite steps (one SELECT … FOR
// UPDATE over lane, key and item on MariaDB/MySQL 8) take their row locks in the global order lane → key → item:
// while another transaction holds one of the rows, the composite waits on it holding every row before it and none
// after it. Were the join to read the item first, a completer (lane, then item) and this step could deadlock.
func TestJoinedLocksKeepTheLockOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	now = now.Truncate(time.Microsecond)

	type rows struct{ lane, key, work string }
	newRows := func(t *testing.T) rows {
		t.Helper()
		h := headItem(t, store, now, now)
		r := rows{lane: h.LaneKey, key: h.LogicalKey, work: h.WorkID}
		return r
	}
	// held reports, from a third session, whether another transaction holds the row (SKIP LOCKED sees no row).
	held := func(t *testing.T, table, column, key string) bool {
		t.Helper()
		tx, err := store.DB().BeginTx(ctx, nil)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }()
		var n int
		//nolint:gosec // table and column are the test's constants
		require.NoError(t, tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" WHERE "+column+" = ? FOR UPDATE SKIP LOCKED) x", key).Scan(&n))
		return n == 0
	}
	steps := map[string]func(ctx context.Context, q db.Queries, r rows) error{
		"WorkLaneItemLock": func(ctx context.Context, q db.Queries, r rows) error {
			_, _, _, err := q.WorkLaneItemLock(ctx, db.WorkLaneItemLockParams{LaneKey: r.lane, WorkID: r.work})
			return err
		},
		"WorkLaneKeyDeleteItemLock": func(ctx context.Context, q db.Queries, r rows) error {
			_, _, _, err := q.WorkLaneKeyDeleteItemLock(ctx, db.WorkLaneKeyDeleteItemLockParams{LaneKey: r.lane, LogicalKey: r.key, WorkID: r.work})
			return err
		},
	}
	order := []struct{ table, column string }{{"pc_work_lanes", "lane_key"}, {"pc_work_keys", "logical_key"}, {"pc_work_items", "work_id"}}
	for name, step := range steps {
		for blocked := range order {
			if name == "WorkLaneItemLock" && order[blocked].table == "pc_work_keys" {
				continue // this step does not lock the key
			}
			r := newRows(t)
			keyOf := map[string]string{"pc_work_lanes": r.lane, "pc_work_keys": r.key, "pc_work_items": r.work}
			// The blocker holds one row until released.
			blocker, err := store.DB().BeginTx(ctx, nil)
			require.NoError(t, err)
			var one int
			//nolint:gosec // the test's constants
			t.Cleanup(func() { _ = blocker.Rollback() })
			require.NoError(t, blocker.QueryRowContext(ctx, "SELECT 1 FROM "+order[blocked].table+" WHERE "+order[blocked].column+" = ? FOR UPDATE", keyOf[order[blocked].table]).Scan(&one))
			done, finished := make(chan error, 1), make(chan error, 1)
			go func() {
				done <- store.InTx(ctx, func(ctx context.Context, q db.Queries) error { return step(ctx, q, r) })
			}()
			// Wait until the step waits for the blocker.
			waited := assert.Eventually(t, func() bool {
				select {
				case err := <-done:
					finished <- err
				default:
				}
				// The step's statement has been running for 100 ms: it waits for a row lock. (MariaDB takes the locks of
				// these primary-key reads while planning, as "const" tables, so information_schema.innodb_trx does not
				// always list the wait.)
				var waiting int
				require.NoError(t, store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.processlist
					WHERE db = DATABASE() AND info LIKE '-- name: WorkLane%' AND time_ms > 100`).Scan(&waiting))
				return waiting > 0
			}, 10*time.Second, 20*time.Millisecond, "%s never waited on %s", name, order[blocked].table)
			if !waited {
				select {
				case err := <-finished:
					t.Fatalf("%s finished while %s was held: %v", name, order[blocked].table, err)
				default:
					t.FailNow()
				}
			}
			for i, o := range order {
				if i == blocked || (name == "WorkLaneItemLock" && o.table == "pc_work_keys") {
					continue
				}
				require.Equal(t, i < blocked, held(t, o.table, o.column, keyOf[o.table]),
					"%s waiting on %s: %s held = %v (rows before the one it waits on must be held, rows after it free)", name, order[blocked].table, o.table, i < blocked)
			}
			require.NoError(t, blocker.Rollback())
			require.NoError(t, <-done)
		}
	}
}

// randomKey is a random 64-character hex key.
func randomKey() string { return strings.ReplaceAll(uuid.NewString()+uuid.NewString(), "-", "")[:64] }

// TestCompositeStepsAsOnMySQL8 runs the composite steps' conformance cases the way the adapter runs them on MySQL 8
// (without the MariaDB-only folds), so both ways stay checked on the MariaDB here.
func TestCompositeStepsAsOnMySQL8(t *testing.T) {
	t.Parallel()
	storetest.RunComposite(t, func(t *testing.T) db.Store { return mysqlstore.AsMySQL8(open(t)) })
}

// TestSetStepsAsPerRowChains runs the set-based methods' conformance cases the way the adapter runs them on
// OceanBase (the per-row chains), so both the set statements and the chains stay checked on the MariaDB here.
func TestSetStepsAsPerRowChains(t *testing.T) {
	t.Parallel()
	storetest.RunComposite(t, func(t *testing.T) db.Store { return mysqlstore.AsPerRowChains(open(t)) })
}

// TestCompositeStepsOneStatementAtATime runs the composite steps' conformance cases on a pool whose DSN turns
// parameter interpolation off, so no multi-statement is sent: each set step's statements then go one at a time.
func TestCompositeStepsOneStatementAtATime(t *testing.T) {
	t.Parallel()
	storetest.RunComposite(t, func(t *testing.T) db.Store {
		cfg, err := mysql.ParseDSN(enginetest.MigratedDatabase(t, db.EngineMySQL).DSN)
		require.NoError(t, err)
		cfg.Params = map[string]string{"interpolateParams": "false"}
		s, err := mysqlstore.Open(context.Background(), cfg.FormatDSN())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestInTxWithoutStartTransaction checks InTx's transactions on the autocommit-off pool: fn's statements are one
// transaction although nothing starts it (a write stays invisible to other sessions until InTx commits), and an
// error, a panic or an ended context rolls it back and releases its locks, so no connection goes back to the pool
// with a transaction open.
func TestInTxWithoutStartTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := open(t)
	lane := randomKey()
	_, err := store.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err)
	nextSequence := func() int64 {
		l, err := store.WorkLaneGet(ctx, lane) // autocommitted, on another connection
		require.NoError(t, err)
		return l.NextSequence
	}
	bump := func(ctx context.Context, q db.Queries, to int64) error {
		l, _, err := q.WorkLaneLock(ctx, lane)
		if err != nil {
			return err
		}
		l.NextSequence = to
		return q.WorkLaneUpdate(ctx, l)
	}
	// lockable: another transaction gets the lane's lock at once (InnoDB would otherwise wait up to 50 s).
	lockable := func() {
		t.Helper()
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		require.NoError(t, store.InTx(lctx, func(ctx context.Context, q db.Queries) error {
			_, _, err := q.WorkLaneLock(ctx, lane)
			return err
		}))
	}

	require.NoError(t, store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if err := bump(ctx, q, 5); err != nil {
			return err
		}
		require.EqualValues(t, 1, nextSequence(), "an uncommitted write is not visible")
		return nil
	}))
	require.EqualValues(t, 5, nextSequence())

	failed := errors.New("fn failed")
	require.ErrorIs(t, store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if err := bump(ctx, q, 6); err != nil {
			return err
		}
		return failed
	}), failed)
	require.EqualValues(t, 5, nextSequence())
	lockable()

	require.Panics(t, func() {
		_ = store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if err := bump(ctx, q, 7); err != nil {
				return err
			}
			panic("fn panicked")
		})
	})
	require.EqualValues(t, 5, nextSequence())
	lockable()

	cctx, cancel := context.WithCancel(ctx)
	require.ErrorIs(t, store.InTx(cctx, func(ctx context.Context, q db.Queries) error {
		if err := bump(ctx, q, 8); err != nil {
			return err
		}
		cancel()
		_, err := q.DBNow(ctx)
		return err
	}), context.Canceled)
	require.EqualValues(t, 5, nextSequence())
	lockable()

	// No session of this store's database is left inside a transaction.
	var open int
	require.NoError(t, store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.innodb_trx t
		JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()`).Scan(&open))
	require.Zero(t, open)
}

// TestAtCommitFollowsInterpolation: an enqueue's writes wait for the COMMIT only on a pool that interpolates
// parameters (the default); with interpolateParams=false in the DSN they run at once, so an existing key is known
// inside the transaction. The decision is the connector's own configuration, not a second reading of the DSN.
func TestAtCommitFollowsInterpolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EngineMySQL)
	sep := "?"
	if strings.Contains(u.DSN, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		dsn      string
		deferred bool
	}{{u.DSN, true}, {u.DSN + sep + "interpolateParams=false", false}, {u.DSN + sep + "interpolateParams=true", true}} {
		store, err := mysqlstore.Open(ctx, c.dsn)
		require.NoError(t, err)
		lane := randomKey()
		_, err = store.WorkLaneInsertIfAbsent(ctx, lane)
		require.NoError(t, err)
		now := time.Now().UTC().Truncate(time.Microsecond)
		key := randomKey()
		enqueue := func(seq int64) (insideTx, afterCommit bool) {
			item := db.WorkItem{WorkID: uuid.NewString(), LogicalKey: key, LaneKey: lane, LaneSequence: seq, Kind: "k",
				PayloadVersion: 1, ScopeID: "s", Payload: []byte(`{}`), Status: db.StatusQueued, AvailableAt: now,
				MaxAttempts: 3, StateVersion: 1, CreatedAt: now, UpdatedAt: now}
			inserted := true
			require.NoError(t, store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				if _, _, err := q.WorkLaneLock(ctx, lane); err != nil {
					return err
				}
				err := q.WorkKeyItemInsertAtCommit(ctx, db.WorkKeyItemInsertParams{
					Key:  db.WorkKey{LogicalKey: key, WorkID: item.WorkID, LaneKey: lane, CreatedAt: now},
					Lane: db.WorkLane{LaneKey: lane, NextSequence: seq + 1}, Item: item}, &inserted)
				insideTx = inserted
				return err
			}))
			return insideTx, inserted
		}
		inside, after := enqueue(1)
		require.True(t, inside, c.dsn)
		require.True(t, after, c.dsn)
		inside, after = enqueue(2) // the key exists now
		require.False(t, after, c.dsn)
		require.Equal(t, c.deferred, inside, "%s: deferred to the COMMIT", c.dsn)
		require.NoError(t, store.Close())
	}
}

// TestBatchStatementsTouchOnlyTheirRows: on tables of a few rows, where MariaDB's optimizer would rather scan than
// read an IN list by primary key, a batch's locks and finish (WorkLaneKeyItemLockMany, WorkItemSucceedMany) read
// only the rows they name: while another transaction holds the lane, key and item of an item outside the batch, the
// batch finishes without waiting (a scan would wait on the held rows; two batches doing so deadlocked). The batch's
// session gives up on a lock after one second, so a statement that waits fails the test instead of hanging.
func TestBatchStatementsTouchOnlyTheirRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, impatient, now := openWithImpatientAt(t)
	var refs []db.WorkItemRef
	for range 8 {
		refs = append(refs, headItem(t, store, now, now))
	}
	claimed, err := store.WorkItemClaimMany(ctx, db.WorkItemClaimManyParams{Supported: []db.KindVersions{{Kind: "k", Min: 1, Max: 1}},
		Candidates: 32, Slots: 8, Owner: "test", Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Claimed, 8)
	version := map[string]int64{}
	for _, c := range claimed.Claimed {
		version[c.Item.WorkID] = c.Item.StateVersion
	}

	// The blocker holds the rows of the first four items.
	blocker, err := store.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = blocker.Rollback() }()
	for _, r := range refs[:4] {
		for _, row := range []struct{ table, column, key string }{
			{"pc_work_lanes", "lane_key", r.LaneKey}, {"pc_work_keys", "logical_key", r.LogicalKey}, {"pc_work_items", "work_id", r.WorkID},
		} {
			var one int
			//nolint:gosec // the test's constants
			require.NoError(t, blocker.QueryRowContext(ctx, "SELECT 1 FROM "+row.table+" WHERE "+row.column+" = ? FOR UPDATE", row.key).Scan(&one))
		}
	}

	batch := refs[4:]
	var n int64
	require.NoError(t, impatient.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		locked, _, err := q.WorkLaneKeyItemLockMany(ctx, batch)
		if err != nil {
			return err
		}
		items := make([]db.SucceedItem, len(locked))
		for i, l := range locked {
			require.True(t, l.Found && l.HasKey, "batch item %d locked", i)
			items[i] = db.SucceedItem{WorkID: l.Item.WorkID, ExpectedVersion: version[l.Item.WorkID], ResultCode: "ok"}
		}
		n, err = q.WorkItemSucceedMany(ctx, db.WorkItemSucceedManyParams{Now: now.Add(time.Second), Items: items})
		return err
	}), "the batch waited on rows it does not name")
	require.EqualValues(t, len(batch), n)
	require.NoError(t, blocker.Rollback())
	for _, r := range batch {
		var keys int
		require.NoError(t, store.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM pc_work_keys WHERE logical_key = ?", r.LogicalKey).Scan(&keys))
		require.Zero(t, keys, "the batch deleted its keys")
	}
}

// TestClaimNeverWaitsOnALockedLane: the set-based claim pass skips a lane another transaction holds, also when the
// round names a single lane and the tables are not tiny, and claims its head once the lane is free. The claim's
// session gives up on a lock after one second, so a wait fails the test instead of hanging. (In a B1 run on MariaDB
// a claim statement was seen waiting on a lane, in the optimizer's "Statistics" phase, and deadlocking with a batch
// lock; this test holds the property that rules that out for the shapes it covers, and does not reproduce that run.)
func TestClaimNeverWaitsOnALockedLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, impatient, now := openWithImpatientAt(t)
	lane := headItem(t, store, now, now).LaneKey

	// Other lanes, not due for an hour, so the tables are not tiny (a tiny table is read differently).
	for range 200 {
		headItem(t, store, now, now.Add(time.Hour))
	}
	_, err := store.DB().ExecContext(ctx, "ANALYZE TABLE pc_work_lanes, pc_work_items")
	require.NoError(t, err)

	blocker, err := store.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = blocker.Rollback() }()
	var one int
	require.NoError(t, blocker.QueryRowContext(ctx, "SELECT 1 FROM pc_work_lanes WHERE lane_key = ? FOR UPDATE", lane).Scan(&one))

	params := db.WorkItemClaimManyParams{Supported: []db.KindVersions{{Kind: "k", Min: 1, Max: 1}}, Candidates: 32, Slots: 1,
		Owner: "test", Lease: time.Minute}
	res, err := impatient.WorkItemClaimMany(ctx, params)
	require.NoError(t, err, "the claim waited on the held lane")
	require.Empty(t, res.Claimed, "the held lane is skipped")

	require.NoError(t, blocker.Rollback())
	res, err = impatient.WorkItemClaimMany(ctx, params)
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1, "once free, the lane's head is claimed")
}

// openWithImpatient opens two stores on one fresh migrated database: one as usual, and one whose sessions give up
// on a row lock after one second (a statement that waits then fails instead of hanging the test).
func openWithImpatient(t *testing.T) (store, impatient *mysqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EngineMySQL)
	store, err := mysqlstore.Open(ctx, u.DSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	cfg, err := mysql.ParseDSN(u.DSN)
	require.NoError(t, err)
	cfg.Params = map[string]string{"innodb_lock_wait_timeout": "1"}
	impatient, err = mysqlstore.Open(ctx, cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = impatient.Close() })
	return store, impatient
}

// openWithImpatientAt is openWithImpatient with a database instant one second in the past, to the microsecond the
// tables store, for the rows a test writes.
func openWithImpatientAt(t *testing.T) (store, impatient *mysqlstore.Store, now time.Time) {
	t.Helper()
	store, impatient = openWithImpatient(t)
	now, err := store.DBNow(context.Background())
	require.NoError(t, err)
	return store, impatient, now.Truncate(time.Microsecond).Add(-time.Second)
}

// headItem writes a lane whose head is a new queued item (sequence 1, kind "k", due at due) with its key.
func headItem(t *testing.T, store *mysqlstore.Store, now, due time.Time) db.WorkItemRef {
	t.Helper()
	ctx := context.Background()
	r := db.WorkItemRef{LaneKey: randomKey(), LogicalKey: randomKey(), WorkID: uuid.NewString()}
	_, err := store.WorkLaneInsertIfAbsent(ctx, r.LaneKey)
	require.NoError(t, err)
	require.NoError(t, store.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: r.LaneKey, NextSequence: 2, HeadSequence: 1}))
	_, err = store.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: r.LogicalKey, WorkID: r.WorkID, LaneKey: r.LaneKey, CreatedAt: now})
	require.NoError(t, err)
	require.NoError(t, store.WorkItemInsert(ctx, db.WorkItem{
		WorkID: r.WorkID, LogicalKey: r.LogicalKey, LaneKey: r.LaneKey, LaneSequence: 1, Kind: "k", PayloadVersion: 1,
		ScopeID: "s", Payload: []byte(`{}`), Status: db.StatusQueued, AvailableAt: due, MaxAttempts: 1,
		StateVersion: 1, CreatedAt: now, UpdatedAt: now,
	}))
	return r
}

// TestDeferredWriteGuard: a write that waits for the COMMIT (as a claim pass's do) with DBAssertRowCount after it
// commits only when it matched the rows it must; when it did not, the COMMIT never runs, InTx says why, and the
// transaction's earlier writes are rolled back with it.
func TestDeferredWriteGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := openWithImpatient(t)
	nextOf := func(lane string) (int64, bool) {
		var next int64
		err := store.DB().QueryRowContext(ctx, "SELECT next_sequence FROM pc_work_lanes WHERE lane_key = ?", lane).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false
		}
		require.NoError(t, err)
		return next, true
	}
	for _, exists := range []bool{true, false} {
		target, earlier := randomKey(), randomKey()
		if exists {
			_, err := store.WorkLaneInsertIfAbsent(ctx, target)
			require.NoError(t, err)
		}
		err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, err := q.WorkLaneInsertIfAbsent(ctx, earlier); err != nil {
				return err
			}
			return mysqlstore.DeferAssertedLaneUpdate(ctx, q, db.WorkLane{LaneKey: target, NextSequence: 5, HeadSequence: 1}, 1)
		})
		_, earlierKept := nextOf(earlier)
		next, _ := nextOf(target)
		if exists {
			require.NoError(t, err)
			require.True(t, earlierKept)
			require.EqualValues(t, 5, next, "the deferred update committed")
			continue
		}
		require.ErrorContains(t, err, "DBAssertRowCount")
		require.False(t, earlierKept, "the earlier write was rolled back with the missed one")
	}
}

// TestBatchLockInOneMultiStatement: a batch lock sent as one multi-statement (the default pool) reads what its three
// statements read one by one (interpolateParams=false: no multi-statements), an item without its key and an unknown
// item included; and a lock the second statement cannot get fails the whole call instead of returning the first
// result set alone.
func TestBatchLockInOneMultiStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := enginetest.MigratedDatabase(t, db.EngineMySQL)
	var stores []*mysqlstore.Store
	for _, params := range []map[string]string{nil, {"interpolateParams": "false"}, {"innodb_lock_wait_timeout": "1"}} {
		cfg, err := mysql.ParseDSN(u.DSN)
		require.NoError(t, err)
		cfg.Params = params
		s, err := mysqlstore.Open(ctx, cfg.FormatDSN())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	store, oneByOne, impatient := stores[0], stores[1], stores[2]
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	now = now.Truncate(time.Microsecond).Add(-time.Second)

	var refs []db.WorkItemRef
	for range 4 {
		refs = append(refs, headItem(t, store, now, now))
	}
	_, err = store.WorkKeyDelete(ctx, refs[1].LogicalKey)
	require.NoError(t, err)
	refs = append(refs, db.WorkItemRef{LaneKey: refs[0].LaneKey, LogicalKey: randomKey(), WorkID: uuid.NewString()})
	lock := func(s *mysqlstore.Store) (locked []db.LockedItem) {
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			var err error
			locked, _, err = q.WorkLaneKeyItemLockMany(ctx, refs)
			return err
		}))
		return locked
	}
	multi, single := lock(store), lock(oneByOne)
	require.Equal(t, single, multi)
	require.Len(t, multi, len(refs))
	for i, l := range multi[:4] {
		require.True(t, l.Found, "item %d", i)
		require.Equal(t, refs[i].WorkID, l.Item.WorkID)
		require.Equal(t, now, l.Item.CreatedAt)
		require.EqualValues(t, 1, l.Lane.HeadSequence)
		require.Equal(t, i != 1, l.HasKey, "item %d", i)
	}
	require.False(t, multi[4].Found, "an unknown item")

	// Another transaction holds the third item's key: the multi-statement's second statement waits and times out.
	blocker, err := store.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = blocker.Rollback() }()
	var one int
	require.NoError(t, blocker.QueryRowContext(ctx, "SELECT 1 FROM pc_work_keys WHERE logical_key = ? FOR UPDATE", refs[2].LogicalKey).Scan(&one))
	err = impatient.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneKeyItemLockMany(ctx, refs)
		return err
	})
	require.Error(t, err, "a lock the second statement waited out fails the batch lock")
}

// TestClaimCandidatesByDue: WorkItemClaimCandidatesByDue returns what WorkItemClaimCandidates returns when its
// bound lets it reach the limit, and comes back short when the items queued behind a running head fill its bound;
// the adapter then answers with WorkItemClaimCandidates, and reads the due index first again once that is full.
func TestClaimCandidatesByDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mysqlstore.AsPerRowChains(open(t)) // the store's own claim passes stay out of the way: none run here
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	now = now.Truncate(time.Microsecond)
	at := func(i int) time.Time { return now.Add(-time.Hour + time.Duration(i)*time.Millisecond) }
	lane := func(first int, statuses ...string) {
		key := randomKey()
		_, err := store.WorkLaneInsertIfAbsent(ctx, key)
		require.NoError(t, err)
		require.NoError(t, store.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: key, NextSequence: int64(len(statuses)) + 1, HeadSequence: 1}))
		for i, status := range statuses {
			it := db.WorkItem{WorkID: uuid.NewString(), LogicalKey: randomKey(), LaneKey: key, LaneSequence: int64(i) + 1,
				Kind: "k", PayloadVersion: 1, ScopeID: "s", Payload: []byte(`{}`), Status: status, AvailableAt: at(first + i),
				MaxAttempts: 3, StateVersion: 1, CreatedAt: at(first + i), UpdatedAt: now}
			if status == db.StatusRunning {
				it.LeaseOwner, it.LeaseFence, it.LeaseExpiresAt, it.AttemptCount = "w", 1, now.Add(time.Hour), 1
			}
			require.NoError(t, store.WorkItemInsert(ctx, it))
		}
	}
	// The oldest items: 10 queued behind a running head. Then 40 lanes of three queued items each.
	lane(0, append([]string{db.StatusRunning}, slices.Repeat([]string{db.StatusQueued}, 10)...)...)
	for i := range 40 {
		lane(1000+10*i, db.StatusQueued, db.StatusQueued, db.StatusQueued)
	}
	p := db.WorkItemClaimCandidatesParams{Kinds: []string{"k"}, Limit: 16}

	require.False(t, mysqlstore.CandidatesByDue(store), "a new store asks WorkItemClaimCandidates first")
	want, err := store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Len(t, want, 16)
	require.True(t, mysqlstore.CandidatesByDue(store), "a full answer turns the due index on")

	wide, err := mysqlstore.ClaimCandidatesByDue(ctx, store, p, 200)
	require.NoError(t, err)
	require.Equal(t, want, wide, "a bound past the blocked items: the same oldest heads")
	short, err := mysqlstore.ClaimCandidatesByDue(ctx, store, p, 10)
	require.NoError(t, err)
	require.Empty(t, short, "a bound inside the blocked items reaches no head")

	p.Limit = 60 // 2·60+32 reads past the blocked items, but only 40 heads are due: short, so the fallback answers
	all, err := store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Len(t, all, 40)
	require.False(t, mysqlstore.CandidatesByDue(store), "a short answer turns the due index off")
	p.Limit = 16
	again, err := store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Equal(t, want, again)
	require.False(t, mysqlstore.CandidatesByDue(store), "full again, but the short due-index answer still skips one pass")
	again, err = store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Equal(t, want, again)
	require.True(t, mysqlstore.CandidatesByDue(store))
	again, err = store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Equal(t, want, again, "read from the due index")
	require.True(t, mysqlstore.CandidatesByDue(store), "a full due-index answer keeps it on")

	// A limit the due index cannot fill within its bound while the lanes can (2·30+32 = 92 items read: the 10
	// blocked ones, then about 27 heads among 82; 40 heads are due): every pass that asks the due index first pays
	// for both queries, so a short answer in a row skips 1, 2, 4, … passes before asking again.
	p.Limit = 30
	for _, skipped := range []int32{1, 2, 4, 8} {
		got, err := store.WorkItemClaimCandidates(ctx, p)
		require.NoError(t, err)
		require.Len(t, got, 30, "the fallback answers")
		require.Equal(t, skipped, mysqlstore.CandidatesByDueSkip(store))
		for range skipped {
			require.False(t, mysqlstore.CandidatesByDue(store))
			_, err := store.WorkItemClaimCandidates(ctx, p)
			require.NoError(t, err)
		}
		require.True(t, mysqlstore.CandidatesByDue(store), "after %d skipped passes the due index is asked again", skipped)
	}
	p.Limit = 16
	again, err = store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Equal(t, want, again)
	p.Limit = 30
	_, err = store.WorkItemClaimCandidates(ctx, p)
	require.NoError(t, err)
	require.Equal(t, int32(1), mysqlstore.CandidatesByDueSkip(store), "a full due-index answer reset the backoff")
	p.Limit = 16
	byDue, err := mysqlstore.ClaimCandidatesByDue(ctx, store, p, mysqlstore.DueScanBound(p.Limit))
	require.NoError(t, err)
	require.Equal(t, want, byDue, "the adapter's bound for this limit (2·16+32) reads past the blocked items to 16 heads")
}

// TestEnqueueManyKeyInsertLocksNoExistingKey: the set-based key insert of a batch that names another lane's existing
// key takes no lock on it (a consistent read finds it), so the completion that deletes that key under its own lane
// lock goes through at once; an INSERT IGNORE would hold a shared lock until the batch commits, and the batch's join
// (WorkKeyLock) then closes a deadlock cycle with that completion.
func TestEnqueueManyKeyInsertLocksNoExistingKey(t *testing.T) {
	ctx := context.Background()
	store, impatient, now := openWithImpatientAt(t)
	laneA, laneB, key := randomKey(), randomKey(), randomKey()
	for _, l := range []string{laneA, laneB} {
		_, err := store.WorkLaneInsertIfAbsent(ctx, l)
		require.NoError(t, err)
	}
	inserted, err := store.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: key, WorkID: uuid.NewString(), LaneKey: laneA, CreatedAt: now})
	require.NoError(t, err)
	require.True(t, inserted)

	batchInserted, batchGoOn := make(chan struct{}), make(chan struct{})
	batch := make(chan error, 1)
	go func() {
		batch <- store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, _, err := q.WorkLaneLockMany(ctx, []string{laneB}); err != nil {
				return err
			}
			ids, err := q.WorkKeyInsertMany(ctx, []db.WorkKey{{LogicalKey: key, WorkID: uuid.NewString(), LaneKey: laneB, CreatedAt: now}})
			if err != nil {
				return err
			}
			if len(ids) != 0 {
				return errors.New("an existing key was inserted")
			}
			close(batchInserted)
			<-batchGoOn
			_, err = q.WorkKeyLock(ctx, key) // the batch's join; the completion has deleted the key meanwhile
			if errors.Is(err, db.ErrNotFound) {
				return nil
			}
			return err
		})
	}()
	<-batchInserted
	// The completion on lane A, on sessions that give up on a row lock after a second.
	err = impatient.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if _, _, err := q.WorkLaneLock(ctx, laneA); err != nil {
			return err
		}
		_, err := q.WorkKeyDelete(ctx, key)
		return err
	})
	close(batchGoOn)
	require.NoError(t, err, "the completion waited on a lock the batch's key insert took")
	require.NoError(t, <-batch)
}

// TestEnqueueManyKeyInsertRacingAnUncommittedKey: a key another transaction inserted and has not committed makes the
// batch's key insert wait; once that transaction commits, the statement fails as a duplicate, and the chunk is
// inserted key by key: the other keys land, the taken one is reported as not inserted.
func TestEnqueueManyKeyInsertRacingAnUncommittedKey(t *testing.T) {
	ctx := context.Background()
	store, otherStore, now := openWithImpatientAt(t) // the other transaction waits on nothing: its own pool
	laneA, laneB, taken, free := randomKey(), randomKey(), randomKey(), randomKey()
	for _, l := range []string{laneA, laneB} {
		_, err := store.WorkLaneInsertIfAbsent(ctx, l)
		require.NoError(t, err)
	}
	holding, release := make(chan struct{}), make(chan struct{})
	other := make(chan error, 1)
	go func() {
		other <- otherStore.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, err := q.WorkKeyInsertIfAbsent(ctx, db.WorkKey{LogicalKey: taken, WorkID: uuid.NewString(), LaneKey: laneA, CreatedAt: now}); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	freeID := uuid.NewString()
	type result struct {
		ids []string
		err error
	}
	batch := make(chan result, 1)
	go func() {
		var ids []string
		err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			var err error
			ids, err = q.WorkKeyInsertMany(ctx, []db.WorkKey{
				{LogicalKey: taken, WorkID: uuid.NewString(), LaneKey: laneB, CreatedAt: now},
				{LogicalKey: free, WorkID: freeID, LaneKey: laneB, CreatedAt: now},
			})
			return err
		})
		batch <- result{ids, err}
	}()
	// Commit the other transaction once the batch waits on its key.
	sqlDB, err := sql.Open("mysql", os.Getenv("PC_TEST_MYSQL_DSN"))
	require.NoError(t, err)
	defer sqlDB.Close()
	require.Eventually(t, func() bool {
		var waiting int
		return sqlDB.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE command = 'Query' AND info LIKE '%name: WorkKeyInsertMany%'`).Scan(&waiting) == nil && waiting > 0
	}, time.Minute, 20*time.Millisecond, "the batch's insert waits on the uncommitted key")
	close(release)
	require.NoError(t, <-other)
	res := <-batch
	require.NoError(t, res.err)
	require.Equal(t, []string{freeID}, res.ids, "the free key is inserted, the taken one is not")
}
