package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// workLaneCases are the cases of pc_work_lanes (work_lane.sql).
var workLaneCases = []storeCase{
	{"WorkLaneInsertIfAbsent/ThenGetLockUpdate", testWorkLane},
	{"WorkLaneAdvanceHead/SkipsFinishedItems", testWorkLaneAdvanceHead},
}

// newLaneWithHead creates a lane whose head is head (0 = idle) and whose allocator is past next-1.
func newLaneWithHead(t *testing.T, s db.Store, head, next int64) string {
	t.Helper()
	ctx := context.Background()
	laneKey := randHex(t, 64)
	inserted, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.True(t, inserted)
	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: next, HeadSequence: head}))
	return laneKey
}

func testWorkLane(t *testing.T, s db.Store) {
	ctx := context.Background()
	laneKey := randHex(t, 64)

	_, err := s.WorkLaneGet(ctx, laneKey)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.WorkLaneLock(ctx, laneKey)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	// Updating a lane that does not exist is an error, not a silent no-op.
	require.ErrorIs(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 2}), db.ErrNotFound)

	inserted, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.False(t, inserted)

	lane, err := s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 1, HeadSequence: 0}, lane)

	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}))
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 2, HeadSequence: 1}, lane)

	// Head 0 writes NULL (idle) and reads back as 0.
	require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 3}))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lane, now, err := q.WorkLaneLock(ctx, laneKey)
		require.NoError(t, err)
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 3, HeadSequence: 0}, lane)
		requireUTC(t, now)
		requireNear(t, time.Now(), now, clockSlack)
		return nil
	}))

	// A second InsertIfAbsent never resets an existing lane.
	inserted, err = s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	require.False(t, inserted)
	lane, err = s.WorkLaneGet(ctx, laneKey)
	require.NoError(t, err)
	require.EqualValues(t, 3, lane.NextSequence)
}

func testWorkLaneAdvanceHead(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	laneKey := randHex(t, 64)
	for seq, status := range map[int64]string{
		1: db.StatusSucceeded, 2: db.StatusCancelled, 3: db.StatusFailed, 4: db.StatusCancelled,
		5: db.StatusQueued, 6: db.StatusSucceeded, 7: db.StatusRetryWait,
	} {
		item := newItem(t, laneKey, seq, "k", now)
		item.Status = status
		insertItem(t, s, item)
	}
	// Another lane's live item never counts.
	other := randHex(t, 64)
	insertItem(t, s, newItem(t, other, 2, "k", now))
	_, err := s.WorkLaneInsertIfAbsent(ctx, laneKey)
	require.NoError(t, err)
	_, err = s.WorkLaneInsertIfAbsent(ctx, other)
	require.NoError(t, err)

	for _, tc := range []struct{ after, want int64 }{
		{0, 3}, {1, 3}, {2, 3}, {3, 5}, {4, 5}, {5, 7}, {6, 7}, {7, 0}, {100, 0},
	} {
		require.NoError(t, s.WorkLaneUpdate(ctx, db.WorkLane{LaneKey: laneKey, NextSequence: 8, HeadSequence: 1}))
		require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			return q.WorkLaneAdvanceHead(ctx, db.WorkLaneAdvanceHeadParams{LaneKey: laneKey, AfterSequence: tc.after})
		}))
		lane, err := s.WorkLaneGet(ctx, laneKey)
		require.NoError(t, err)
		require.Equal(t, db.WorkLane{LaneKey: laneKey, NextSequence: 8, HeadSequence: tc.want}, lane, "after %d", tc.after)
	}
	otherLane, err := s.WorkLaneGet(ctx, other)
	require.NoError(t, err)
	require.Equal(t, db.WorkLane{LaneKey: other, NextSequence: 1}, otherLane, "other lanes are untouched")
	require.ErrorIs(t, s.WorkLaneAdvanceHead(ctx, db.WorkLaneAdvanceHeadParams{LaneKey: randHex(t, 64), AfterSequence: 0}), db.ErrNotFound)
}
