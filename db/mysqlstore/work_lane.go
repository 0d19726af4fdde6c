package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"

	"github.com/powercontext/powercontext/db/internal/conv"
)

// WorkLaneLock runs the no-op WorkLaneTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	if _, err := touch(ctx, q, q.q.WorkLaneTouch, laneKey); err != nil {
		return db.WorkLane{}, time.Time{}, errs(err)
	}
	r, err := q.q.WorkLaneLock(ctx, laneKey)
	return conv.Locked(errs, r, r.DbNow, err, conv.WorkLaneLockFromGen)
}
