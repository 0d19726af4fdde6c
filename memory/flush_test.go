package memory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/memory"
)

// onWaitStore runs hook on the first work-item read outside a transaction: a trigger (flush or incubation) reads
// its item only to wait for it, after its enqueue joined it, so hook runs while the trigger waits on the joined
// window — deterministically, without timing.
type onWaitStore struct {
	db.Store
	once sync.Once
	hook func()
}

func (s *onWaitStore) WorkItemGet(ctx context.Context, id string) (db.WorkItem, error) {
	s.once.Do(s.hook)
	return s.Store.WorkItemGet(ctx, id)
}

// TestFlushJoiningAnOlderWindowAnswersTheHead: a window (0,2] is enqueued, a third Source is captured while it is
// pending, and a flush joins the window and waits for it. Its answer is processed (0,2] with the journal head (3)
// as high watermark — current_cursor < high_watermark says a Source captured before the flush is still pending —
// while the operation's stored result keeps the window's own high watermark. The same for an incubation.
func TestFlushJoiningAnOlderWindowAnswersTheHead(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		e := newEnv(t, s)
		xcons := experience.Consumer(5)
		e.capture(t, "scope", 2, "")
		for _, c := range []coordinator.EnqueueRequest{e.cons.EnqueueRequest("scope"), xcons.EnqueueRequest("scope")} {
			res, err := e.ledger.Enqueue(ctx, c)
			require.NoError(t, err)
			require.True(t, res.Created)
		}
		e.capture(t, "scope", 1, "") // position 3, after both windows were computed

		waiting := &onWaitStore{Store: s, hook: func() {
			require.Equal(t, "processed", e.runOne(t, e.handler).ResultCode)
		}}
		f := memory.Flusher{Ledger: coordinator.NewLedger(waiting), Consumer: e.cons, Poll: 10 * time.Millisecond}
		out, err := f.Flush(ctx, "scope", time.Minute)
		require.NoError(t, err)
		require.Equal(t, memory.FlushProcessed, out.Status)
		require.Equal(t, int64(0), out.Result.PreviousCursor)
		require.Equal(t, int64(2), out.Result.CurrentCursor)
		require.Equal(t, int64(3), out.Result.HighWatermark, "the answer's high watermark covers the Source captured before the flush")
		require.Less(t, out.Result.CurrentCursor, out.Result.HighWatermark)
		stored, err := e.ledger.Get(ctx, out.Item.WorkID)
		require.NoError(t, err)
		require.JSONEq(t, `{"type":"memory_flush","previous_cursor":0,"current_cursor":2,"high_watermark":2,
			"processed_source_count":2,"memory":{"revision":1}}`, string(stored.ResultPayload), "the stored result keeps the window's")

		xh := &experience.Handler{Store: s}
		waiting = &onWaitStore{Store: s, hook: func() {
			require.Equal(t, "processed", e.runOne(t, xh).ResultCode)
		}}
		in := experience.Incubator{Ledger: coordinator.NewLedger(waiting), Consumer: xcons, Poll: 10 * time.Millisecond}
		inc, err := in.Incubate(ctx, "scope", time.Minute)
		require.NoError(t, err)
		require.Equal(t, coordinator.TriggerProcessed, inc.Status)
		require.Equal(t, int64(2), inc.Result.CurrentCursor)
		require.Equal(t, int64(3), inc.Result.HighWatermark, "the answer's high watermark covers the Source captured before the incubation")
		stored, err = e.ledger.Get(ctx, inc.Item.WorkID)
		require.NoError(t, err)
		require.Contains(t, string(stored.ResultPayload), `"high_watermark":2`, "the stored result keeps the window's")
	})
}
