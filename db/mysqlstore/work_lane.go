package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func workLaneFromGen(r mysqlgen.PcWorkLane) db.WorkLane {
	return db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromNullInt64(r.HeadSequence)}
}

func (q *queries) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	n, err := q.q.WorkLaneInsertIfAbsent(ctx, laneKey)
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	if _, err := q.q.WorkLaneTouch(ctx, laneKey); err != nil {
		return db.WorkLane{}, time.Time{}, interpretError(err)
	}
	r, err := q.q.WorkLaneLock(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, time.Time{}, interpretError(err)
	}
	lane := db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromNullInt64(r.HeadSequence)}
	return lane, r.DbNow.UTC(), nil
}

// WorkLaneAdvanceHead returns db.ErrNotFound when the lane does not exist.
func (q *queries) WorkLaneAdvanceHead(ctx context.Context, laneKey string, after int64) error {
	n, err := q.q.WorkLaneAdvanceHead(ctx, mysqlgen.WorkLaneAdvanceHeadParams{LaneKey: laneKey, AfterSequence: after})
	return rowsFound(n, err)
}

func (q *queries) WorkLaneUpdate(ctx context.Context, lane db.WorkLane) error {
	n, err := q.q.WorkLaneUpdate(ctx, mysqlgen.WorkLaneUpdateParams{
		NextSequence: lane.NextSequence,
		HeadSequence: nullInt64(lane.HeadSequence),
		LaneKey:      lane.LaneKey,
	})
	return rowsFound(n, err)
}

func (q *queries) WorkLaneGet(ctx context.Context, laneKey string) (db.WorkLane, error) {
	r, err := q.q.WorkLaneGet(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, interpretError(err)
	}
	return workLaneFromGen(r), nil
}
