package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"

	"github.com/powercontext/powercontext/db/internal/conv"
)

// WorkKeyLock runs the no-op WorkKeyTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	if _, err := touch(ctx, q, q.q.WorkKeyTouch, logicalKey); err != nil {
		return db.WorkKey{}, errs(err)
	}
	r, err := q.q.WorkKeyLock(ctx, logicalKey)
	return conv.One(errs, r, err, conv.WorkKeyFromGen)
}
