package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// recording is the local provider, remembering the content lengths of every window it was asked about.
type recording struct {
	provider.Local
	mu      sync.Mutex
	windows [][]int
}

func (r *recording) ExtractMemory(ctx context.Context, req provider.ExtractMemoryRequest) (provider.ExtractMemoryResponse, error) {
	var lens []int
	for _, s := range req.Window {
		lens = append(lens, len(s.Content))
	}
	r.mu.Lock()
	r.windows = append(r.windows, lens)
	r.mu.Unlock()
	return r.Local.ExtractMemory(ctx, req)
}

// TestWindowsFitTheRequestBudget: a window whose Sources exceed the request budget commits only the prefix that
// fits (its own cursor advance, the revision's window ends there) and the rest is the next window, committed after
// it; a lost answer of the narrowed window reads as already committed; a single Source over the budget goes alone,
// cut for extraction while the stored Source stays intact.
func TestWindowsFitTheRequestBudget(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		sentence := func(i, n int) string { return strings.Repeat(fmt.Sprintf("Service %d runs in region %d. ", i, i), n) }
		for i := 1; i <= 3; i++ {
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "fit", Content: sentence(i, 14)}) // ~400 bytes each
			require.NoError(t, err)
		}
		rec := &recording{}
		h := &memory.Handler{Store: s, Provider: rec, MaxRequestBytes: 1000}
		run := func() (db.WorkItem, coordinator.Claim) {
			t.Helper()
			res, err := l.Enqueue(ctx, memory.Consumer(3).EnqueueRequest("fit"))
			require.NoError(t, err)
			require.False(t, res.Idle)
			cl, err := l.Claim(ctx, coordinator.ClaimRequest{Owner: "w", Supported: coordinator.Supported{memory.Kind: h.PayloadVersions()}, Slots: 1, Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, cl.Claims, 1)
			p, err := h.Prepare(ctx, cl.Claims[0].Item)
			require.NoError(t, err)
			done, err := l.Complete(ctx, cl.Claims[0], p.Result, p.Commit)
			require.NoError(t, err)
			return done, cl.Claims[0]
		}
		result := func(item db.WorkItem) memory.FlushResult {
			var r memory.FlushResult
			require.NoError(t, json.Unmarshal(item.ResultPayload, &r))
			return r
		}

		first, claim := run()
		require.Equal(t, memory.FlushResult{Type: "memory_flush", PreviousCursor: 0, CurrentCursor: 2, HighWatermark: 3,
			ProcessedSourceCount: 2, Memory: &memory.RevisionResult{Revision: 1}}, result(first), "two of three fit")
		require.Len(t, rec.windows[0], 2)
		again, err := h.Prepare(ctx, claim.Item)
		require.NoError(t, err)
		require.Equal(t, "already_committed", again.Result.Code, "a lost answer of the narrowed window")

		second, _ := run()
		require.Equal(t, int64(2), result(second).PreviousCursor)
		require.Equal(t, int64(3), result(second).CurrentCursor, "the rest is the next window, in lane order")
		rev, err := s.MemoryRevisionLatest(ctx, "fit")
		require.NoError(t, err)
		require.Equal(t, []int64{2, 2, 3}, []int64{rev.Revision, rev.WindowAfter, rev.WindowThrough})

		big := sentence(4, 100) // ~2.9 KB, alone over the budget
		_, err = j.Capture(ctx, sources.CaptureRequest{ScopeID: "fit", Content: big})
		require.NoError(t, err)
		_, err = j.Capture(ctx, sources.CaptureRequest{ScopeID: "fit", Content: sentence(5, 1)})
		require.NoError(t, err)
		third, _ := run()
		require.Equal(t, int64(4), result(third).CurrentCursor, "the large Source goes alone")
		last := rec.windows[len(rec.windows)-1]
		require.Len(t, last, 1)
		require.Less(t, last[0], len(big), "cut for extraction")
		require.GreaterOrEqual(t, last[0], sources.MinSourceBudget(1000))
		stored, err := s.SourceListRange(ctx, db.SourceListRangeParams{ScopeID: "fit", AfterPosition: 3, ThroughPosition: 4})
		require.NoError(t, err)
		require.Equal(t, big, stored[0].Content, "the stored Source is intact")
		fourth, _ := run()
		require.Equal(t, int64(5), result(fourth).CurrentCursor)
	})
}
