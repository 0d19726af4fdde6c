package db

import (
	"context"
	"time"
)

// WorkLaneQueries are the statements of pc_work_lanes: the lanes, their allocators and heads (sql/queries/<engine>/work_lane.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type WorkLaneQueries interface {
	// WorkLaneAdvanceHead sets the lane's head to the lowest lane_sequence > AfterSequence whose item is not
	// succeeded or cancelled, or to idle (NULL) when there is none, in one statement; db.ErrNotFound when the lane
	// does not exist. The caller holds the lane lock.
	WorkLaneAdvanceHead(ctx context.Context, p WorkLaneAdvanceHeadParams) error

	// WorkLaneDeleteIdle deletes a lane that has no head (the caller holds its lock); 0 when it is not idle.
	WorkLaneDeleteIdle(ctx context.Context, laneKey string) (int64, error)
	WorkLaneGet(ctx context.Context, laneKey string) (WorkLane, error)
	WorkLaneInsertIfAbsent(ctx context.Context, laneKey string) (bool, error)

	// WorkLaneItemLock is WorkLaneLock then WorkItemLock (lane → item); the time is the item lock's database clock.
	// db.ErrNotFound when either row is missing.
	WorkLaneItemLock(ctx context.Context, p WorkLaneItemLockParams) (WorkLane, WorkItem, time.Time, error)

	// WorkLaneItemLockSkipLocked is WorkLaneItemLock with SKIP LOCKED (SELECT … FOR UPDATE SKIP LOCKED of the lane,
	// then of the item), so it never waits for a row lock. db.ErrNotFound when either row is missing or held by
	// another transaction (one of them may then stay locked without the other).
	WorkLaneItemLockSkipLocked(ctx context.Context, p WorkLaneItemLockParams) (WorkLane, WorkItem, time.Time, error)

	// WorkLaneKeyDeleteItemLock is WorkLaneLock, WorkKeyDelete(p.LogicalKey) (whose DELETE takes the key's row lock)
	// then WorkItemLock (lane → key → item); db.ErrNotFound when the lane or the item is missing.
	WorkLaneKeyDeleteItemLock(ctx context.Context, p WorkLaneKeyDeleteItemLockParams) (WorkLane, WorkItem, time.Time, error)

	// WorkLaneKeyItemLockMany locks the lanes (ascending lane_key), then the logical keys, then the items of refs
	// — the lock order across the whole batch — waiting for each, and returns one LockedItem per ref (in refs'
	// order; Found false when the lane or the item does not exist) and the database clock read after the item
	// locks.
	WorkLaneKeyItemLockMany(ctx context.Context, refs []WorkItemRef) ([]LockedItem, time.Time, error)

	// WorkLaneLock returns the locked row and the database clock read in the same statement.
	WorkLaneLock(ctx context.Context, laneKey string) (WorkLane, time.Time, error)

	// WorkLaneLockMany locks the lanes (ascending lane_key, waiting for each) and returns those that exist, in
	// ascending order, with the database clock read after the locks.
	WorkLaneLockMany(ctx context.Context, laneKeys []string) ([]WorkLane, time.Time, error)
	WorkLaneUpdate(ctx context.Context, lane WorkLane) error
}
