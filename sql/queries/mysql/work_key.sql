-- Requires the lane lock; deletes the logical key when its item succeeds or is cancelled.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys WHERE logical_key = sqlc.arg('logical_key');

-- Guard: primary key (and unique work_id), under the lane lock. Inserted = rows == 1.
-- name: WorkKeyInsertIfAbsent :execrows
INSERT IGNORE INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'));

-- Logical key row lock (FOR UPDATE), taken after WorkKeyTouch.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key')
FOR UPDATE;

-- Engine-only (mysql): Logical key row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: WorkKeyTouch :execrows
UPDATE pc_work_keys SET logical_key = logical_key WHERE logical_key = sqlc.arg('logical_key');
