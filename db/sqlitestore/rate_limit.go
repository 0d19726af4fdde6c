package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func (q *queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	return inserted(q.w.RateLimitWindowInsertIfAbsent(ctx, sqlitegen.RateLimitWindowInsertIfAbsentParams{
		PrincipalKey:    w.PrincipalKey,
		PolicyID:        w.PolicyID,
		WindowStartedAt: toMicros(w.WindowStartedAt),
		RequestCount:    int64(w.RequestCount),
		ExpiresAt:       toMicros(w.ExpiresAt),
	}))
}

// RateLimitWindowLock is a plain read: the BEGIN IMMEDIATE transaction already holds the database write lock.
func (q *queries) RateLimitWindowLock(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (db.RateLimitWindow, error) {
	r, err := q.w.RateLimitWindowLock(ctx, sqlitegen.RateLimitWindowLockParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: toMicros(windowStartedAt),
	})
	if err != nil {
		return db.RateLimitWindow{}, interpretError(err)
	}
	return db.RateLimitWindow{
		PrincipalKey:    r.PrincipalKey,
		PolicyID:        r.PolicyID,
		WindowStartedAt: fromMicros(r.WindowStartedAt),
		RequestCount:    int32(r.RequestCount),
		ExpiresAt:       fromMicros(r.ExpiresAt),
	}, nil
}

func (q *queries) RateLimitWindowIncrement(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (int64, error) {
	return affected(q.w.RateLimitWindowIncrement(ctx, sqlitegen.RateLimitWindowIncrementParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: toMicros(windowStartedAt),
	}))
}

func (q *queries) RateLimitWindowPurgeExpired(ctx context.Context, before time.Time, limit int32) (int64, error) {
	return affected(q.w.RateLimitWindowPurgeExpired(ctx, sqlitegen.RateLimitWindowPurgeExpiredParams{
		ExpiredBefore: toMicros(before),
		MaxRows:       int64(limit),
	}))
}
