-- No lock; plain read of one lane.
-- name: WorkLaneGet :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Guard: primary key; run autocommitted before the locking transaction (SPEC §2 InnoDB trap). Inserted = rows == 1.
-- name: WorkLaneInsertIfAbsent :execrows
INSERT IGNORE INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
VALUES (sqlc.arg('lane_key'), 1, NULL);

-- Lane row lock (FOR UPDATE), taken after WorkLaneTouch.
-- name: WorkLaneLock :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key')
FOR UPDATE;

-- Lane row lock via a no-op update; differs from postgres because OceanBase starts the transaction and row lock only on a write.
-- name: WorkLaneTouch :execrows
UPDATE pc_work_lanes SET lane_key = lane_key WHERE lane_key = sqlc.arg('lane_key');

-- Requires the lane lock (WorkLaneLock) held by the caller; 0 rows (no such lane) becomes db.ErrNotFound.
-- name: WorkLaneUpdate :execrows
UPDATE pc_work_lanes
SET next_sequence = sqlc.arg('next_sequence'),
    head_sequence = sqlc.narg('head_sequence')
WHERE lane_key = sqlc.arg('lane_key');
