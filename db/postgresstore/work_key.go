package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func (s queries) WorkKeyInsertIfAbsent(ctx context.Context, key db.WorkKey) (bool, error) {
	rows, err := s.q.WorkKeyInsertIfAbsent(ctx, postgresgen.WorkKeyInsertIfAbsentParams{
		LogicalKey: key.LogicalKey,
		WorkID:     key.WorkID,
		LaneKey:    key.LaneKey,
		CreatedAt:  toTime(key.CreatedAt),
	})
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) WorkKeyLock(ctx context.Context, logicalKey string) (db.WorkKey, error) {
	r, err := s.q.WorkKeyLock(ctx, logicalKey)
	if err != nil {
		return db.WorkKey{}, interpretError(err)
	}
	return db.WorkKey{LogicalKey: r.LogicalKey, WorkID: r.WorkID, LaneKey: r.LaneKey, CreatedAt: fromTime(r.CreatedAt)}, nil
}

func (s queries) WorkKeyDelete(ctx context.Context, logicalKey string) (int64, error) {
	rows, err := s.q.WorkKeyDelete(ctx, logicalKey)
	return rows, interpretError(err)
}
