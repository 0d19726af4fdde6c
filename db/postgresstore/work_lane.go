package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	return errs.Inserted(q.q.WorkLaneInsertIfAbsent(ctx, laneKey))
}

func (q queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	r, err := q.q.WorkLaneLock(ctx, laneKey)
	return conv.Locked(errs, r, r.DbNow, err, conv.WorkLaneLockFromGen)
}

func (q queries) WorkLaneAdvanceHead(ctx context.Context, p db.WorkLaneAdvanceHeadParams) error {
	return errs.Found(q.q.WorkLaneAdvanceHead(ctx, postgresgen.WorkLaneAdvanceHeadParams(p)))
}

func (q queries) WorkLaneUpdate(ctx context.Context, lane db.WorkLane) error {
	return errs.Found(q.q.WorkLaneUpdate(ctx, conv.WorkLaneUpdateToGen[postgresgen.WorkLaneUpdateParams](lane)))
}

func (q queries) WorkLaneGet(ctx context.Context, laneKey string) (db.WorkLane, error) {
	r, err := q.q.WorkLaneGet(ctx, laneKey)
	return conv.One(errs, r, err, conv.WorkLaneFromGen)
}
