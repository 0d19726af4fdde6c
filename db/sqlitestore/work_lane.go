package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func laneFromGen(r sqlitegen.PcWorkLane) db.WorkLane {
	return db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromNullInt64(r.HeadSequence)}
}

func (q *queries) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	return inserted(q.w.WorkLaneInsertIfAbsent(ctx, laneKey))
}

// WorkLaneLock is a plain read: the BEGIN IMMEDIATE transaction already holds the database write lock.
func (q *queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	r, err := q.w.WorkLaneLock(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, time.Time{}, interpretError(err)
	}
	lane := db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromNullInt64(r.HeadSequence)}
	return lane, fromMicros(r.DbNow), nil
}

// WorkLaneAdvanceHead returns db.ErrNotFound when the lane does not exist.
func (q *queries) WorkLaneAdvanceHead(ctx context.Context, laneKey string, after int64) error {
	return rowsOrNotFound(q.w.WorkLaneAdvanceHead(ctx, sqlitegen.WorkLaneAdvanceHeadParams{LaneKey: laneKey, AfterSequence: after}))
}

func (q *queries) WorkLaneUpdate(ctx context.Context, lane db.WorkLane) error {
	return rowsOrNotFound(q.w.WorkLaneUpdate(ctx, sqlitegen.WorkLaneUpdateParams{
		NextSequence: lane.NextSequence,
		HeadSequence: toNullInt64(lane.HeadSequence),
		LaneKey:      lane.LaneKey,
	}))
}

func (q *queries) WorkLaneGet(ctx context.Context, laneKey string) (db.WorkLane, error) {
	r, err := q.r.WorkLaneGet(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, interpretError(err)
	}
	return laneFromGen(r), nil
}
