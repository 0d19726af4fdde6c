package lifecycle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// TestSharedLimiterStormDelaysButNeverFails: eight scopes flush at once behind the shared provider limiter of the
// runtime (one call per 150 ms window, shared through the database), with a retry budget of 2. Most calls are
// refused — many times the budget — yet every window commits: a refusal snoozes the item until the window the
// limiter names, without spending an attempt.
func TestSharedLimiterStormDelaysButNeverFails(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		j := sources.NewJournal(s)
		limiter := coordinator.NewRateLimiter(s)
		p := provider.WithRateLimit(provider.NewLocal(), func(ctx context.Context) (bool, time.Duration, error) {
			d, err := limiter.Allow(ctx, "provider:local", "provider", 1, 150*time.Millisecond)
			return d.Allowed, d.RetryAfter, err
		})
		const scopes, budget = 8, 2
		var ids []string
		for i := range scopes {
			scope := fmt.Sprintf("storm-%d", i)
			_, err := j.Capture(ctx, sources.CaptureRequest{ScopeID: scope, Content: "The queue is durable."})
			require.NoError(t, err)
			res, err := l.Enqueue(ctx, memory.Consumer(budget).EnqueueRequest(scope))
			require.NoError(t, err)
			ids = append(ids, res.Item.WorkID)
		}
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w", Concurrency: 4, Poll: 10 * time.Millisecond,
			RetryBase: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, Logger: zerolog.Nop()}, &memory.Handler{Store: s, Provider: p})
		require.NoError(t, err)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(wctx) }()
		var snoozed, most int32
		for _, id := range ids {
			item := waitStatus(t, l, id, db.StatusSucceeded)
			require.LessOrEqual(t, item.GenerationAttemptCount, int32(1), "refusals spent no attempt")
			snoozed += item.AttemptCount - 1
			most = max(most, item.AttemptCount-1)
		}
		cancel()
		require.NoError(t, <-done)
		require.Greater(t, most, int32(budget), "some window was refused more often than its retry budget allows")
		t.Logf("%d refusals snoozed (at most %d for one window), none failed", snoozed, most)
	})
}
