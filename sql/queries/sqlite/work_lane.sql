-- Guard: caller holds the lane lock (the write lock); moves the head to the lowest later sequence of the lane whose
-- item is not succeeded or cancelled, or to NULL (idle) when there is none, in one
-- statement (no read-then-write).
-- name: WorkLaneAdvanceHead :execrows
UPDATE pc_work_lanes
SET head_sequence = (
    SELECT i.lane_sequence
    FROM pc_work_items i
    WHERE i.lane_key = sqlc.arg('lane_key')
      AND i.lane_sequence > sqlc.arg('after_sequence')
      AND i.status NOT IN ('succeeded', 'cancelled')
    ORDER BY i.lane_sequence
    LIMIT 1)
WHERE pc_work_lanes.lane_key = sqlc.arg('lane_key');

-- No lock; autocommitted read.
-- name: WorkLaneGet :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Unique key lane_key; an existing lane is left untouched (rows = 0).
-- name: WorkLaneInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
VALUES (sqlc.arg('lane_key'), 1, NULL);

-- Engine-only (sqlite): Lane and item lock plus the database clock in one read (WorkLaneLock then WorkItemLock): SQLite has no row locks, the BEGIN IMMEDIATE transaction already holds the database write lock, so reading both rows at once locks nothing less (docs/protocol.md#round-trips).
-- name: WorkLaneItemReadLocked :one
SELECT pc_work_lanes.lane_key, pc_work_lanes.next_sequence, pc_work_lanes.head_sequence, sqlc.embed(pc_work_items),
       CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000 AS db_now
FROM pc_work_lanes
JOIN pc_work_items ON pc_work_items.work_id = sqlc.arg('work_id')
WHERE pc_work_lanes.lane_key = sqlc.arg('lane_key');

-- Lane lock plus the database clock. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: WorkLaneLock :one
SELECT lane_key, next_sequence, head_sequence, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000 AS db_now
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Guard: caller holds the lane lock (WorkLaneLock in the same transaction); rows = 0 means the lane does not exist.
-- name: WorkLaneUpdate :execrows
UPDATE pc_work_lanes
SET next_sequence = sqlc.arg('next_sequence'),
    head_sequence = sqlc.narg('head_sequence')
WHERE lane_key = sqlc.arg('lane_key');
