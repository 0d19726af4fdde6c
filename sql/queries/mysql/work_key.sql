-- Requires the lane lock; deletes the logical key when its item succeeds or is cancelled.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys WHERE logical_key = sqlc.arg('logical_key');

-- Guard: primary key (and unique work_id), under the lane lock. Inserted = rows == 1.
-- name: WorkKeyInsertIfAbsent :execrows
INSERT IGNORE INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'));

-- Engine-only (mysql): Guard: primary key (and unique work_id), under the lane lock; inserts the key when no committed row has it. Under READ COMMITTED the NOT EXISTS is a consistent read, so an existing key takes no lock here (INSERT IGNORE would take a shared one, see WorkKeyItemInsert) and the caller's WorkKeyLock takes the exclusive lock first. A key another transaction inserted and has not committed makes the insert wait, then fail as a duplicate (db.ErrConflict). Inserted = rows == 1.
-- name: WorkKeyInsertIfAbsentUnlocked :execrows
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
SELECT CAST(sqlc.arg('logical_key') AS CHAR), CAST(sqlc.arg('work_id') AS CHAR), CAST(sqlc.arg('lane_key') AS CHAR),
       CAST(sqlc.arg('created_at') AS DATETIME(6))
FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM pc_work_keys k WHERE k.logical_key = sqlc.arg('logical_key'));

-- Logical key row lock (FOR UPDATE), taken after WorkKeyTouch.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key')
FOR UPDATE;

-- Engine-only (mysql): Logical key row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: WorkKeyTouch :execrows
UPDATE pc_work_keys SET logical_key = logical_key WHERE logical_key = sqlc.arg('logical_key');
