package mysqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/mysqlstore"
	"github.com/powercontext/powercontext/db/storetest"
)

const defaultTestDSN = "root@tcp(127.0.0.1:3306)/test"

// openFresh creates a fresh database t_<random> on the server named by PC_TEST_MYSQL_DSN, applies
// sql/schema/mysql/schema.sql statement by statement, opens a Store on it and drops the database at cleanup.
// (Temporary: the shared harness in db/enginetest replaces it.)
func openFresh(t *testing.T) *mysqlstore.Store {
	t.Helper()
	ctx := context.Background()
	dsn := os.Getenv("PC_TEST_MYSQL_DSN")
	if dsn == "" {
		dsn = defaultTestDSN
	}
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)

	admin, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		t.Skipf("mysql not reachable at %s: %v", cfg.Addr, err)
	}

	var b [6]byte
	_, err = rand.Read(b[:])
	require.NoError(t, err)
	name := "t_" + hex.EncodeToString(b[:])
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name) })

	cfg.DBName = name
	store, err := mysqlstore.Open(ctx, cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })

	for _, stmt := range schemaStatements(t) {
		_, err := store.DB().ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	return store
}

// TestQueries runs the shared conformance suite against MySQL/MariaDB.
func TestQueries(t *testing.T) {
	storetest.RunQueries(t, func(t *testing.T) db.Store { return openFresh(t) })
}

// TestDomainQueries runs the shared domain conformance suite against MySQL/MariaDB.
func TestDomainQueries(t *testing.T) {
	storetest.RunDomainQueries(t, func(t *testing.T) db.Store { return openFresh(t) })
}

func schemaStatements(t *testing.T) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "sql", "schema", "mysql", "schema.sql"))
	require.NoError(t, err)
	var lines []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		lines = append(lines, line)
	}
	var stmts []string
	for _, s := range strings.Split(strings.Join(lines, "\n"), ";") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts
}

func TestSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
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

func TestInsertIfAbsentAndTouch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	lane := strings.Repeat("a", 64)

	inserted, err := store.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = store.WorkLaneInsertIfAbsent(ctx, lane)
	require.NoError(t, err)
	require.False(t, inserted)

	got, _, err := store.WorkLaneLock(ctx, lane)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: lane, NextSequence: 1}, got)

	_, _, err = store.WorkLaneLock(ctx, strings.Repeat("b", 64))
	require.ErrorIs(t, err, db.ErrNotFound)

	// A CAS that writes unchanged values still counts one row (CLIENT_FOUND_ROWS), as on the other engines.
	require.NoError(t, store.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: lane, NextSequence: 2, HeadSequence: 1}))
	got, err = store.WorkLaneGet(ctx, lane)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: lane, NextSequence: 2, HeadSequence: 1}, got)

	inserted, err = store.SchedulerLeaseInsertIfAbsent(ctx, "work-discovery")
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = store.SchedulerLeaseInsertIfAbsent(ctx, "work-discovery")
	require.NoError(t, err)
	require.False(t, inserted)
	lease, now, err := store.SchedulerLeaseLock(ctx, "work-discovery")
	require.NoError(t, err)
	require.Equal(t, "", lease.OwnerID)
	require.True(t, lease.LeaseExpiresAt.IsZero())
	require.False(t, now.Before(lease.UpdatedAt))

	scan := db.SchedulerScan{Discoverer: "memory", NextRunAt: now, StateVersion: 1, UpdatedAt: now}
	n, err := store.SchedulerScanUpdate(ctx, scan, 1)
	require.NoError(t, err)
	require.Zero(t, n)
	inserted, err = store.SchedulerScanInsertIfAbsent(ctx, scan)
	require.NoError(t, err)
	require.True(t, inserted)
	n, err = store.SchedulerScanUpdate(ctx, scan, 1) // same values, version bumps
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

// TestLockBlocks checks that Touch + SELECT FOR UPDATE holds the row lock until commit: a second transaction's
// lock of the same lane waits for the first to finish.
func TestLockBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
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

func TestInTxRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	lane := strings.Repeat("d", 64)
	boom := errors.New("boom")
	err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if _, err := q.WorkLaneInsertIfAbsent(ctx, lane); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = store.WorkLaneGet(ctx, lane)
	require.ErrorIs(t, err, db.ErrNotFound)

	require.Panics(t, func() {
		_ = store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, err := q.WorkLaneInsertIfAbsent(ctx, lane); err != nil {
				return err
			}
			panic("boom")
		})
	})
	_, err = store.WorkLaneGet(ctx, lane)
	require.ErrorIs(t, err, db.ErrNotFound)
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	rev := db.MemoryRevision{ScopeID: "s", Revision: 1, WorkID: strings.Repeat("0", 36), CreatedAt: time.Now()}
	require.NoError(t, store.MemoryRevisionInsert(ctx, rev))
	require.ErrorIs(t, store.MemoryRevisionInsert(ctx, rev), db.ErrConflict)

	_, err := store.MemoryRevisionLatest(ctx, "missing")
	require.ErrorIs(t, err, db.ErrNotFound)

}

// TestDeadlockMapping checks that a lock wait timeout (1205) and a real deadlock (1213) come back as db.ErrDeadlock.
func TestDeadlockMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
	laneA, laneB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, lane := range []string{laneA, laneB} {
		_, err := store.WorkLaneInsertIfAbsent(ctx, lane)
		require.NoError(t, err)
	}

	// A second store on the same database whose sessions give up waiting for a lock after one second.
	var dbName string
	require.NoError(t, store.DB().QueryRowContext(ctx, "SELECT DATABASE()").Scan(&dbName))
	dsn := os.Getenv("PC_TEST_MYSQL_DSN")
	if dsn == "" {
		dsn = defaultTestDSN
	}
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	cfg.DBName = dbName
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

func TestTimesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openFresh(t)
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
