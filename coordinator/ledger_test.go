package coordinator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

const testKind = "test.kind"

var supported = coordinator.Supported{testKind: {Min: 1, Max: 1}}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// eachLedger runs fn on every engine under test, with a ledger over that engine's store.
func eachLedger(t *testing.T, fn func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger)) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) { fn(t, context.Background(), s, coordinator.NewLedger(s)) })
}

// enqueue creates (or joins) the item for window name in lane.
func enqueue(t *testing.T, l *coordinator.Ledger, lane, window string, maxAttempts int32) coordinator.EnqueueResult {
	t.Helper()
	res, err := l.Enqueue(context.Background(), coordinator.EnqueueRequest{
		LaneKey: hash(lane),
		Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane, LogicalKey: hash(lane + "/" + window),
				Payload: map[string]any{"window": window}, MaxAttempts: maxAttempts}, nil
		},
	})
	require.NoError(t, err)
	return res
}

func claim(t *testing.T, l *coordinator.Ledger, owner string, slots int, lease time.Duration) []coordinator.Claim {
	t.Helper()
	res, err := l.Claim(context.Background(), coordinator.ClaimRequest{Owner: owner, Supported: supported, Slots: slots, Lease: lease})
	require.NoError(t, err)
	return res.Claims
}

// takenOver enqueues one item on lane "lane", claims it as worker-old with a short lease, waits until the lease has
// expired on the database clock, and has worker-new expire it (the first pass only expires the head, which waits in
// retry_wait with the lease pair) and claim it again. old's claim is then stale.
func takenOver(t *testing.T, s db.Store, l *coordinator.Ledger) (old, fresh []coordinator.Claim) {
	t.Helper()
	ctx := context.Background()
	enqueue(t, l, "lane", "w1", 5)
	old = claim(t, l, "worker-old", 1, 200*time.Millisecond)
	require.Len(t, old, 1)
	testutil.WaitDBPast(t, s, old[0].LeaseExpiresAt)
	res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "worker-new", Supported: supported, Slots: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Empty(t, res.Claims, "the first pass only expires the head")
	require.Equal(t, 1, res.Expired)
	item, err := l.Get(ctx, old[0].Item.WorkID)
	require.NoError(t, err)
	require.Equal(t, db.StatusRetryWait, item.Status)
	require.Equal(t, "lease", item.ErrorCategory)
	require.Equal(t, "lease_expired", item.ErrorCode)
	fresh = claim(t, l, "worker-new", 1, time.Minute)
	require.Len(t, fresh, 1)
	return old, fresh
}

func TestEnqueueJoinsByLogicalKey(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		l := coordinator.NewLedger(s)
		first := enqueue(t, l, "lane-a", "w1", 5)
		require.True(t, first.Created)
		require.Equal(t, int64(1), first.Item.LaneSequence)
		require.Equal(t, db.StatusQueued, first.Item.Status)
		require.Equal(t, int64(1), first.Item.StateVersion)

		again := enqueue(t, l, "lane-a", "w1", 5)
		require.False(t, again.Created)
		require.Equal(t, first.Item.WorkID, again.Item.WorkID)

		second := enqueue(t, l, "lane-a", "w2", 5)
		require.True(t, second.Created)
		require.Equal(t, int64(2), second.Item.LaneSequence)

		idle, err := l.Enqueue(context.Background(), coordinator.EnqueueRequest{LaneKey: hash("lane-a"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) { return nil, nil }})
		require.NoError(t, err)
		require.True(t, idle.Idle)

		// Identity must match: the same logical key from another lane is refused.
		_, err = l.Enqueue(context.Background(), coordinator.EnqueueRequest{LaneKey: hash("lane-b"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: "lane-a", LogicalKey: hash("lane-a/w1"),
					Payload: map[string]any{}, MaxAttempts: 5}, nil
			}})
		require.ErrorIs(t, err, coordinator.ErrKeyIdentityMismatch)

		// Oversized payloads are argument errors and write nothing.
		_, err = l.Enqueue(context.Background(), coordinator.EnqueueRequest{LaneKey: hash("lane-a"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: "lane-a", LogicalKey: hash("big"),
					Payload: map[string]any{"x": string(make([]byte, 17000))}, MaxAttempts: 5}, nil
			}})
		require.ErrorIs(t, err, coordinator.ErrInvalidArgument)
	})
}

func TestOnlyLaneHeadIsClaimable(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		a := enqueue(t, l, "lane", "w1", 5)
		b := enqueue(t, l, "lane", "w2", 5)

		claims := claim(t, l, "worker-1", 2, time.Minute)
		require.Len(t, claims, 1, "only the head may be claimed even with 2 idle slots")
		require.Equal(t, a.Item.WorkID, claims[0].Item.WorkID)
		require.Equal(t, int64(1), claims[0].Fence)
		require.Empty(t, claim(t, l, "worker-2", 2, time.Minute), "the head is running; the next item waits")

		commits := 0
		done, err := l.Complete(ctx, claims[0], coordinator.Result{Code: "processed"}, func(context.Context, db.Queries, db.WorkItem, time.Time) error {
			commits++
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, 1, commits)
		require.Equal(t, db.StatusSucceeded, done.Status)

		next := claim(t, l, "worker-2", 2, time.Minute)
		require.Len(t, next, 1)
		require.Equal(t, b.Item.WorkID, next[0].Item.WorkID)

		// The succeeded key is gone: the same window name creates a new item at sequence 3.
		c := enqueue(t, l, "lane", "w1", 5)
		require.True(t, c.Created)
		require.Equal(t, int64(3), c.Item.LaneSequence)

		attempts, err := l.Attempts(ctx, a.Item.WorkID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		require.Equal(t, db.OutcomeSucceeded, attempts[0].Outcome)
	})
}

func TestLeaseTakeoverFencesTheOldWorker(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		old, fresh := takenOver(t, s, l)
		require.Equal(t, old[0].Fence+1, fresh[0].Fence)

		ran := false
		_, err := l.Complete(ctx, old[0], coordinator.Result{Code: "processed"}, func(context.Context, db.Queries, db.WorkItem, time.Time) error {
			ran = true
			return nil
		})
		require.ErrorIs(t, err, coordinator.ErrStaleWorkClaim)
		require.False(t, ran, "a stale claim's domain commit must never run")
		_, err = l.Heartbeat(ctx, old[0], time.Minute)
		require.ErrorIs(t, err, coordinator.ErrStaleWorkClaim)
		_, err = l.Fail(ctx, old[0], coordinator.Failure{Category: "provider", Code: "unavailable", Retryable: true}, 0)
		require.ErrorIs(t, err, coordinator.ErrStaleWorkClaim)

		hb, err := l.Heartbeat(ctx, fresh[0], time.Minute)
		require.NoError(t, err)
		require.False(t, hb.CancelRequested)
		after, err := l.Get(ctx, fresh[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, fresh[0].Item.StateVersion, after.StateVersion, "heartbeats do not bump state_version")

		_, err = l.Complete(ctx, fresh[0], coordinator.Result{Code: "processed"}, nil)
		require.NoError(t, err)
		attempts, err := l.Attempts(ctx, fresh[0].Item.WorkID)
		require.NoError(t, err)
		require.Len(t, attempts, 2)
		require.Equal(t, db.OutcomeLeaseExpiredRetry, attempts[0].Outcome)
		require.Equal(t, db.OutcomeSucceeded, attempts[1].Outcome)
		require.Less(t, attempts[0].Fence, attempts[1].Fence)
	})
}

func TestPoisonWindowBlocksLaneUntilRetry(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		first := enqueue(t, l, "lane", "w1", 1)
		enqueue(t, l, "lane", "w2", 1)
		c := claim(t, l, "worker", 1, time.Minute)
		require.Len(t, c, 1)
		failed, err := l.Fail(ctx, c[0], coordinator.Failure{Category: "provider", Code: "unavailable", Retryable: true}, 0)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, failed.Status, "max_attempts=1 spends the budget")
		require.Empty(t, claim(t, l, "worker", 2, time.Minute), "a failed head blocks its lane")

		joined := enqueue(t, l, "lane", "w1", 1)
		require.False(t, joined.Created)
		require.Equal(t, first.Item.WorkID, joined.Item.WorkID)
		require.Equal(t, db.StatusFailed, joined.Item.Status)

		retried, err := l.Retry(ctx, failed.WorkID, failed.StateVersion)
		require.NoError(t, err)
		require.Equal(t, db.StatusQueued, retried.Status)
		require.Equal(t, int32(1), retried.RecoveryGeneration)
		require.Equal(t, int32(0), retried.GenerationAttemptCount)
		require.Empty(t, retried.ErrorCode)

		_, err = l.Cancel(ctx, failed.WorkID, failed.StateVersion)
		sc, ok := coordinator.IsStateConflict(err)
		require.True(t, ok, "cancel with the old version is a conflict: %v", err)
		require.Equal(t, db.StatusQueued, sc.Status)
		require.Equal(t, retried.StateVersion, sc.ActualVersion)

		_, err = l.Retry(ctx, failed.WorkID, retried.StateVersion)
		_, ok = coordinator.IsStateConflict(err)
		require.True(t, ok, "retrying a queued item is a conflict")

		again := claim(t, l, "worker", 1, time.Minute)
		require.Len(t, again, 1)
		require.Equal(t, failed.WorkID, again[0].Item.WorkID)
		require.Equal(t, int32(2), again[0].AttemptNo)
	})
}

func TestCancelWhileRunning(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		enqueue(t, l, "lane", "w1", 5)
		second := enqueue(t, l, "lane", "w2", 5)
		c := claim(t, l, "worker", 1, 300*time.Millisecond)
		require.Len(t, c, 1)

		cancelling, err := l.Cancel(ctx, c[0].Item.WorkID, c[0].Item.StateVersion)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelling, cancelling.Status)
		require.True(t, cancelling.CancelRequested)

		hb, err := l.Heartbeat(ctx, c[0], 300*time.Millisecond)
		require.NoError(t, err)
		require.True(t, hb.CancelRequested)

		ran := false
		_, err = l.Complete(ctx, c[0], coordinator.Result{Code: "processed"}, func(context.Context, db.Queries, db.WorkItem, time.Time) error {
			ran = true
			return nil
		})
		require.ErrorIs(t, err, coordinator.ErrCancelRequested)
		require.False(t, ran)

		_, err = l.Cancel(ctx, c[0].Item.WorkID, cancelling.StateVersion)
		_, ok := coordinator.IsStateConflict(err)
		require.True(t, ok, "cancelling a cancelling item is a conflict")

		testutil.WaitDBPast(t, s, c[0].LeaseExpiresAt)
		res, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "other", Supported: supported, Slots: 1, Lease: time.Minute})
		require.NoError(t, err)
		require.Equal(t, 1, res.Expired)
		item, err := l.Get(ctx, c[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelled, item.Status)
		attempts, err := l.Attempts(ctx, item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.OutcomeCancelled, attempts[0].Outcome)

		next := claim(t, l, "other", 1, time.Minute)
		require.Len(t, next, 1, "the next lane item became the head")
		require.Equal(t, second.Item.WorkID, next[0].Item.WorkID)

		// The owning worker converges promptly without waiting for expiry.
		_, err = l.Cancel(ctx, next[0].Item.WorkID, next[0].Item.StateVersion)
		require.NoError(t, err)
		confirmed, err := l.ConfirmCancelled(ctx, next[0])
		require.NoError(t, err)
		require.Equal(t, db.StatusCancelled, confirmed.Status)
		lane, err := s.WorkLaneGet(ctx, hash("lane"))
		require.NoError(t, err)
		require.Zero(t, lane.HeadSequence, "the lane is idle")
	})
}

func TestRetriedClaimCarriesPreviousTraceAndPurge(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		enqueue(t, l, "lane", "w1", 5)
		n := 0
		req := coordinator.ClaimRequest{Owner: "worker", Supported: supported, Slots: 1, Lease: time.Minute,
			NewTrace: func() (string, string) {
				n++
				return fmt.Sprintf("%032x", n), fmt.Sprintf("%016x", n)
			}}
		res, err := l.Claim(ctx, req)
		require.NoError(t, err)
		require.Len(t, res.Claims, 1)
		require.Empty(t, res.Claims[0].PreviousTraceID)
		_, err = l.Fail(ctx, res.Claims[0], coordinator.Failure{Category: "provider", Code: "rate_limited", Retryable: true}, 0)
		require.NoError(t, err)
		res, err = l.Claim(ctx, req)
		require.NoError(t, err)
		require.Len(t, res.Claims, 1)
		require.Equal(t, fmt.Sprintf("%032x", 1), res.Claims[0].PreviousTraceID)
		require.Equal(t, fmt.Sprintf("%016x", 1), res.Claims[0].PreviousSpanID)
		succeeded, err := l.Complete(ctx, res.Claims[0], coordinator.Result{Code: "processed", Payload: map[string]any{"b": 1, "a": 2}}, nil)
		require.NoError(t, err)
		require.JSONEq(t, `{"a":2,"b":1}`, string(succeeded.ResultPayload))

		// A cancelled item and a failed one in other lanes.
		cancelled := enqueue(t, l, "lane-c", "w1", 5)
		_, err = l.Cancel(ctx, cancelled.Item.WorkID, 1)
		require.NoError(t, err)
		enqueue(t, l, "lane-f", "w1", 1)
		f := claim(t, l, "worker", 1, time.Minute)
		require.Len(t, f, 1)
		failed, err := l.Fail(ctx, f[0], coordinator.Failure{Category: "payload", Code: "invalid_payload"}, 0)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, failed.Status)

		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		purged, err := l.PurgeTerminal(ctx, now.Add(-time.Hour), 500)
		require.NoError(t, err)
		require.Zero(t, purged, "nothing is old enough")
		purged, err = l.PurgeTerminal(ctx, now.Add(time.Second), 500)
		require.NoError(t, err)
		require.Equal(t, int64(2), purged)
		_, err = l.Get(ctx, succeeded.WorkID)
		require.ErrorIs(t, err, coordinator.ErrNotFound)
		attempts, err := l.Attempts(ctx, succeeded.WorkID)
		require.NoError(t, err)
		require.Empty(t, attempts)
		kept, err := l.Get(ctx, failed.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusFailed, kept.Status, "failed items are never purged")
	})
}

func TestUnsupportedHeadsWait(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		_, err := l.Enqueue(ctx, coordinator.EnqueueRequest{LaneKey: hash("lane"),
			Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
				return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 2, ScopeID: "lane", LogicalKey: hash("v2"),
					Payload: map[string]any{}, MaxAttempts: 5}, nil
			}})
		require.NoError(t, err)
		require.Empty(t, claim(t, l, "worker", 4, time.Minute))
		n, err := l.UnsupportedHeadCount(ctx, supported)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		v2 := coordinator.Supported{testKind: {Min: 1, Max: 2}}
		n, err = l.UnsupportedHeadCount(ctx, v2)
		require.NoError(t, err)
		require.Zero(t, n)
		stats, err := l.QueueStatistics(ctx)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, db.StatusQueued, stats[0].Status)
		require.Equal(t, int64(1), stats[0].Count)
	})
}

func TestCanonicalJSON(t *testing.T) {
	out, err := coordinator.CanonicalJSON([]byte(`{ "b": 1, "a": {"d": 12345678901234567890, "c": "<x>"} }`))
	require.NoError(t, err)
	require.Equal(t, `{"a":{"c":"<x>","d":12345678901234567890},"b":1}`, string(out))
	for _, bad := range []string{`[]`, `null`, `1`, `{"a":1} {"b":2}`, `{`} {
		_, err := coordinator.CanonicalJSON([]byte(bad))
		require.True(t, errors.Is(err, coordinator.ErrInvalidArgument), bad)
	}
}

// TestEnqueueWithWritesRunsThemFirst: WithWrites runs its writes before the request's own spec, in the enqueue's
// transaction, and a failing write leaves no item.
func TestEnqueueWithWritesRunsThemFirst(t *testing.T) {
	eachLedger(t, func(t *testing.T, ctx context.Context, s db.Store, l *coordinator.Ledger) {
		var order []string
		req := coordinator.EnqueueRequest{LaneKey: hash("lane"), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			order = append(order, "spec")
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: "lane", LogicalKey: hash("lane/w1"),
				Payload: map[string]any{}, MaxAttempts: 1}, nil
		}}
		refused := errors.New("refused")
		_, err := l.Enqueue(ctx, req.WithWrites(func(context.Context, db.Queries) error {
			order = append(order, "writes")
			return refused
		}))
		require.ErrorIs(t, err, refused)
		require.Equal(t, []string{"writes"}, order, "the spec does not run after a failed write")
		items, err := s.WorkItemList(ctx, db.WorkItemListParams{ScopeID: "lane", Limit: 10})
		require.NoError(t, err)
		require.Empty(t, items)

		order = nil
		res, err := l.Enqueue(ctx, req.WithWrites(func(context.Context, db.Queries) error {
			order = append(order, "writes")
			return nil
		}))
		require.NoError(t, err)
		require.True(t, res.Created)
		require.Equal(t, []string{"writes", "spec"}, order[:2])
	})
}
