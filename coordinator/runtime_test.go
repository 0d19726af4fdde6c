package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

func TestSchedulerLeaseFencing(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		a, err := l.AcquireLease(ctx, "test-lease", "owner-a", 300*time.Millisecond)
		require.NoError(t, err)
		require.True(t, a.Acquired)
		require.Equal(t, int64(1), a.Token.Fence)

		renew, err := l.AcquireLease(ctx, "test-lease", "owner-a", 300*time.Millisecond)
		require.NoError(t, err)
		require.True(t, renew.Renewed)
		require.Equal(t, a.Token.Fence, renew.Token.Fence, "renewal keeps the fence")

		other, err := l.AcquireLease(ctx, "test-lease", "owner-b", time.Minute)
		require.NoError(t, err)
		require.False(t, other.Acquired)
		require.Equal(t, "owner-a", other.HolderID)
		require.NoError(t, l.AssertLease(ctx, renew.Token))

		testutil.WaitDBPast(t, s, renew.Token.ExpiresAt)
		require.ErrorIs(t, l.AssertLease(ctx, renew.Token), coordinator.ErrStaleCoordinatorLease, "an expired lease fails assert")
		b, err := l.AcquireLease(ctx, "test-lease", "owner-b", time.Minute)
		require.NoError(t, err)
		require.True(t, b.Acquired)
		require.Equal(t, int64(2), b.Token.Fence, "takeover after expiry increments the fence")
		require.ErrorIs(t, l.AssertLease(ctx, renew.Token), coordinator.ErrStaleCoordinatorLease)
		require.ErrorIs(t, l.ReleaseLease(ctx, renew.Token), coordinator.ErrStaleCoordinatorLease)

		require.NoError(t, l.ReleaseLease(ctx, b.Token))
		row, err := s.SchedulerLeaseGet(ctx, "test-lease")
		require.NoError(t, err)
		require.Empty(t, row.OwnerID)
		require.Equal(t, int64(2), row.Fence, "release keeps the fence")
		c, err := l.AcquireLease(ctx, "test-lease", "owner-a", time.Minute)
		require.NoError(t, err)
		require.Equal(t, int64(3), c.Token.Fence)
	})
}

// pageDiscoverer returns reqs from a func so tests can block or count.
type pageDiscoverer struct {
	name string
	page func(ctx context.Context, continuation string) ([]coordinator.EnqueueRequest, string, error)
}

func (d pageDiscoverer) Name() string            { return d.name }
func (d pageDiscoverer) Interval() time.Duration { return time.Hour }
func (d pageDiscoverer) Page(ctx context.Context, c string, _ int) ([]coordinator.EnqueueRequest, string, error) {
	return d.page(ctx, c)
}

func windowRequests(lane string, n int) []coordinator.EnqueueRequest {
	var out []coordinator.EnqueueRequest
	for i := range n {
		window := fmt.Sprintf("w%d", i)
		out = append(out, coordinator.EnqueueRequest{LaneKey: hash(lane), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane, LogicalKey: hash(lane + "/" + window),
				Payload: map[string]any{}, MaxAttempts: 5}, nil
		}})
	}
	return out
}

func countItems(t *testing.T, l *coordinator.Ledger) int { return len(listAll(t, l)) }

func TestDeposedLeaderWritesNothing(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		entered, release := make(chan struct{}), make(chan struct{})
		oldDisc := pageDiscoverer{name: "test", page: func(ctx context.Context, _ string) ([]coordinator.EnqueueRequest, string, error) {
			close(entered)
			<-release
			return windowRequests("old", 3), "", nil
		}}
		old, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "old", Lease: 300 * time.Millisecond, Renew: 100 * time.Millisecond}, oldDisc)
		require.NoError(t, err)
		oldDone := make(chan error, 1)
		go func() { oldDone <- old.Tick(ctx) }()
		<-entered
		tok, leader := old.Leader()
		require.True(t, leader)
		testutil.WaitDBPast(t, s, tok.ExpiresAt)

		var events []string
		newDisc := pageDiscoverer{name: "test", page: func(context.Context, string) ([]coordinator.EnqueueRequest, string, error) {
			return nil, "", nil
		}}
		fresh, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "new", Lease: time.Minute,
			Hooks: coordinator.SchedulerHooks{Leadership: func(e string, _ int64) { events = append(events, e) }}}, newDisc)
		require.NoError(t, err)
		require.NoError(t, fresh.Tick(ctx))
		newTok, leader := fresh.Leader()
		require.True(t, leader)
		require.Equal(t, tok.Fence+1, newTok.Fence)
		require.Equal(t, []string{coordinator.LeadershipAcquired}, events)
		scanBefore, err := s.SchedulerScanGet(ctx, "test")
		require.NoError(t, err)

		close(release)
		require.NoError(t, <-oldDone, "a deposed leader steps down quietly")
		_, leader = old.Leader()
		require.False(t, leader)
		require.Zero(t, countItems(t, l), "the deposed leader enqueued nothing")
		scanAfter, err := s.SchedulerScanGet(ctx, "test")
		require.NoError(t, err)
		require.Equal(t, scanBefore, scanAfter, "the deposed leader saved no scan position")
	})
}

func TestSchedulerCrashMidPageRescansAndJoins(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		l := coordinator.NewLedger(s)
		disc := pageDiscoverer{name: "test", page: func(context.Context, string) ([]coordinator.EnqueueRequest, string, error) {
			return windowRequests("lane", 10), "", nil
		}}
		crashCtx, crash := context.WithCancel(context.Background())
		var n int
		// The lease must outlive five enqueues on a loaded machine, or the sixth meets an expired lease and the
		// first scheduler steps down quietly instead of crashing.
		first, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "first", Lease: 2 * time.Second,
			Hooks: coordinator.SchedulerHooks{Enqueued: func(string, coordinator.EnqueueResult) {
				if n++; n == 5 {
					crash()
				}
			}}}, disc)
		require.NoError(t, err)
		require.ErrorIs(t, first.Tick(crashCtx), context.Canceled)
		require.Equal(t, 5, countItems(t, l))
		tok, _ := first.Leader()
		testutil.WaitDBPast(t, s, tok.ExpiresAt)

		var created, joined int
		second, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "second", Lease: time.Minute,
			Hooks: coordinator.SchedulerHooks{Enqueued: func(_ string, r coordinator.EnqueueResult) {
				if r.Created {
					created++
				} else {
					joined++
				}
			}}}, disc)
		require.NoError(t, err)
		require.NoError(t, second.Tick(context.Background()))
		require.Equal(t, 5, joined, "the rescanned half joins its items")
		require.Equal(t, 5, created)
		require.Equal(t, 10, countItems(t, l), "no duplicate items")
		scan, err := s.SchedulerScanGet(context.Background(), "test")
		require.NoError(t, err)
		require.Equal(t, int64(2), scan.StateVersion)
	})
}

// slotHandler tracks concurrency and signals what it does; each field below is optional.
type slotHandler struct {
	kind            string
	running, maxRun atomic.Int32
	commits         atomic.Int32
	// overlap > 0: the first Prepares wait until that many run at once (so the slot limit is observable without
	// timing); later ones do not wait.
	overlap    int32
	overlapped chan struct{}
	overlapOne sync.Once
	// hold: Prepare blocks until it is closed, like a handler stuck in a provider call; when its context is
	// cancelled meanwhile it sends on ctxDone, and still waits for hold.
	hold    chan struct{}
	ctxDone chan struct{}
	started chan struct{} // receives once per Prepare (buffered)
	commit  chan struct{} // receives once per domain commit (buffered)
}

func (h *slotHandler) Kind() string { return h.kind }
func (h *slotHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}
func (h *slotHandler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for {
		m := h.maxRun.Load()
		if n <= m || h.maxRun.CompareAndSwap(m, n) {
			break
		}
	}
	notify(h.started)
	switch {
	case h.hold != nil:
		select {
		case <-h.hold:
		case <-ctx.Done():
			notify(h.ctxDone)
			<-h.hold
		}
	case h.overlap > 0:
		if n >= h.overlap {
			h.overlapOne.Do(func() { close(h.overlapped) })
		}
		<-h.overlapped
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}, Commit: func(context.Context, db.Queries, db.WorkItem, time.Time) error {
		h.commits.Add(1)
		notify(h.commit)
		return nil
	}}, nil
}

// notify sends on a buffered signal channel without blocking (nil: no-op).
func notify(c chan struct{}) {
	if c == nil {
		return
	}
	select {
	case c <- struct{}{}:
	default:
	}
}

// await receives n signals from c or fails after d.
func await(t *testing.T, c <-chan struct{}, n int, d time.Duration, msg string) {
	t.Helper()
	timeout := time.After(d)
	for range n {
		select {
		case <-c:
		case <-timeout:
			t.Fatal(msg)
		}
	}
}

func TestWorkerRespectsSlotsAndSupportedKinds(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := coordinator.NewLedger(s)
		for i := range 10 {
			enqueue(t, l, fmt.Sprintf("lane-%d", i), "w", 5)
		}
		other, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: hash("other"), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: "other.kind", PayloadVersion: 1, ScopeID: "other", LogicalKey: hash("other"), Payload: map[string]any{}, MaxAttempts: 5}, nil
		}})
		require.NoError(t, err)
		h := &slotHandler{kind: testKind, overlap: 2, overlapped: make(chan struct{}), commit: make(chan struct{}, 10)}
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w1", Concurrency: 2, Poll: 20 * time.Millisecond, Logger: zerolog.Nop()}, h)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		await(t, h.commit, 10, 30*time.Second, "worker did not finish (or never ran two handlers at once)")
		cancel()
		require.NoError(t, <-done)
		require.Equal(t, int32(10), h.commits.Load())
		require.Equal(t, int32(2), h.maxRun.Load(), "two handlers at once, never more than the slots")
		it, err := l.Get(context.Background(), other.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusQueued, it.Status, "an unsupported kind is never claimed")
		require.Zero(t, it.AttemptCount)
	})
}

func TestWorkerCancelWhileBlockedInPrepare(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := coordinator.NewLedger(s)
		res := enqueue(t, l, "lane", "w", 5)
		h := &slotHandler{kind: testKind, hold: make(chan struct{}), ctxDone: make(chan struct{}, 1), started: make(chan struct{}, 1)}
		ended := make(chan string, 1)
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w1", Concurrency: 1, Poll: 20 * time.Millisecond,
			Lease: 2 * time.Second, Heartbeat: 100 * time.Millisecond, Logger: zerolog.Nop(),
			Hooks: coordinator.WorkerHooks{StartAttempt: func(ctx context.Context, _ coordinator.Claim) (context.Context, func(string, string)) {
				return ctx, func(outcome, _ string) { ended <- outcome }
			}}}, h)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		await(t, h.started, 1, 10*time.Second, "handler did not start")
		it, err := l.Get(ctx, res.Item.WorkID)
		require.NoError(t, err)
		_, err = l.Cancel(ctx, it.WorkID, it.StateVersion)
		require.NoError(t, err)
		await(t, h.ctxDone, 1, 10*time.Second, "no heartbeat observed the cancel request")
		close(h.hold)
		released := time.Now()
		select {
		case outcome := <-ended:
			require.Equal(t, db.OutcomeCancelled, outcome)
		case <-time.After(2 * time.Second):
			t.Fatal("attempt did not end within 2 s of the handler returning")
		}
		t.Logf("cancelled %s after the handler returned", time.Since(released).Round(time.Millisecond))
		it, err = l.Get(context.Background(), res.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelled, it.Status)
		require.Zero(t, h.commits.Load(), "no domain commit")
		attempts, err := l.Attempts(context.Background(), res.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.OutcomeCancelled, attempts[0].Outcome)
		cancel()
		require.NoError(t, <-done)
	})
}

func TestRateLimiterFixedWindow(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		r := coordinator.NewRateLimiter(s)
		var allowed []bool
		var remaining []int
		var last coordinator.RateDecision
		for range 3 {
			d, err := r.Allow(context.Background(), "principal-1", "http", 2, time.Minute)
			require.NoError(t, err)
			allowed, remaining, last = append(allowed, d.Allowed), append(remaining, d.Remaining), d
		}
		require.Equal(t, []bool{true, true, false}, allowed)
		require.Equal(t, []int{1, 0, 0}, remaining)
		require.Greater(t, last.RetryAfter, time.Duration(0))
		d, err := r.Allow(context.Background(), "principal-2", "http", 2, time.Minute)
		require.NoError(t, err)
		require.True(t, d.Allowed, "principals are counted apart")
	})
}

func TestSingleNodeRuntimeIsExclusive(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		first, err := l.AcquireSingleNode(ctx, "member-1", time.Minute)
		require.NoError(t, err)
		_, err = l.AcquireSingleNode(ctx, "member-2", time.Minute)
		var running *coordinator.ErrRuntimeAlreadyRunning
		require.True(t, errors.As(err, &running), "a second runtime is refused: %v", err)
		require.Equal(t, "member-1", running.Holder)
		require.NoError(t, l.ReleaseLease(ctx, first))
		_, err = l.AcquireSingleNode(ctx, "member-2", time.Minute)
		require.NoError(t, err, "after the first stops the second may start")
	})
}

func TestMaintenancePurgesOldTerminalWorkOnly(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		enqueue(t, l, "ok", "w", 5)
		c := claim(t, l, "w", 1, time.Minute)
		require.Len(t, c, 1)
		ok, err := l.Complete(ctx, c[0], coordinator.Result{Code: "processed"}, nil)
		require.NoError(t, err)
		enqueue(t, l, "bad", "w", 1)
		c = claim(t, l, "w", 1, time.Minute)
		require.Len(t, c, 1)
		bad, err := l.Fail(ctx, c[0], coordinator.Failure{Category: "payload", Code: "invalid_payload"}, 0)
		require.NoError(t, err)
		_, err = coordinator.NewRateLimiter(s).Allow(ctx, "p", "http", 5, 50*time.Millisecond)
		require.NoError(t, err)
		// The window ends at most 50 ms after the Allow, which on a loaded machine can come well after the
		// Complete: wait until both the item's retention and the window have passed on database time.
		allowed, err := s.DBNow(ctx)
		require.NoError(t, err)
		testutil.WaitDBPast(t, s, ok.CompletedAt.Add(100*time.Millisecond))
		testutil.WaitDBPast(t, s, allowed.Add(50*time.Millisecond))
		// Dashboard sessions: an expired one is purged, a live one stays.
		expiredSession := db.UISession{SessionDigest: strings.Repeat("a", 64), PrincipalName: "admin", PrincipalBinding: "b",
			CreatedAt: allowed.Add(-time.Hour), ExpiresAt: allowed.Add(-time.Second)}
		liveSession := db.UISession{SessionDigest: strings.Repeat("b", 64), PrincipalName: "admin", PrincipalBinding: "b",
			CreatedAt: allowed, ExpiresAt: allowed.Add(time.Hour)}
		require.NoError(t, s.UISessionInsert(ctx, expiredSession))
		require.NoError(t, s.UISessionInsert(ctx, liveSession))

		p, err := coordinator.MaintenanceHandler{Ledger: l, Retention: 50 * time.Millisecond}.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, map[string]any{"type": "maintenance", "purged_items": int64(1), "purged_rate_limit_windows": int64(1), "purged_runtime_members": int64(0),
			"purged_ui_sessions": int64(1)}, p.Result.Payload)
		_, err = s.UISessionGetUnexpired(ctx, liveSession.SessionDigest)
		require.NoError(t, err, "a live session is not purged")
		_, err = l.Get(ctx, ok.WorkID)
		require.ErrorIs(t, err, coordinator.ErrNotFound)
		kept, err := l.Get(ctx, bad.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, kept.Status)

		// The maintenance item itself runs through the ledger like any other work.
		sched, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "s", Lease: time.Minute}, coordinator.MaintenanceDiscoverer{})
		require.NoError(t, err)
		require.NoError(t, sched.Tick(ctx))
		items, err := l.List(ctx, coordinator.ListParams{Kinds: []string{coordinator.KindMaintenance}, Limit: 10})
		require.NoError(t, err)
		require.Len(t, items, 1)
		require.NoError(t, sched.Tick(ctx))
		items, err = l.List(ctx, coordinator.ListParams{Kinds: []string{coordinator.KindMaintenance}, Limit: 10})
		require.NoError(t, err)
		require.Len(t, items, 1, "not due again within the hour")
	})
}

// TestMaintenancePurgesLongExpiredMembers: member rows that expired more than MemberRetention ago (database time)
// are purged, in batches (more rows than one batch), while recently expired and live rows stay.
func TestMaintenancePurgesLongExpiredMembers(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		member := func(id string, expires time.Time) db.RuntimeMember {
			return db.RuntimeMember{MemberID: id, Role: "worker", BuildVersion: "test", SchemaMin: 1, SchemaMax: 1,
				PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "r", StartedAt: expires.Add(-time.Minute),
				HeartbeatAt: expires.Add(-30 * time.Second), ExpiresAt: expires}
		}
		const old = 501 // one more than a purge batch
		for i := range old {
			require.NoError(t, s.RuntimeMemberUpsert(ctx, member(fmt.Sprintf("old-%03d", i), now.Add(-2*time.Hour-time.Duration(i)*time.Second))))
		}
		recent := member("recent", now.Add(-time.Minute))
		live := member("live", now.Add(time.Hour))
		require.NoError(t, s.RuntimeMemberUpsert(ctx, recent))
		require.NoError(t, s.RuntimeMemberUpsert(ctx, live))

		p, err := coordinator.MaintenanceHandler{Ledger: l, MemberRetention: time.Hour}.Prepare(ctx, db.WorkItem{})
		require.NoError(t, err)
		require.Equal(t, int64(old), p.Result.Payload.(map[string]any)["purged_runtime_members"])

		// What is left: the recent and the live row (listed as of an instant before both expired).
		left, err := s.RuntimeMemberListLive(ctx, now.Add(-2*time.Hour-time.Duration(old)*time.Second))
		require.NoError(t, err)
		ids := make([]string, 0, len(left))
		for _, m := range left {
			ids = append(ids, m.MemberID)
		}
		require.Equal(t, []string{"live", "recent"}, ids)
	})
}
