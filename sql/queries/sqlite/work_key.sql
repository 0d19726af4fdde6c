-- Caller holds the lane lock of the key's lane.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys WHERE logical_key = sqlc.arg('logical_key');

-- Unique keys logical_key and work_id; caller holds the lane lock; an existing key is left untouched (rows = 0).
-- name: WorkKeyInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'));

-- Key lock. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key');
