package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func workLaneFromRow(r postgresgen.PcWorkLane) db.WorkLane {
	return db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromSeqPtr(r.HeadSequence)}
}

func (s queries) WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error) {
	rows, err := s.q.WorkLaneInsertIfAbsent(ctx, laneKey)
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) WorkLaneLock(ctx context.Context, laneKey string) (db.WorkLane, time.Time, error) {
	r, err := s.q.WorkLaneLock(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, time.Time{}, interpretError(err)
	}
	lane := db.WorkLane{LaneKey: r.LaneKey, NextSequence: r.NextSequence, HeadSequence: fromSeqPtr(r.HeadSequence)}
	return lane, fromTime(r.DbNow), nil
}

// WorkLaneAdvanceHead returns db.ErrNotFound when the lane does not exist.
func (s queries) WorkLaneAdvanceHead(ctx context.Context, laneKey string, after int64) error {
	return rowsOrNotFound(s.q.WorkLaneAdvanceHead(ctx, postgresgen.WorkLaneAdvanceHeadParams{
		LaneKey:       laneKey,
		AfterSequence: after,
	}))
}

// WorkLaneUpdate returns db.ErrNotFound when the lane does not exist.
func (s queries) WorkLaneUpdate(ctx context.Context, lane db.WorkLane) error {
	return rowsOrNotFound(s.q.WorkLaneUpdate(ctx, postgresgen.WorkLaneUpdateParams{
		NextSequence: lane.NextSequence,
		HeadSequence: toSeqPtr(lane.HeadSequence),
		LaneKey:      lane.LaneKey,
	}))
}

func (s queries) WorkLaneGet(ctx context.Context, laneKey string) (db.WorkLane, error) {
	r, err := s.q.WorkLaneGet(ctx, laneKey)
	if err != nil {
		return db.WorkLane{}, interpretError(err)
	}
	return workLaneFromRow(r), nil
}
