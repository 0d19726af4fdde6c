package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) RateLimitWindowInsertIfAbsent(ctx context.Context, w db.RateLimitWindow) (bool, error) {
	return errs.Inserted(q.q.RateLimitWindowInsertIfAbsent(ctx, conv.RateLimitWindowToGen[mysqlgen.RateLimitWindowInsertIfAbsentParams](w)))
}

// RateLimitWindowLock runs the no-op RateLimitWindowTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) RateLimitWindowLock(ctx context.Context, p db.RateLimitWindowLockParams) (db.RateLimitWindow, error) {
	if _, err := touch(ctx, q, q.q.RateLimitWindowTouch, conv.RateLimitWindowKeyToGen[mysqlgen.RateLimitWindowTouchParams](p)); err != nil {
		return db.RateLimitWindow{}, errs(err)
	}
	r, err := q.q.RateLimitWindowLock(ctx, conv.RateLimitWindowKeyToGen[mysqlgen.RateLimitWindowLockParams](p))
	return conv.One(errs, r, err, conv.RateLimitWindowFromGen)
}

func (q queries) RateLimitWindowIncrement(ctx context.Context, p db.RateLimitWindowIncrementParams) (int64, error) {
	return errs.Rows(q.q.RateLimitWindowIncrement(ctx, conv.RateLimitWindowKeyToGen[mysqlgen.RateLimitWindowIncrementParams](p)))
}

func (q queries) RateLimitWindowPurgeExpired(ctx context.Context, p db.RateLimitWindowPurgeExpiredParams) (int64, error) {
	return errs.Rows(q.q.RateLimitWindowPurgeExpired(ctx, conv.PurgeExpiredToGen[mysqlgen.RateLimitWindowPurgeExpiredParams](p)))
}
