-- No lock; autocommitted read.
-- name: WorkLaneGet :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- Unique key lane_key; an existing lane is left untouched (rows = 0).
-- name: WorkLaneInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_work_lanes (lane_key, next_sequence, head_sequence)
VALUES (sqlc.arg('lane_key'), 1, NULL);

-- Lane lock. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: WorkLaneLock :one
SELECT lane_key, next_sequence, head_sequence
FROM pc_work_lanes
WHERE lane_key = sqlc.arg('lane_key');

-- No-op update kept so every engine has the same query names; exercised by tests, NOT called by the SQLite adapter (BEGIN IMMEDIATE already holds the write lock).
-- name: WorkLaneTouch :execrows
UPDATE pc_work_lanes SET lane_key = lane_key WHERE lane_key = sqlc.arg('lane_key');

-- Guard: caller holds the lane lock (WorkLaneLock in the same transaction); rows = 0 means the lane does not exist.
-- name: WorkLaneUpdate :execrows
UPDATE pc_work_lanes
SET next_sequence = sqlc.arg('next_sequence'),
    head_sequence = sqlc.narg('head_sequence')
WHERE lane_key = sqlc.arg('lane_key');
