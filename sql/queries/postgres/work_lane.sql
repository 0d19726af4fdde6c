-- Guard: caller holds the lane lock; moves the head to the lowest later sequence of the lane whose item is not
-- succeeded or cancelled, or to NULL (idle) when there is none (one
-- statement, no read-then-write). The subquery walks pc_work_items_lane_sequence_key forward.
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
WHERE lane_key = sqlc.arg('lane_key');

-- No lock; plain read of one lane.
-- name: WorkLaneGet :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Guard: unique lane_key; never fails on an existing row (inserted = rows == 1). A new lane is idle.
-- name: WorkLaneInsertIfAbsent :execrows
INSERT INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
VALUES (sqlc.arg('lane_key'), 1, NULL)
ON CONFLICT DO NOTHING;

-- Lock: the lane row (FOR UPDATE); first step of the lane → key → item order; returns the database clock too.
-- name: WorkLaneLock :one
SELECT lane_key, next_sequence, head_sequence, clock_timestamp()::timestamptz AS db_now
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key')
FOR UPDATE;

-- Engine-only (postgres, mysql): Lock: the batch's lanes (FOR UPDATE) in ascending lane_key order, the first step of the lock order across a batch (docs/protocol.md#set-based-completion).
-- name: WorkLaneLockMany :many
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = ANY (sqlc.arg('lane_keys')::text[])
ORDER BY lane_key
FOR UPDATE;

-- Engine-only (postgres): Lock: the lane row (FOR UPDATE SKIP LOCKED: no row when another transaction holds it), pipelined with the item (WorkLaneItemLockSkipLocked; MariaDB and SQLite read both in one statement); batched claim only (docs/protocol.md#batched-claim).
-- name: WorkLaneLockSkipLocked :one
SELECT lane_key, next_sequence, head_sequence, clock_timestamp()::timestamptz AS db_now
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key')
FOR UPDATE SKIP LOCKED;

-- Guard: caller holds the lane lock; writes the allocator and the head (NULL = idle).
-- name: WorkLaneUpdate :execrows
UPDATE pc_work_lanes
SET next_sequence = sqlc.arg('next_sequence'),
    head_sequence = sqlc.narg('head_sequence')
WHERE lane_key = sqlc.arg('lane_key');
