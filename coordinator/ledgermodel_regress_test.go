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

// TestCompleteManySameClaimTwice is the first divergence the reference model found: a CompleteMany batch holding the
// same claim twice failed as a whole on PostgreSQL's set-based completion (both copies passed the check against
// the one locked snapshot and the finishing statement then matched one row for two). On every path the first copy
// commits and the second is stale, as two Complete calls would be.
func TestCompleteManySameClaimTwice(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		for _, p := range []coordinator.Path{coordinator.PathSet, coordinator.PathBatched, coordinator.PathPerItem} {
			l := coordinator.NewLedger(s)
			l.SetPath(p)
			enqueue(t, l, "twice", "w", 3)
			c := claim(t, l, "worker", 1, time.Minute)
			require.Len(t, c, 1)
			other := enqueue(t, l, "twice-other", "w", 3)
			oc := claim(t, l, "worker", 1, time.Minute)
			require.Len(t, oc, 1)
			require.Equal(t, other.Item.WorkID, oc[0].Item.WorkID)
			one := coordinator.Completion{Claim: c[0], Result: coordinator.Result{Code: "processed"}}
			out := l.CompleteMany(ctx, []coordinator.Completion{one, one,
				{Claim: oc[0], Result: coordinator.Result{Code: "processed"}}})
			require.NoError(t, out[0].Err, "path %d", p)
			require.ErrorIs(t, out[1].Err, coordinator.ErrStaleWorkClaim, "path %d", p)
			require.NoError(t, out[2].Err, "path %d: the rest of the batch commits", p)
			item, err := l.Get(ctx, c[0].Item.WorkID)
			require.NoError(t, err)
			require.Equal(t, db.StatusSucceeded, item.Status)
			require.Equal(t, c[0].Item.StateVersion+1, item.StateVersion, "committed once")
		}
	})
}
