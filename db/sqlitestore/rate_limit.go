package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	return errs.Inserted(q.w.RateLimitWindowInsertIfAbsent(ctx, conv.RateLimitWindowToGen[sqlitegen.RateLimitWindowInsertIfAbsentParams](w)))
}

func (q *queries) RateLimitWindowLock(ctx context.Context, p db.RateLimitWindowLockParams) (db.RateLimitWindow, error) {
	r, err := q.w.RateLimitWindowLock(ctx, conv.RateLimitWindowKeyToGen[sqlitegen.RateLimitWindowLockParams](p))
	return conv.One(errs, r, err, conv.RateLimitWindowFromGen)
}

func (q *queries) RateLimitWindowIncrement(ctx context.Context, p db.RateLimitWindowIncrementParams) (int64, error) {
	return errs.Rows(q.w.RateLimitWindowIncrement(ctx, conv.RateLimitWindowKeyToGen[sqlitegen.RateLimitWindowIncrementParams](p)))
}

func (q *queries) RateLimitWindowPurgeExpired(ctx context.Context, p db.RateLimitWindowPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.w.RateLimitWindowPurgeExpired(ctx, conv.PurgeExpiredToGen[sqlitegen.RateLimitWindowPurgeExpiredParams](p)))
}
