-- Guard: caller holds the lane lock; the key is deleted when its item succeeds or is cancelled.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key');

-- Guard: unique logical_key and work_id; never fails on an existing row (inserted = rows == 1).
-- name: WorkKeyInsertIfAbsent :execrows
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'))
ON CONFLICT DO NOTHING;

-- Lock: the logical key row (FOR UPDATE); taken after the lane lock.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key')
FOR UPDATE;
