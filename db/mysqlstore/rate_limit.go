package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// RateLimitWindowLock runs the no-op RateLimitWindowTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) RateLimitWindowLock(ctx context.Context, p db.RateLimitWindowLockParams) (db.RateLimitWindow, error) {
	if _, err := touch(ctx, q, q.q.RateLimitWindowTouch, conv.RateLimitWindowKeyToGen[mysqlgen.RateLimitWindowTouchParams](p)); err != nil {
		return db.RateLimitWindow{}, errs(err)
	}
	r, err := q.q.RateLimitWindowLock(ctx, conv.RateLimitWindowKeyToGen[mysqlgen.RateLimitWindowLockParams](p))
	return conv.One(errs, r, err, conv.RateLimitWindowFromGen)
}
