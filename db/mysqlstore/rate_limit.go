package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func (q *queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	n, err := q.q.RateLimitWindowInsertIfAbsent(ctx, mysqlgen.RateLimitWindowInsertIfAbsentParams{
		PrincipalKey:    w.PrincipalKey,
		PolicyID:        w.PolicyID,
		WindowStartedAt: ts(w.WindowStartedAt),
		RequestCount:    w.RequestCount,
		ExpiresAt:       ts(w.ExpiresAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) RateLimitWindowLock(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (db.RateLimitWindow, error) {
	if _, err := q.q.RateLimitWindowTouch(ctx, mysqlgen.RateLimitWindowTouchParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: ts(windowStartedAt),
	}); err != nil {
		return db.RateLimitWindow{}, interpretError(err)
	}
	r, err := q.q.RateLimitWindowLock(ctx, mysqlgen.RateLimitWindowLockParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: ts(windowStartedAt),
	})
	if err != nil {
		return db.RateLimitWindow{}, interpretError(err)
	}
	return db.RateLimitWindow{
		PrincipalKey:    r.PrincipalKey,
		PolicyID:        r.PolicyID,
		WindowStartedAt: r.WindowStartedAt.UTC(),
		RequestCount:    r.RequestCount,
		ExpiresAt:       r.ExpiresAt.UTC(),
	}, nil
}

func (q *queries) RateLimitWindowIncrement(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (int64, error) {
	n, err := q.q.RateLimitWindowIncrement(ctx, mysqlgen.RateLimitWindowIncrementParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: ts(windowStartedAt),
	})
	return n, interpretError(err)
}

func (q *queries) RateLimitWindowPurgeExpired(ctx context.Context, before time.Time, limit int32) (int64, error) {
	n, err := q.q.RateLimitWindowPurgeExpired(ctx, mysqlgen.RateLimitWindowPurgeExpiredParams{
		ExpiredBefore: ts(before),
		Limit:         limit,
	})
	return n, interpretError(err)
}
