-- Requires the lane lock (WorkLaneLock) held by the caller; moves the head to the lowest later sequence of the lane
-- whose item is not succeeded or cancelled, or to NULL (idle) when there is none (one
-- statement, no read-then-write). ORDER BY … LIMIT 1 walks pc_work_items_lane_sequence_key forward and
-- stops at the first live item (MIN() with the status filter would read the whole lane).
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

-- Engine-only (mysql): Requires the lane locks and the finished items' writes of this transaction; moves the head of each listed lane (primary key range) whose head item is now succeeded or cancelled to the lowest later sequence whose item is not, or to NULL; a single-table UPDATE (the lanes are already locked; the item reads are consistent reads along pc_work_items_lane_sequence_key, forced: correlated, MariaDB at times read the whole table per lane) (docs/protocol.md#set-based-completion).
-- name: WorkLaneAdvanceHeadMany :execrows
UPDATE pc_work_lanes
SET head_sequence = (
    SELECT i.lane_sequence
    FROM pc_work_items i FORCE INDEX (pc_work_items_lane_sequence_key)
    WHERE i.lane_key = pc_work_lanes.lane_key
      AND i.lane_sequence > pc_work_lanes.head_sequence
      AND i.status NOT IN ('succeeded', 'cancelled')
    ORDER BY i.lane_sequence
    LIMIT 1)
WHERE pc_work_lanes.lane_key IN (sqlc.slice('lane_keys'))
  AND EXISTS (SELECT 1
              FROM pc_work_items h FORCE INDEX (pc_work_items_lane_sequence_key)
              WHERE h.lane_key = pc_work_lanes.lane_key
                AND h.lane_sequence = pc_work_lanes.head_sequence
                AND h.status IN ('succeeded', 'cancelled'));

-- No lock; plain read of one lane.
-- name: WorkLaneGet :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Guard: primary key; run autocommitted before the locking transaction (docs/protocol.md#creating-rows). Inserted = rows == 1.
-- name: WorkLaneInsertIfAbsent :execrows
INSERT IGNORE INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
VALUES (sqlc.arg('lane_key'), 1, NULL);

-- Engine-only (mysql): Lock: lane, then item (FOR UPDATE; STRAIGHT_JOIN reads, and so locks, the lane first); MariaDB and MySQL 8 only, OceanBase runs WorkLaneLock and WorkItemLock with their touches (docs/protocol.md#round-trips).
-- name: WorkLaneItemLockJoined :one
SELECT STRAIGHT_JOIN l.lane_key, l.next_sequence, l.head_sequence, sqlc.embed(pc_work_items),
       CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes l
JOIN pc_work_items ON pc_work_items.work_id = sqlc.arg('work_id')
WHERE l.lane_key = sqlc.arg('lane_key')
FOR UPDATE;

-- Engine-only (mysql): Lock: lane, then item (FOR UPDATE SKIP LOCKED: no row when another transaction holds either; STRAIGHT_JOIN reads the lane first); batched claim only, never on OceanBase (docs/protocol.md#batched-claim).
-- name: WorkLaneItemLockJoinedSkipLocked :one
SELECT STRAIGHT_JOIN l.lane_key, l.next_sequence, l.head_sequence, sqlc.embed(pc_work_items),
       CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes l
JOIN pc_work_items ON pc_work_items.work_id = sqlc.arg('work_id')
WHERE l.lane_key = sqlc.arg('lane_key')
FOR UPDATE SKIP LOCKED;

-- Engine-only (mysql): Lock: lanes in ascending lane_key order (FOR UPDATE; the primary key range of the IN list is read, and so locked, in that order), then each lane's head item (FOR UPDATE SKIP LOCKED: a lane or item another transaction holds is skipped, never waited for; STRAIGHT_JOIN reads each lane before its item); the set-based claim pass on MariaDB and MySQL 8, never on OceanBase (docs/protocol.md#set-based-claim).
-- name: WorkLaneItemLockManySkipLocked :many
SELECT STRAIGHT_JOIN l.lane_key, l.next_sequence, l.head_sequence, sqlc.embed(pc_work_items),
       CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes l
JOIN pc_work_items ON pc_work_items.lane_key = l.lane_key AND pc_work_items.lane_sequence = l.head_sequence
WHERE l.lane_key IN (sqlc.slice('lane_keys'))
  AND pc_work_items.work_id IN (sqlc.slice('work_ids'))
ORDER BY l.lane_key
FOR UPDATE SKIP LOCKED;

-- Engine-only (mysql): Lock: lane, then logical key (when it exists), then item (FOR UPDATE; STRAIGHT_JOIN reads, and so locks, them in that order); the caller deletes the key it found next (WorkKeyDelete); MariaDB and MySQL 8 only (docs/protocol.md#round-trips).
-- name: WorkLaneKeyItemLockJoined :one
SELECT STRAIGHT_JOIN l.lane_key, l.next_sequence, l.head_sequence, CAST(k.logical_key IS NOT NULL AS SIGNED) AS has_key,
       sqlc.embed(pc_work_items), CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes l
LEFT JOIN pc_work_keys k ON k.logical_key = sqlc.arg('logical_key')
JOIN pc_work_items ON pc_work_items.work_id = sqlc.arg('work_id')
WHERE l.lane_key = sqlc.arg('lane_key')
FOR UPDATE;

-- Lane row lock (FOR UPDATE), taken after WorkLaneTouch; returns the database clock from the same statement.
-- name: WorkLaneLock :one
SELECT lane_key, next_sequence, head_sequence, CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key')
FOR UPDATE;

-- Engine-only (postgres, mysql): Lock: lanes (FOR UPDATE) in ascending lane_key order (the primary key range of the IN list is read, and so locked, in that order; FORCE INDEX (PRIMARY): on a small table the optimizer would scan every row, and a locking scan waits on rows other batches hold (a deadlock between two batches)), with the database clock; MariaDB and MySQL 8 (docs/protocol.md#set-based-completion).
-- name: WorkLaneLockMany :many
SELECT lane_key, next_sequence, head_sequence, CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_lanes FORCE INDEX (PRIMARY)
WHERE lane_key IN (sqlc.slice('lane_keys'))
ORDER BY lane_key
FOR UPDATE;

-- Engine-only (mysql): Lane row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: WorkLaneTouch :execrows
UPDATE pc_work_lanes SET lane_key = lane_key WHERE lane_key = sqlc.arg('lane_key');

-- Requires the lane lock (WorkLaneLock) held by the caller; 0 rows (no such lane) becomes db.ErrNotFound.
-- name: WorkLaneUpdate :execrows
UPDATE pc_work_lanes
SET next_sequence = sqlc.arg('next_sequence'),
    head_sequence = sqlc.narg('head_sequence')
WHERE lane_key = sqlc.arg('lane_key');

-- Engine-only (mysql): Requires the batch's lane locks (WorkLaneLockMany); writes each listed lane's allocator and head from a JSON object lane_key → [next_sequence, head_sequence] (lane keys are 64 hex characters) (docs/protocol.md#enqueue-many).
-- name: WorkLaneUpdateMany :execrows
UPDATE pc_work_lanes
SET next_sequence = CAST(JSON_EXTRACT(sqlc.arg('lanes'), CONCAT('$."', lane_key, '"[0]')) AS SIGNED),
    head_sequence = CAST(JSON_EXTRACT(sqlc.arg('lanes'), CONCAT('$."', lane_key, '"[1]')) AS SIGNED)
WHERE lane_key IN (sqlc.slice('lane_keys'));
