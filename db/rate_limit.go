package db

import (
	"context"
)

// RateLimitWindowQueries are the statements of pc_rate_limit_windows (sql/queries/<engine>/rate_limit.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type RateLimitWindowQueries interface {
	RateLimitWindowIncrement(ctx context.Context, p RateLimitWindowIncrementParams) (int64, error)
	RateLimitWindowInsertIfAbsent(ctx context.Context, w RateLimitWindow) (bool, error)
	RateLimitWindowLock(ctx context.Context, p RateLimitWindowLockParams) (RateLimitWindow, error)

	// RateLimitWindowPurgeExpired deletes at most p.Limit windows that expired before p.ExpiredBefore, oldest
	// first. Returns rows deleted.
	RateLimitWindowPurgeExpired(ctx context.Context, p RateLimitWindowPurgeExpiredParams) (int64, error)
}
