// The engine-specific tests of the SQLite adapter: file and pragmas, the database clock's resolution, the JSON-array
// kinds parameter, the single writer, and a second writer's busy timeout. Every statement's contract is checked by
// the conformance suite (db/storetest).
package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/db/sqlitestore"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/stretchr/testify/require"
)

// open is a fresh migrated SQLite store.
func open(t *testing.T) *sqlitestore.Store {
	t.Helper()
	return enginetest.Open(t, db.EngineSQLite).(*sqlitestore.Store)
}

func testItem(workID, laneKey string, seq int64, now time.Time) db.WorkItem {
	return db.WorkItem{
		WorkID:         workID,
		LogicalKey:     "key-" + workID,
		LaneKey:        laneKey,
		LaneSequence:   seq,
		Kind:           "kind.a",
		PayloadVersion: 1,
		ScopeID:        "scope-1",
		Payload:        []byte(`{"a":1}`),
		Status:         db.StatusQueued,
		AvailableAt:    now,
		MaxAttempts:    5,
		StateVersion:   1,
		CreatedAt:      now,
		UpdatedAt:      now,
	}
}

func TestOpenCreatesDirectoryAndEngine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "c.db")
	s, err := sqlitestore.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.Equal(t, db.EngineSQLite, s.Engine())
	_, err = os.Stat(path)
	require.NoError(t, err)

	var mode string
	require.NoError(t, sqlitestore.Writer(s).QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.Equal(t, "wal", mode)
	var busy int
	require.NoError(t, sqlitestore.Reader(s).QueryRow("PRAGMA busy_timeout").Scan(&busy))
	require.Equal(t, sqlitestore.BusyTimeoutMillis, busy)
	// The reader pool is query_only.
	_, err = sqlitestore.Reader(s).Exec("CREATE TABLE x (a INTEGER)")
	require.Error(t, err)
}

func TestDBNowIsDatabaseClock(t *testing.T) {
	t.Parallel()
	s := open(t)
	now, err := s.DBNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, time.UTC, now.Location())
	require.WithinDuration(t, time.Now(), now, 5*time.Second)
	require.Zero(t, now.Nanosecond()%int(time.Millisecond), "SQLite's clock has millisecond resolution")
}

// TestSliceAndListQueriesBindAllArguments checks the JSON-array kinds (json_each) beside the other parameters.
func TestSliceAndListQueriesBindAllArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	past := now.Add(-time.Hour)

	// Three lanes, one head each, kinds a/b/c.
	for i, kind := range []string{"kind.a", "kind.b", "kind.c"} {
		lane := "lane-" + kind
		item := testItem("w-"+kind, lane, 1, past.Add(time.Duration(i)*time.Second))
		item.Kind = kind
		_, err := s.WorkLaneInsertIfAbsent(ctx, lane)
		require.NoError(t, err)
		require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: lane, NextSequence: 2, HeadSequence: 1}))
		require.NoError(t, s.WorkItemInsert(ctx, item))
	}

	// A limit after a multi-element slice must bind to LIMIT, not to a slice element.
	cands, err := s.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: []string{"kind.a", "kind.c", "kind.x"}, Limit: 1})
	require.NoError(t, err)
	require.Len(t, cands, 1)
	require.Equal(t, "w-kind.a", cands[0].WorkID)
	cands, err = s.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: []string{"kind.c", "kind.a", "kind.x"}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, cands, 2)
	require.Equal(t, []string{"w-kind.a", "w-kind.c"}, []string{cands[0].WorkID, cands[1].WorkID})
	cands, err = s.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, cands)

	list, err := s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"kind.a", "kind.b", "kind.c"}, ScopeID: "scope-1", Status: db.StatusQueued, Limit: 2})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "w-kind.c", list[0].WorkID)
	require.Equal(t, "w-kind.b", list[1].WorkID)
	list, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"kind.a", "kind.b", "kind.c"}, BeforeCreatedAt: list[1].CreatedAt, BeforeWorkID: list[1].WorkID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "w-kind.a", list[0].WorkID)
	list, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"kind.b"}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, err = s.WorkItemList(ctx, db.WorkItemListParams{Kinds: []string{"kind.a"}, ScopeID: "other", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	// Terminal deletes touch only succeeded/cancelled rows among the listed ids.
	for _, id := range []string{"w-kind.a", "w-kind.b"} {
		item, err := s.WorkItemGet(ctx, id)
		require.NoError(t, err)
		item.Status, item.StateVersion, item.CompletedAt = db.StatusSucceeded, 2, past
		n, err := s.WorkItemUpdateState(ctx, db.WorkItemUpdateStateParams{Item: item, ExpectedVersion: 1})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	ids, err := s.WorkItemPurgeCandidates(ctx, db.WorkItemPurgeCandidatesParams{CompletedBefore: now, Limit: 10})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"w-kind.a", "w-kind.b"}, ids)
	n, err := s.WorkItemDeleteTerminal(ctx, []string{"w-kind.a", "w-kind.b", "w-kind.c"})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	n, err = s.WorkItemDeleteTerminal(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, n)
}

// Concurrent InTx calls on one Store serialise on the single writer connection: no SQLITE_BUSY, no lost update.
func TestConcurrentInTxSerialise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	_, err := s.WorkLaneInsertIfAbsent(ctx, "lane-1")
	require.NoError(t, err)

	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				errs <- s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
					lane, _, err := q.WorkLaneLock(ctx, "lane-1")
					if err != nil {
						return err
					}
					lane.NextSequence++
					return q.WorkLaneUpdate(ctx, lane)
				})
				// Autocommitted reads run beside the writer.
				if _, err := s.WorkLaneGet(ctx, "lane-1"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	lane, err := s.WorkLaneGet(ctx, "lane-1")
	require.NoError(t, err)
	require.EqualValues(t, 1+workers*perWorker, lane.NextSequence)
}

// A second Store on the same file behaves like a second process: its BEGIN IMMEDIATE waits (busy_timeout) for the
// first writer's transaction, then commits; nothing is lost or corrupted.
func TestSecondWriterWaitsForBusyTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s1 := open(t)
	s2 := enginetest.OpenStore(t, enginetest.URLOf(t, s1)).(*sqlitestore.Store)

	inside := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s1.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			if _, err := q.WorkLaneInsertIfAbsent(ctx, "lane-1"); err != nil {
				return err
			}
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside

	second := make(chan error, 1)
	entered := make(chan struct{})
	go func() {
		second <- s2.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			close(entered)
			_, err := q.WorkLaneInsertIfAbsent(ctx, "lane-2")
			return err
		})
	}()
	// The second writer cannot begin while the first holds the write lock. Wait (with a deadline) until it holds
	// its connection, i.e. it is in its BEGIN IMMEDIATE; then give it a while to enter. That while stays a sleep:
	// it proves an absence (the writer does not enter), and only waiting can show that.
	testutil.Eventually(t, 30*time.Second, func() bool { return sqlitestore.Writer(s2).Stats().InUse > 0 },
		"the second writer never began")
	time.Sleep(200 * time.Millisecond)
	select {
	case <-entered:
		t.Fatal("second writer began while the first held the write lock")
	default:
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-second)

	for _, lane := range []string{"lane-1", "lane-2"} {
		_, err := s2.WorkLaneGet(ctx, lane)
		require.NoError(t, err, lane)
	}
	var check string
	require.NoError(t, sqlitestore.Writer(s2).QueryRow("PRAGMA integrity_check").Scan(&check))
	require.Equal(t, "ok", check)
}

// When the other writer holds the lock past busy_timeout and InTx's write-lock wait, the waiter fails with
// db.ErrDeadlock; its body never ran.
func TestSecondWriterBusyTimeoutIsErrDeadlock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the full busy_timeout")
	}
	t.Parallel()
	ctx := context.Background()
	s1 := open(t)
	s2 := enginetest.OpenStore(t, enginetest.URLOf(t, s1)).(*sqlitestore.Store)

	inside := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s1.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	sqlitestore.SetWriteLockWait(s2, 0) // one BEGIN: fail after busy_timeout
	ran := false
	err := s2.InTx(ctx, func(ctx context.Context, q db.Queries) error { ran = true; return nil })
	close(release)
	require.ErrorIs(t, err, db.ErrDeadlock)
	require.False(t, ran, "the body ran without the write lock")
	require.NoError(t, <-first)

	_, err = s2.WorkLaneInsertIfAbsent(ctx, "lane-1")
	require.NoError(t, err, "the waiter recovers once the lock is free")
}

// A writer held out past busy_timeout keeps asking for the write lock (InTx's write-lock wait) and runs once it is
// free, exactly once: a second pool on the same file is starved for a while, not failed.
func TestSecondWriterWaitsPastBusyTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("holds the write lock past the full busy_timeout")
	}
	t.Parallel()
	ctx := context.Background()
	s1 := open(t)
	s2 := enginetest.OpenStore(t, enginetest.URLOf(t, s1)).(*sqlitestore.Store)

	inside := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s1.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	var runs atomic.Int32
	second := make(chan error, 1)
	go func() {
		second <- s2.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			runs.Add(1)
			_, err := q.WorkLaneInsertIfAbsent(ctx, "lane-2")
			return err
		})
	}()
	// Hold the lock until the waiter's BEGIN has been refused after a full busy_timeout and asked again.
	testutil.Eventually(t, time.Minute, func() bool { return sqlitestore.BusyRetries(s2) > 0 },
		"the second writer never asked again after busy_timeout")
	require.Zero(t, runs.Load(), "the second writer ran while the first held the write lock")
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.Equal(t, int32(1), runs.Load())
	_, err := s2.WorkLaneGet(ctx, "lane-2")
	require.NoError(t, err)
}
