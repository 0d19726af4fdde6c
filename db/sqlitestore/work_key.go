package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func (q *queries) WorkKeyInsertIfAbsent(ctx context.Context, key db.WorkKey) (bool, error) {
	return inserted(q.w.WorkKeyInsertIfAbsent(ctx, sqlitegen.WorkKeyInsertIfAbsentParams{
		LogicalKey: key.LogicalKey,
		WorkID:     key.WorkID,
		LaneKey:    key.LaneKey,
		CreatedAt:  toMicros(key.CreatedAt),
	}))
}

// WorkKeyLock is a plain read: the BEGIN IMMEDIATE transaction already holds the database write lock.
func (q *queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	r, err := q.w.WorkKeyLock(ctx, logicalKey)
	if err != nil {
		return db.WorkKey{}, interpretError(err)
	}
	return db.WorkKey{LogicalKey: r.LogicalKey, WorkID: r.WorkID, LaneKey: r.LaneKey, CreatedAt: fromMicros(r.CreatedAt)}, nil
}

func (q *queries) WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error) {
	return affected(q.w.WorkKeyDelete(ctx, logicalKey))
}
