package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
)

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
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		existing := enqueue(t, l, "lane-b", "w0", 5)

		// New and existing lanes, two windows of one lane (kept in the callers' order), a join and an idle window.
		reqs := []coordinator.EnqueueRequest{
			enqueueReq("lane-z", "w1"),
			enqueueReq("lane-b", "w1"),
			enqueueReq("lane-a", "w1"),
			enqueueReq("lane-b", "w0"), // joins
			enqueueReq("lane-z", "w2"),
			{LaneKey: hash("lane-c"), Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) { return nil, nil }},
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
