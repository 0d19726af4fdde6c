package coordinator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/powercontext/powercontext/db"
)

// RateLimiter is a fixed-window limit per (principal, policy) shared by every replica through
// pc_rate_limit_windows (docs/protocol.md#rate-limit). Windows are aligned to the Unix epoch on database time.
type RateLimiter struct{ store db.Store }

// NewRateLimiter returns a limiter over store.
func NewRateLimiter(store db.Store) *RateLimiter { return &RateLimiter{store: store} }

// RateDecision is the answer for one request.
type RateDecision struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration // until the window ends, when denied
}

// Allow counts one request of principal under policy against limit per window. The principal is stored only as
// its sha256.
func (r *RateLimiter) Allow(ctx context.Context, principal, policy string, limit int, window time.Duration) (RateDecision, error) {
	if limit <= 0 || window <= 0 || policy == "" || len(policy) > 64 {
		return RateDecision{}, invalidArgument("rate limit needs a policy (1..64 bytes), a positive limit and window")
	}
	sum := sha256.Sum256([]byte(principal))
	key := hex.EncodeToString(sum[:])
	now, err := r.store.DBNow(ctx)
	if err != nil {
		return RateDecision{}, err
	}
	start := time.UnixMicro(now.UnixMicro() - now.UnixMicro()%window.Microseconds()).UTC()
	end := start.Add(window)
	retry := end.Sub(now)
	// The first request of a window creates the row with count 1 (autocommitted insert-if-absent, docs/protocol.md#creating-rows).
	inserted, err := r.store.RateLimitWindowInsertIfAbsent(ctx, db.RateLimitWindow{PrincipalKey: key, PolicyID: policy,
		WindowStartedAt: start, RequestCount: 1, ExpiresAt: end})
	if err != nil {
		return RateDecision{}, err
	}
	if inserted {
		return RateDecision{Allowed: true, Remaining: limit - 1}, nil
	}
	var d RateDecision
	err = r.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		w, err := q.RateLimitWindowLock(ctx, db.RateLimitWindowLockParams{PrincipalKey: key, PolicyID: policy, WindowStartedAt: start})
		if err != nil {
			return err
		}
		if int(w.RequestCount) >= limit {
			d = RateDecision{Allowed: false, Remaining: 0, RetryAfter: retry}
			return nil
		}
		if _, err := q.RateLimitWindowIncrement(ctx, db.RateLimitWindowIncrementParams{PrincipalKey: key, PolicyID: policy, WindowStartedAt: start}); err != nil {
			return err
		}
		d = RateDecision{Allowed: true, Remaining: limit - int(w.RequestCount) - 1}
		return nil
	})
	return d, err
}
