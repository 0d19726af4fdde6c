package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) WorkKeyInsertIfAbsent(ctx context.Context, key db.WorkKey) (bool, error) {
	return errs.Inserted(q.q.WorkKeyInsertIfAbsent(ctx, conv.WorkKeyToGen[mysqlgen.WorkKeyInsertIfAbsentParams](key)))
}

// WorkKeyLock runs the no-op WorkKeyTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	if _, err := touch(ctx, q, q.q.WorkKeyTouch, logicalKey); err != nil {
		return db.WorkKey{}, errs(err)
	}
	r, err := q.q.WorkKeyLock(ctx, logicalKey)
	return conv.One(errs, r, err, conv.WorkKeyFromGen)
}

func (q queries) WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error) {
	return errs.Rows(q.q.WorkKeyDelete(ctx, logicalKey))
}
