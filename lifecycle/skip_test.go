package lifecycle_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// memoryWorker is a worker with the memory handler over p; run it with testutil.RunWorker.
func memoryWorker(t *testing.T, l *coordinator.Ledger, s db.Store, p provider.Provider) *coordinator.Worker {
	t.Helper()
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-" + p.Name(), Concurrency: 2, Poll: 10 * time.Millisecond,
		RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, Logger: zerolog.Nop()}, &memory.Handler{Store: s, Provider: p})
	require.NoError(t, err)
	return w
}

// waitStatus waits for the item to reach a status (woken by the ledger's change signal, with a poll as the floor
// for changes made through another Ledger value).
func waitStatus(t *testing.T, l *coordinator.Ledger, id string, status string) db.WorkItem {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed, stop := l.Changed(id)
		item, err := l.Get(context.Background(), id)
		require.NoError(t, err)
		if item.Status == status {
			stop()
			return item
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			stop()
			t.Fatalf("operation %s is %s, not %s", id, item.Status, status)
		}
		stop()
	}
}

// TestRejectedWindowFailsOnceAndSkipUnblocks: a provider that rejects the request (HTTP 400) fails the window after
// one attempt, whatever the retry budget, and blocks the scope's lane (a new flush joins the failed window); skipping
// it moves the cursor past the window and the next window runs.
func TestRejectedWindowFailsOnceAndSkipUnblocks(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.Error(w, `{"error":{"message":"context length exceeded"}}`, http.StatusBadRequest)
		}))
		defer srv.Close()
		rejecting, err := provider.NewOpenAI(provider.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"})
		require.NoError(t, err)

		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		for _, c := range []string{"The build uses Go 1.24.", "Deploys happen on Tuesdays."} {
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: "team", Content: c})
			require.NoError(t, err)
		}
		cons := memory.Consumer(5)
		res, err := l.Enqueue(ctx, cons.EnqueueRequest("team"))
		require.NoError(t, err)
		stop := testutil.RunWorker(t, memoryWorker(t, l, s, rejecting))
		failed := waitStatus(t, l, res.Item.WorkID, db.StatusFailed)
		stop()
		require.Equal(t, int32(1), failed.AttemptCount, "a rejected request is not retried")
		require.Equal(t, int32(1), calls.Load())
		require.Equal(t, "provider", failed.ErrorCategory)
		require.Equal(t, "request_rejected", failed.ErrorCode)

		_, err = j.Capture(ctx, sources.CaptureRequest{ScopeID: "team", Content: "The staging database is PostgreSQL."})
		require.NoError(t, err)
		joined, err := l.Enqueue(ctx, cons.EnqueueRequest("team"))
		require.NoError(t, err)
		require.Equal(t, failed.WorkID, joined.Item.WorkID, "the lane is blocked: a flush joins the failed window")

		fn, err := lifecycle.SkipFunc(failed.Kind, "ops")
		require.NoError(t, err)
		skipped, err := l.Skip(ctx, failed.WorkID, failed.StateVersion, fn)
		require.NoError(t, err)
		require.Equal(t, db.StatusSucceeded, skipped.Status)
		require.Equal(t, coordinator.ResultSkipped, skipped.ResultCode)
		require.JSONEq(t, `{"type":"memory_flush","previous_cursor":0,"current_cursor":2,"high_watermark":2,
			"processed_source_count":0,"skipped_source_count":2}`, string(skipped.ResultPayload))
		cur, err := sources.Cursor(ctx, s, "team", memory.CursorName)
		require.NoError(t, err)
		require.Equal(t, int64(2), cur.Position)

		_, err = l.Skip(ctx, failed.WorkID, skipped.StateVersion, fn)
		_, conflict := coordinator.IsStateConflict(err)
		require.True(t, conflict, "only a failed window can be skipped")

		next, err := l.Enqueue(ctx, cons.EnqueueRequest("team"))
		require.NoError(t, err)
		require.True(t, next.Created, "the lane moved on: the next window is a new operation")
		require.Equal(t, sources.WindowPayload{CursorName: memory.CursorName, CursorGeneration: 1, After: 2, Through: 3, HighWatermark: 3},
			decode(t, next.Item))
		stop = testutil.RunWorker(t, memoryWorker(t, l, s, provider.NewLocal()))
		done := waitStatus(t, l, next.Item.WorkID, db.StatusSucceeded)
		stop()
		require.Equal(t, "processed", done.ResultCode)
		require.Equal(t, int32(1), calls.Load(), "the rejecting provider was never asked again")
	})
}

func decode(t *testing.T, item db.WorkItem) sources.WindowPayload {
	t.Helper()
	p, err := sources.DecodePayload(item)
	require.NoError(t, err)
	return p
}
