package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func (q *queries) WorkKeyInsertIfAbsent(ctx context.Context, key db.WorkKey) (bool, error) {
	n, err := q.q.WorkKeyInsertIfAbsent(ctx, mysqlgen.WorkKeyInsertIfAbsentParams{
		LogicalKey: key.LogicalKey,
		WorkID:     key.WorkID,
		LaneKey:    key.LaneKey,
		CreatedAt:  ts(key.CreatedAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	if _, err := q.q.WorkKeyTouch(ctx, logicalKey); err != nil {
		return db.WorkKey{}, interpretError(err)
	}
	r, err := q.q.WorkKeyLock(ctx, logicalKey)
	if err != nil {
		return db.WorkKey{}, interpretError(err)
	}
	return db.WorkKey{LogicalKey: r.LogicalKey, WorkID: r.WorkID, LaneKey: r.LaneKey, CreatedAt: r.CreatedAt.UTC()}, nil
}

func (q *queries) WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error) {
	n, err := q.q.WorkKeyDelete(ctx, logicalKey)
	return n, interpretError(err)
}
