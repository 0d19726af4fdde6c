package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

var errDomainRefused = errors.New("domain refused")

// heldHandler's Prepares wait until hold is closed, so their completions become ready together; its domain commit
// writes a Memory revision for the item's scope, and refuses for the scope named refuse.
type heldHandler struct {
	hold     chan struct{}
	started  chan struct{}
	returned chan struct{}
	refuse   string
	mu       sync.Mutex
	commits  map[string]int
}

func (h *heldHandler) Kind() string { return testKind }
func (h *heldHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}
func (h *heldHandler) Prepare(_ context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	notify(h.started)
	<-h.hold
	defer notify(h.returned)
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}, Commit: func(ctx context.Context, q db.Queries, it db.WorkItem, now time.Time) error {
		h.mu.Lock()
		h.commits[it.ScopeID]++
		h.mu.Unlock()
		if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: it.ScopeID, Revision: 1, WorkID: it.WorkID,
			WindowAfter: it.LaneSequence, WindowThrough: it.LaneSequence, CreatedAt: now}); err != nil {
			return err
		}
		if it.ScopeID == h.refuse {
			return errDomainRefused
		}
		return nil
	}}, nil
}

func newHeldHandler(n int, refuse string) *heldHandler {
	return &heldHandler{hold: make(chan struct{}), started: make(chan struct{}, n), returned: make(chan struct{}, n),
		refuse: refuse, commits: map[string]int{}}
}

// heldLanes enqueues one item on each of n lanes "lane-00", "lane-01", … and returns their work ids by lane, with a
// held handler for them that refuses the domain commit of lane refuse.
func heldLanes(t *testing.T, l *coordinator.Ledger, n int, refuse string) (map[string]string, *heldHandler) {
	t.Helper()
	ids := map[string]string{}
	for i := range n {
		lane := fmt.Sprintf("lane-%02d", i)
		ids[lane] = enqueue(t, l, lane, "w", 5).Item.WorkID
	}
	return ids, newHeldHandler(n, refuse)
}

// batchSizes records the completer's transactions.
type batchSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (b *batchSizes) add(n int) { b.mu.Lock(); b.sizes = append(b.sizes, n); b.mu.Unlock() }
func (b *batchSizes) get() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}

// TestWorkerCompleterCommitsReadyCompletionsTogether: twelve attempts finish at once; the worker's completer commits
// them in shared transactions, and inside a batch a cancelled item and an item whose domain commit refuses end on
// their own paths (cancelled; retry_wait with its error pair) while the others succeed once each.
func TestWorkerCompleterCommitsReadyCompletionsTogether(t *testing.T) {
	const n = 12
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ids, h := heldLanes(t, l, n, "lane-03")
		var batches batchSizes
		ended := make(chan string, n)
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w1", Concurrency: n, Poll: 20 * time.Millisecond,
			Lease: time.Minute, Heartbeat: 15 * time.Second, RetryBase: time.Hour, RetryMax: time.Hour,
			CompleteDelay: 500 * time.Millisecond, Logger: zerolog.Nop(),
			Hooks: coordinator.WorkerHooks{CompleteBatch: batches.add,
				StartAttempt: func(ctx context.Context, _ coordinator.Claim) (context.Context, func(string, string)) {
					return ctx, func(outcome, _ string) { ended <- outcome }
				}}}, h)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		await(t, h.started, n, 30*time.Second, "not every item started")
		// Ask to cancel one running item; the worker learns it at its completion (the heartbeat is far away).
		it, err := l.Get(ctx, ids["lane-07"])
		require.NoError(t, err)
		_, err = l.Cancel(ctx, it.WorkID, it.StateVersion)
		require.NoError(t, err)
		close(h.hold)
		outcomes := map[string]int{}
		for range n {
			select {
			case o := <-ended:
				outcomes[o]++
			case <-time.After(30 * time.Second):
				t.Fatalf("attempts did not end: %v", outcomes)
			}
		}
		cancel()
		require.NoError(t, <-done)

		sizes := batches.get()
		total, largest := 0, 0
		for _, sz := range sizes {
			total += sz
			largest = max(largest, sz)
		}
		t.Logf("completer transactions: %v", sizes)
		require.Equal(t, n, total, "every completion went through the completer exactly once")
		require.GreaterOrEqual(t, largest, 2, "completions ready together share a transaction")
		require.Equal(t, map[string]int{db.OutcomeSucceeded: n - 2, db.OutcomeCancelled: 1, db.OutcomeRetryWait: 1}, outcomes)

		for lane, id := range ids {
			item, err := l.Get(context.Background(), id)
			require.NoError(t, err)
			attempts, err := l.Attempts(context.Background(), id)
			require.NoError(t, err)
			require.Len(t, attempts, 1, lane)
			_, revErr := s.MemoryRevisionLatest(context.Background(), lane)
			switch lane {
			case "lane-07":
				require.Equal(t, db.StatusCancelled, item.Status)
				require.Zero(t, h.commits[lane], "a cancelled item's domain commit never runs")
				require.ErrorIs(t, revErr, db.ErrNotFound)
			case "lane-03":
				require.Equal(t, db.StatusRetryWait, item.Status)
				require.NotEmpty(t, item.ErrorCategory)
				require.Equal(t, 1, h.commits[lane])
				require.ErrorIs(t, revErr, db.ErrNotFound, "the refusing item's savepoint rolled its write back")
			default:
				require.Equal(t, db.StatusSucceeded, item.Status, lane)
				require.Equal(t, db.OutcomeSucceeded, attempts[0].Outcome, lane)
				require.Equal(t, 1, h.commits[lane], lane)
				require.NoError(t, revErr, lane)
			}
		}
	})
}

// TestWorkerCompleterFlushesOnShutdown: a completion waiting in a long window commits as soon as the worker is told
// to stop, instead of waiting out the window (or the shutdown grace, which would abandon it).
func TestWorkerCompleterFlushesOnShutdown(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, _ db.Store, l *coordinator.Ledger) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		const n = 3
		ids, h := heldLanes(t, l, n, "")
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w1", Concurrency: n, Poll: 20 * time.Millisecond,
			Lease: time.Minute, Heartbeat: 15 * time.Second, ShutdownGrace: 50 * time.Second,
			CompleteDelay: time.Hour, Logger: zerolog.Nop()}, h)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		await(t, h.started, n, 30*time.Second, "not every item started")
		close(h.hold)
		await(t, h.returned, n, 30*time.Second, "prepares did not return")
		stopped := time.Now()
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("the worker did not stop: its completions waited for the window")
		}
		t.Logf("stopped %s after shutdown began", time.Since(stopped).Round(time.Millisecond))
		for _, id := range ids {
			item, err := l.Get(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, db.StatusSucceeded, item.Status, "a completion ready at shutdown is committed, not abandoned")
		}
	})
}
