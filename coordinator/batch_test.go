package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

// forBatchPaths runs fn on every engine for the set-based path (where the store has it; elsewhere it is the
// batched one) and the batched path.
func forBatchPaths(t *testing.T, fn func(t *testing.T, s db.Store, path coordinator.Path)) {
	for name, path := range map[string]coordinator.Path{"set": coordinator.PathSet, "batched": coordinator.PathBatched} {
		t.Run(name, func(t *testing.T) {
			enginetest.ForEach(t, func(t *testing.T, s db.Store) { fn(t, s, path) })
		})
	}
}

func enqueueReq(lane, window string) coordinator.EnqueueRequest {
	return coordinator.EnqueueRequest{
		LaneKey: hash(lane),
		Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane, LogicalKey: hash(lane + "/" + window),
				Payload: map[string]any{"window": window}, MaxAttempts: 5}, nil
		},
	}
}

func TestEnqueueManyOneTransaction(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		existing := enqueue(t, l, "lane-b", "w0", 5)

		// New and existing lanes, two windows of one lane (kept in the callers' order), a join and an idle window.
		reqs := []coordinator.EnqueueRequest{
			enqueueReq("lane-z", "w1"),
			enqueueReq("lane-b", "w1"),
			enqueueReq("lane-a", "w1"),
			enqueueReq("lane-b", "w0"), // joins
			enqueueReq("lane-z", "w2"),
			{LaneKey: hash("lane-c"), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) { return nil, nil }},
			enqueueReq("lane-z", "w1"), // the batch's own window again: joins it
		}
		res, err := l.EnqueueMany(ctx, reqs)
		require.NoError(t, err)
		require.Len(t, res, len(reqs))
		require.True(t, res[0].Created)
		require.EqualValues(t, 1, res[0].Item.LaneSequence)
		require.EqualValues(t, 2, res[4].Item.LaneSequence, "one lane's windows keep the callers' order")
		require.True(t, res[1].Created)
		require.EqualValues(t, 2, res[1].Item.LaneSequence)
		require.True(t, res[2].Created)
		require.False(t, res[3].Created)
		require.Equal(t, existing.Item.WorkID, res[3].Item.WorkID)
		require.True(t, res[5].Idle)
		require.False(t, res[6].Created)
		require.Equal(t, res[0].Item.WorkID, res[6].Item.WorkID)
		require.EqualValues(t, 1, res[6].Item.LaneSequence)
		for _, i := range []int{0, 1, 2, 4} {
			got, err := l.Get(ctx, res[i].Item.WorkID)
			require.NoError(t, err)
			require.Equal(t, res[i].Item.LaneSequence, got.LaneSequence)
		}

		// One failing request rolls the whole batch back.
		bad := enqueueReq("lane-d", "w1")
		bad.Spec = func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: "lane-a", LogicalKey: hash("lane-a/w1"),
				Payload: map[string]any{}, MaxAttempts: 5}, nil // lane-a's key from lane-d: identity mismatch
		}
		_, err = l.EnqueueMany(ctx, []coordinator.EnqueueRequest{enqueueReq("lane-a", "w9"), bad})
		require.ErrorIs(t, err, coordinator.ErrKeyIdentityMismatch)
		again := enqueue(t, l, "lane-a", "w9", 5)
		require.True(t, again.Created, "the batch's other enqueue was rolled back too")
		require.EqualValues(t, 2, again.Item.LaneSequence)

		// A stale scheduler lease refuses the whole batch.
		stale := coordinator.LeaseToken{Name: "nobody", Owner: "o", Fence: 1}
		r := enqueueReq("lane-e", "w1")
		r.Lease = &stale
		_, err = l.EnqueueMany(ctx, []coordinator.EnqueueRequest{r})
		require.ErrorIs(t, err, coordinator.ErrStaleCoordinatorLease)

		claims := claim(t, l, "w", 10, time.Minute)
		require.Len(t, claims, 3, "one head per lane: lane-a, lane-b, lane-z")
	})
}

// laneCreations counts the store's autocommitted lane creations by lane key.
type laneCreations struct {
	db.Store
	mu      sync.Mutex
	created map[string]int
}

func (s *laneCreations) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	s.mu.Lock()
	s.created[laneKey]++
	s.mu.Unlock()
	return s.Store.WorkLaneInsertIfAbsent(ctx, laneKey)
}

// TestEnqueueManyCreatesOnlyMissingLanes: the set path names every lane of the batch that does not exist, so a
// batch mixing existing and new lanes creates each new lane once and no existing one (the per-request path learns of
// one missing lane per transaction and may ask for existing ones too).
func TestEnqueueManyCreatesOnlyMissingLanes(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		counted := &laneCreations{Store: s, created: map[string]int{}}
		l := coordinator.NewLedger(counted)
		l.SetPath(coordinator.PathSet)
		lanes := []string{"lane-0", "lane-1", "lane-2", "lane-3", "lane-4", "lane-5", "lane-6", "lane-7"}
		for _, lane := range lanes[:4] {
			enqueue(t, l, lane, "w0", 5)
		}
		clear(counted.created)

		var reqs []coordinator.EnqueueRequest
		for _, lane := range lanes {
			reqs = append(reqs, enqueueReq(lane, "w1"))
		}
		res, err := l.EnqueueMany(ctx, reqs)
		require.NoError(t, err)
		want := map[string]int{}
		for i, lane := range lanes {
			require.True(t, res[i].Created, lane)
			if i < 4 {
				require.EqualValues(t, 2, res[i].Item.LaneSequence, "%s: after its w0", lane)
			} else {
				require.EqualValues(t, 1, res[i].Item.LaneSequence, "%s: a new lane", lane)
				want[hash(lane)] = 1
			}
		}
		require.Equal(t, want, counted.created, "each new lane created once, no existing lane")
	})
}

// revisionCommit is a domain commit that writes one memory revision for the item's scope (and marks that it ran);
// with fail set it writes it and then refuses, so only its savepoint's rollback can undo the write.
func revisionCommit(ran *bool, fail error) coordinator.DomainCommit {
	return func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
		*ran = true
		if err := q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: item.ScopeID, Revision: 1, WorkID: item.WorkID,
			WindowAfter: item.LaneSequence, WindowThrough: item.LaneSequence, CreatedAt: time.Now()}); err != nil {
			return err
		}
		return fail
	}
}

func TestCompleteManyCommitsOnlyValidClaims(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		byLane := func(claims []coordinator.Claim) map[string]coordinator.Claim {
			m := map[string]coordinator.Claim{}
			for _, c := range claims {
				m[c.Item.ScopeID] = c
			}
			return m
		}

		// lane-s: claimed by a worker whose lease then expires and is taken over (its claim is stale).
		enqueue(t, l, "lane-s", "w1", 5)
		old := claim(t, l, "worker-old", 1, 200*time.Millisecond)
		require.Len(t, old, 1)
		for _, lane := range []string{"lane-v", "lane-c", "lane-f"} {
			enqueue(t, l, lane, "w1", 5)
		}
		testutil.WaitDBPast(t, s, old[0].LeaseExpiresAt)
		res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "worker-new", Supported: supported, Slots: 8, Lease: time.Minute})
		require.NoError(t, err)
		require.Equal(t, 1, res.Expired)
		claims := byLane(res.Claims)
		require.Len(t, claims, 3)
		fresh := claim(t, l, "worker-new", 1, time.Minute)
		require.Len(t, fresh, 1)
		require.Equal(t, old[0].Fence+1, fresh[0].Fence)

		// lane-c: the operator asks to cancel while it runs.
		cancelled := claims["lane-c"]
		_, err = l.Cancel(ctx, cancelled.Item.WorkID, cancelled.Item.StateVersion)
		require.NoError(t, err)

		errRefused := errors.New("domain refused")
		var ranValid, ranStale, ranCancelled, ranFailed bool
		out := l.CompleteMany(ctx, []coordinator.Completion{
			{Claim: claims["lane-v"], Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(&ranValid, nil)},
			{Claim: old[0], Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(&ranStale, nil)},
			{Claim: cancelled, Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(&ranCancelled, nil)},
			{Claim: claims["lane-f"], Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(&ranFailed, errRefused)},
		})
		require.Len(t, out, 4)
		require.NoError(t, out[0].Err)
		require.Equal(t, db.StatusSucceeded, out[0].Item.Status)
		require.ErrorIs(t, out[1].Err, coordinator.ErrStaleWorkClaim)
		require.ErrorIs(t, out[2].Err, coordinator.ErrCancelRequested)
		require.ErrorIs(t, out[3].Err, errRefused)
		require.True(t, ranValid)
		require.False(t, ranStale, "a stale claim's domain commit never runs")
		require.False(t, ranCancelled, "a cancelled claim's domain commit never runs")
		require.True(t, ranFailed)

		// Only the valid item's domain write committed.
		_, err = s.MemoryRevisionLatest(ctx, "lane-v")
		require.NoError(t, err)
		for _, scope := range []string{"lane-s", "lane-c", "lane-f"} {
			_, err := s.MemoryRevisionLatest(ctx, scope)
			require.ErrorIs(t, err, db.ErrNotFound, scope)
		}
		valid, err := l.Get(ctx, claims["lane-v"].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusSucceeded, valid.Status)
		lane, err := s.WorkLaneGet(ctx, hash("lane-v"))
		require.NoError(t, err)
		require.Zero(t, lane.HeadSequence, "the valid item's lane head advanced (idle)")
		c, err := l.Get(ctx, cancelled.Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelling, c.Status)

		// The refused and the taken-over items are untouched: their keys and heads are back, and their current
		// claims still complete (one batch again).
		out = l.CompleteMany(ctx, []coordinator.Completion{
			{Claim: claims["lane-f"], Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(new(bool), nil)},
			{Claim: fresh[0], Result: coordinator.Result{Code: "processed"}, Commit: revisionCommit(new(bool), nil)},
		})
		require.NoError(t, out[0].Err)
		require.NoError(t, out[1].Err)
		for _, scope := range []string{"lane-s", "lane-f"} {
			_, err := s.MemoryRevisionLatest(ctx, scope)
			require.NoError(t, err, scope)
		}
		again := enqueue(t, l, "lane-f", "w1", 5)
		require.True(t, again.Created, "the committed item's key was deleted, so the window is new again")
	})
}

// TestClaimPathsAgree runs the same claim scenario on every claim pass: set-based (one statement, where the store
// has it), batched and per-candidate.
func TestClaimPathsAgree(t *testing.T) {
	for name, path := range map[string]coordinator.Path{"set": coordinator.PathSet, "batched": coordinator.PathBatched,
		"per-candidate": coordinator.PathPerItem} {
		t.Run(name, func(t *testing.T) {
			enginetest.ForEach(t, func(t *testing.T, s db.Store) {
				ctx := context.Background()
				l := coordinator.NewLedger(s)
				l.SetPath(path)
				for _, lane := range []string{"l1", "l2", "l3"} {
					enqueue(t, l, lane, "w1", 5)
					enqueue(t, l, lane, "w2", 5)
				}
				_, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: hash("l4"),
					Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
						return &coordinator.EnqueueSpec{Kind: "other.kind", PayloadVersion: 1, ScopeID: "l4", LogicalKey: hash("l4/w1"),
							Payload: map[string]any{}, MaxAttempts: 5}, nil
					}})
				require.NoError(t, err)

				two := claim(t, l, "w", 2, time.Minute)
				require.Len(t, two, 2, "never more than the slots")
				rest := claim(t, l, "w", 10, time.Minute)
				require.Len(t, rest, 1, "only lane heads, only supported kinds")
				all := append(two, rest...)
				seen := map[string]bool{}
				for _, c := range all {
					require.EqualValues(t, 1, c.Item.LaneSequence, "the head of its lane")
					require.EqualValues(t, 1, c.Fence)
					require.EqualValues(t, 1, c.AttemptNo)
					require.Equal(t, db.StatusRunning, c.Item.Status)
					require.False(t, seen[c.Item.LaneKey], "one claim per lane")
					seen[c.Item.LaneKey] = true
					attempts, err := l.Attempts(ctx, c.Item.WorkID)
					require.NoError(t, err)
					require.Len(t, attempts, 1)
					require.Equal(t, "w", attempts[0].OwnerID)
					got, err := l.Get(ctx, c.Item.WorkID)
					require.NoError(t, err)
					require.Equal(t, c.Item, got)
				}
				require.Empty(t, claim(t, l, "w", 10, time.Minute), "running heads block their lanes")
				for _, c := range all {
					_, err := l.Complete(ctx, c, coordinator.Result{Code: "processed"}, nil)
					require.NoError(t, err)
				}
				next := claim(t, l, "w", 10, time.Minute)
				require.Len(t, next, 3)
				for _, c := range next {
					require.EqualValues(t, 2, c.Item.LaneSequence, "lane order")
				}
			})
		})
	}
}

// TestBatchedClaimSkipsHeldLanes holds one lane's lock in another transaction: the batched pass claims the other
// lanes' heads at once instead of waiting (PostgreSQL and MySQL; SQLite's single writer never has a held row).
func TestBatchedClaimSkipsHeldLanes(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		if s.Engine() == db.EngineSQLite || !s.SkipLocked() {
			t.Skip("no row is ever held by another transaction here")
		}
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		for _, lane := range []string{"a", "b", "c"} {
			enqueue(t, l, lane, "w1", 5)
		}
		locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
				if _, _, err := q.WorkLaneLock(ctx, hash("b")); err != nil {
					return err
				}
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		// Lane b is released only after this pass returns, so a pass that waited for it could never finish:
		// returning at all is the proof. The deadline turns such a hang into a failure; it is not a speed claim.
		noWait, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := l.Claim(noWait, coordinator.ClaimRequest{Owner: "w", Supported: supported, Slots: 10, Lease: time.Minute})
		cancel()
		require.NoError(t, err, "the pass must not wait for the held lane")
		claims := res.Claims
		require.Len(t, claims, 2)
		for _, c := range claims {
			require.NotEqual(t, hash("b"), c.Item.LaneKey)
		}
		close(release)
		require.NoError(t, <-done)
		later := claim(t, l, "w", 10, time.Minute)
		require.Len(t, later, 1)
		require.Equal(t, hash("b"), later[0].Item.LaneKey)
	})
}

// TestCompleteManyCommitsAloneItemsOnTheirOwn: a completion marked Alone (a domain commit that locks more lanes) is
// committed in a transaction of its own after the batch, not inside it: its commit sees the batch's item already
// succeeded.
func TestCompleteManyCommitsAloneItemsOnTheirOwn(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		enqueue(t, l, "alone-a", "w1", 5)
		enqueue(t, l, "alone-b", "w1", 5)
		claims := claim(t, l, "w", 2, time.Minute)
		require.Len(t, claims, 2)
		batched, alone := claims[0], claims[1]
		var sawBatched string
		out := l.CompleteMany(ctx, []coordinator.Completion{
			{Claim: alone, Result: coordinator.Result{Code: "processed"}, Alone: true,
				Commit: func(ctx context.Context, q db.Queries, _ db.WorkItem, _ time.Time) error {
					it, err := q.WorkItemGet(ctx, batched.Item.WorkID)
					sawBatched = it.Status
					return err
				}},
			{Claim: batched, Result: coordinator.Result{Code: "processed"}},
		})
		require.NoError(t, out[0].Err)
		require.NoError(t, out[1].Err)
		require.Equal(t, db.StatusSucceeded, out[0].Item.Status)
		require.Equal(t, db.StatusSucceeded, sawBatched, "the alone item committed after the batch, in its own transaction")
	})
}

// TestCompleteManyRefusesABadCodeAlone: a result code outside printable ASCII is the caller's mistake, refused
// before the batch's transaction, so the other completions of the batch commit (on MySQL mode the set-based finish
// is one statement for the batch, whose ASCII column would otherwise fail it as a whole).
func TestCompleteManyRefusesABadCodeAlone(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		_, err := l.EnqueueMany(ctx, []coordinator.EnqueueRequest{enqueueReq("lane-1", "w"), enqueueReq("lane-2", "w"), enqueueReq("lane-3", "w")})
		require.NoError(t, err)
		claims := claim(t, l, "w", 3, time.Minute)
		require.Len(t, claims, 3)
		out := l.CompleteMany(ctx, []coordinator.Completion{
			{Claim: claims[0], Result: coordinator.Result{Code: "processed"}},
			{Claim: claims[1], Result: coordinator.Result{Code: "café"}},
			{Claim: claims[2], Result: coordinator.Result{Code: "tab\tcode"}},
		})
		require.NoError(t, out[0].Err, "the valid completion commits")
		require.ErrorIs(t, out[1].Err, coordinator.ErrInvalidArgument)
		require.ErrorIs(t, out[2].Err, coordinator.ErrInvalidArgument)
		item, err := s.WorkItemGet(ctx, claims[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusSucceeded, item.Status)
		for _, c := range claims[1:] {
			item, err := s.WorkItemGet(ctx, c.Item.WorkID)
			require.NoError(t, err)
			require.Equal(t, db.StatusRunning, item.Status, "a refused completion writes nothing")
		}
		_, err = l.Fail(ctx, claims[1], coordinator.Failure{Category: "provider", Code: "ünavailable", Retryable: true}, 0)
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
		_, err = l.Snooze(ctx, claims[1], coordinator.Failure{Category: "prövider", Code: "rate_limited"}, 0, 3)
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
	})
}

// TestEnqueueRefusesAKindThatIsNotUTF8: such a kind is refused on every path and engine, where the MySQL-mode set
// statement's JSON argument would otherwise have stored it altered (U+FFFD in place of the bad byte).
func TestEnqueueRefusesAKindThatIsNotUTF8(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		bad := coordinator.EnqueueRequest{LaneKey: hash("lane-bad"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: "bad-\xff-kind", PayloadVersion: 1, ScopeID: "lane-bad",
					LogicalKey: hash("lane-bad/w"), Payload: map[string]any{}, MaxAttempts: 5}, nil
			}}
		_, err := l.EnqueueMany(ctx, []coordinator.EnqueueRequest{enqueueReq("lane-good", "w"), bad})
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
		_, err = l.Enqueue(ctx, bad)
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
		n, err := l.UnsupportedHeadCount(ctx, coordinator.Supported{})
		require.NoError(t, err)
		require.Zero(t, n, "nothing was written")
	})
}

// TestEnqueueManyLargePayloads: a batch of windows with payloads near the 16 KiB bound lands on every engine and
// path. MySQL mode's set statement names its JSON argument once per column, and the driver writes every copy into
// the statement, so the batch is cut into statements that fit max_allowed_packet by their whole text.
func TestEnqueueManyLargePayloads(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		big := strings.Repeat("x", 15000)
		var reqs []coordinator.EnqueueRequest
		for i := range 100 {
			lane := fmt.Sprintf("lane-%d", i)
			reqs = append(reqs, coordinator.EnqueueRequest{LaneKey: hash(lane),
				Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
					return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane, LogicalKey: hash(lane + "/w"),
						Payload: map[string]any{"blob": big}, MaxAttempts: 5}, nil
				}})
		}
		res, err := l.EnqueueMany(context.Background(), reqs)
		require.NoError(t, err)
		require.Len(t, res, 100)
		for _, r := range res {
			require.True(t, r.Created)
			item, err := s.WorkItemGet(context.Background(), r.Item.WorkID)
			require.NoError(t, err)
			require.Contains(t, string(item.Payload), big)
		}
	})
}

// TestCompleteManyLargeResults: a batch completion whose result payloads together exceed what one MySQL-mode
// statement may carry still finishes every item (item by item there), instead of failing the batch.
func TestCompleteManyLargeResults(t *testing.T) {
	forBatchPaths(t, func(t *testing.T, s db.Store, path coordinator.Path) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		l.SetPath(path)
		const n = 300
		var reqs []coordinator.EnqueueRequest
		for i := range n {
			reqs = append(reqs, enqueueReq(fmt.Sprintf("lane-%d", i), "w"))
		}
		_, err := l.EnqueueMany(ctx, reqs)
		require.NoError(t, err)
		var claims []coordinator.Claim
		for len(claims) < n {
			c := claim(t, l, "w", n-len(claims), time.Minute)
			require.NotEmpty(t, c)
			claims = append(claims, c...)
		}
		big := strings.Repeat("y", 15000)
		cs := make([]coordinator.Completion, len(claims))
		for i, c := range claims {
			cs[i] = coordinator.Completion{Claim: c, Result: coordinator.Result{Code: "processed", Payload: map[string]any{"r": big}}}
		}
		for i, o := range l.CompleteMany(ctx, cs) {
			require.NoError(t, o.Err, "completion %d", i)
		}
		item, err := s.WorkItemGet(ctx, claims[n-1].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusSucceeded, item.Status)
		require.Contains(t, string(item.ResultPayload), big)
	})
}
