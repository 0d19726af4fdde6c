package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
)

// TestRecoveredHeadClaimedFromAStaleCandidateIsReturned: a set or batched pass recovers the expired heads its
// candidate read saw, one by one. When another claimer recovered such a head in between, it is claimable by then
// and the recovery claims it; the pass must return that claim. It once dropped it: the item ran under an owner
// that never heard of it until the lease expired again, and the race test saw one lane head lose ten attempts so.
func TestRecoveredHeadClaimedFromAStaleCandidateIsReturned(t *testing.T) {
	const kind = "test.recover"
	supported := Supported{kind: {Min: 1, Max: 1}}
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		ctx := context.Background()
		l := NewLedger(enginetest.Open(t, engine))
		_, err := l.Enqueue(ctx, EnqueueRequest{LaneKey: strings.Repeat("a", 64), Spec: func(context.Context, db.Queries) (*EnqueueSpec, error) {
			return &EnqueueSpec{Kind: kind, PayloadVersion: 1, ScopeID: "s", LogicalKey: strings.Repeat("b", 64), Payload: map[string]any{}, MaxAttempts: 5}, nil
		}})
		require.NoError(t, err)
		req := func(owner string, lease time.Duration) ClaimRequest {
			return ClaimRequest{Owner: owner, Supported: supported, Slots: 1, Lease: lease}
		}
		first, err := l.Claim(ctx, req("stalled", 150*time.Millisecond))
		require.NoError(t, err)
		require.Len(t, first.Claims, 1)
		testutil.WaitDBPast(t, l.store, first.Claims[0].LeaseExpiresAt) // expiry is judged on the database clock only

		// The candidate read of a pass that will recover late: it sees the expired running head.
		stale, err := l.store.WorkItemClaimCandidates(ctx, db.WorkItemClaimCandidatesParams{Kinds: supported.Kinds(), Limit: 32})
		require.NoError(t, err)
		require.Len(t, stale, 1)
		require.Equal(t, db.StatusRunning, stale[0].Status)

		// Another claimer recovers the head first (retry_wait, available now).
		other, err := l.Claim(ctx, req("other", 30*time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, other.Expired)
		require.Empty(t, other.Claims, "a head recovered in a pass is claimable on the next pass")

		// The late pass's recovery finds it claimable and claims it: the claim is in the result.
		var res ClaimResult
		require.NoError(t, l.recoverExpired(ctx, req("late", 30*time.Second), stale, &res))
		require.Zero(t, res.Expired)
		require.Len(t, res.Claims, 1, "a claim made while recovering is returned, never dropped")
		item, err := l.Get(ctx, res.Claims[0].Item.WorkID)
		require.NoError(t, err)
		require.Equal(t, db.StatusRunning, item.Status)
		require.Equal(t, "late", item.LeaseOwner)
		require.Equal(t, res.Claims[0].Fence, item.LeaseFence)
		require.Equal(t, res.Claims[0].AttemptNo, item.AttemptCount)
	})
}
