package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	return errs.Inserted(q.q.RateLimitWindowInsertIfAbsent(ctx, conv.RateLimitWindowToGen[postgresgen.RateLimitWindowInsertIfAbsentParams](w)))
}

func (q queries) RateLimitWindowLock(ctx context.Context, p db.RateLimitWindowLockParams) (db.RateLimitWindow, error) {
	r, err := q.q.RateLimitWindowLock(ctx, conv.RateLimitWindowKeyToGen[postgresgen.RateLimitWindowLockParams](p))
	return conv.One(errs, r, err, conv.RateLimitWindowFromGen)
}

func (q queries) RateLimitWindowIncrement(ctx context.Context, p db.RateLimitWindowIncrementParams) (int64, error) {
	return errs.Rows(q.q.RateLimitWindowIncrement(ctx, conv.RateLimitWindowKeyToGen[postgresgen.RateLimitWindowIncrementParams](p)))
}

func (q queries) RateLimitWindowPurgeExpired(ctx context.Context, p db.RateLimitWindowPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.q.RateLimitWindowPurgeExpired(ctx, conv.PurgeExpiredToGen[postgresgen.RateLimitWindowPurgeExpiredParams](p)))
}
