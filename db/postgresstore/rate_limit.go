package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func (s queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	rows, err := s.q.RateLimitWindowInsertIfAbsent(ctx, postgresgen.RateLimitWindowInsertIfAbsentParams{
		PrincipalKey:    w.PrincipalKey,
		PolicyID:        w.PolicyID,
		WindowStartedAt: toTime(w.WindowStartedAt),
		RequestCount:    w.RequestCount,
		ExpiresAt:       toTime(w.ExpiresAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) RateLimitWindowLock(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (db.RateLimitWindow, error) {
	r, err := s.q.RateLimitWindowLock(ctx, postgresgen.RateLimitWindowLockParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: toTime(windowStartedAt),
	})
	if err != nil {
		return db.RateLimitWindow{}, interpretError(err)
	}
	return db.RateLimitWindow{
		PrincipalKey:    r.PrincipalKey,
		PolicyID:        r.PolicyID,
		WindowStartedAt: fromTime(r.WindowStartedAt),
		RequestCount:    r.RequestCount,
		ExpiresAt:       fromTime(r.ExpiresAt),
	}, nil
}

func (s queries) RateLimitWindowIncrement(ctx context.Context, principalKey, policyID string, windowStartedAt time.Time) (int64, error) {
	rows, err := s.q.RateLimitWindowIncrement(ctx, postgresgen.RateLimitWindowIncrementParams{
		PrincipalKey:    principalKey,
		PolicyID:        policyID,
		WindowStartedAt: toTime(windowStartedAt),
	})
	return rows, interpretError(err)
}

func (s queries) RateLimitWindowPurgeExpired(ctx context.Context, before time.Time, limit int32) (int64, error) {
	rows, err := s.q.RateLimitWindowPurgeExpired(ctx, postgresgen.RateLimitWindowPurgeExpiredParams{
		ExpiredBefore: toTime(before),
		MaxRows:       limit,
	})
	return rows, interpretError(err)
}
