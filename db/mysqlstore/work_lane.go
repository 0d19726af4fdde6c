package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	return errs.Inserted(q.q.WorkLaneInsertIfAbsent(ctx, laneKey))
}

// WorkLaneLock runs the no-op WorkLaneTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	if _, err := touch(ctx, q, q.q.WorkLaneTouch, laneKey); err != nil {
		return db.WorkLane{}, time.Time{}, errs(err)
	}
	r, err := q.q.WorkLaneLock(ctx, laneKey)
	return conv.Locked(errs, r, r.DbNow, err, conv.WorkLaneLockFromGen)
}

func (q queries) WorkLaneAdvanceHead(ctx context.Context, p db.WorkLaneAdvanceHeadParams) error {
	return errs.Found(q.q.WorkLaneAdvanceHead(ctx, mysqlgen.WorkLaneAdvanceHeadParams(p)))
}

func (q queries) WorkLaneUpdate(ctx context.Context, lane db.WorkLane) error {
	return errs.Found(q.q.WorkLaneUpdate(ctx, conv.WorkLaneUpdateToGen[mysqlgen.WorkLaneUpdateParams](lane)))
}

func (q queries) WorkLaneGet(ctx context.Context, laneKey string) (db.WorkLane, error) {
	r, err := q.q.WorkLaneGet(ctx, laneKey)
	return conv.One(errs, r, err, conv.WorkLaneFromGen)
}
