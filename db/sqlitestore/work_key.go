package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) WorkKeyInsertIfAbsent(ctx context.Context, key db.WorkKey) (bool, error) {
	return errs.Inserted(q.w.WorkKeyInsertIfAbsent(ctx, conv.WorkKeyToGen[sqlitegen.WorkKeyInsertIfAbsentParams](key)))
}

func (q *queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	r, err := q.w.WorkKeyLock(ctx, logicalKey)
	return conv.One(errs, r, err, conv.WorkKeyFromGen)
}

func (q *queries) WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error) {
	return errs.Rows(q.w.WorkKeyDelete(ctx, logicalKey))
}
