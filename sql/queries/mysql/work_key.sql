-- Requires the lane lock; deletes the logical key when its item succeeds or is cancelled.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys WHERE logical_key = sqlc.arg('logical_key');

-- Engine-only (mysql): Requires the key and item locks (WorkKeyLockMany, WorkItemLockMany); guard: the item is succeeded at its expected version + 1 (the one WorkItemAttemptSucceedMany just wrote; expected versions by work_id in a JSON object), so only the keys of the items the batch finished go; each named by its logical key (the primary key range, forced: a DELETE that scanned a small table would wait on the keys other batches hold, and two batches deadlocked so) and its item (docs/protocol.md#set-based-completion).
-- name: WorkKeyDeleteMany :execrows
DELETE k FROM pc_work_keys AS k FORCE INDEX (PRIMARY)
JOIN pc_work_items AS i FORCE INDEX (PRIMARY) ON i.work_id = k.work_id
WHERE k.logical_key IN (sqlc.slice('logical_keys'))
  AND k.work_id IN (sqlc.slice('work_ids'))
  AND i.status = 'succeeded'
  AND i.state_version = CAST(JSON_EXTRACT(sqlc.arg('versions'), CONCAT('$."', i.work_id, '"')) AS SIGNED) + 1;

-- Engine-only (mysql): Guard: primary key (and unique work_id), under the lane lock; an existing key fails the statement as a duplicate (db.ErrConflict), which stops WorkKeyItemInsertAtCommit's multi-statement before the lane and item writes (docs/protocol.md#set-based-steps-in-mysql-mode).
-- name: WorkKeyInsert :exec
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'));

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

-- Engine-only (postgres, mysql): Guard: primary key and unique work_id, under the batch's lane locks: inserts the keys that no committed row has, from a JSON array of [logical_key, work_id, lane_key] of at most 1,000 distinct keys (the adapter sends 32 per statement; each row taken out of the array once, in a derived table its LIMIT keeps materialized, as WorkItemInsertMany). Under READ COMMITTED the NOT EXISTS is a consistent read, so an existing key takes no lock here (INSERT IGNORE would take a shared one, and a completion deleting that key under its lane lock could deadlock with this batch's later WorkKeyLock) — as WorkKeyInsertIfAbsentUnlocked; a key another transaction inserted and has not committed makes the insert wait, then fail as a duplicate, and the adapter then inserts that chunk key by key; MariaDB and MySQL 8 (docs/protocol.md#enqueue-many).
-- name: WorkKeyInsertMany :execrows
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
SELECT j.logical_key, j.work_id, j.lane_key, CAST(sqlc.arg('created_at') AS DATETIME(6))
FROM (SELECT JSON_UNQUOTE(JSON_EXTRACT(r.o, '$[0]')) AS logical_key,
             JSON_UNQUOTE(JSON_EXTRACT(r.o, '$[1]')) AS work_id,
             JSON_UNQUOTE(JSON_EXTRACT(r.o, '$[2]')) AS lane_key
      FROM (SELECT JSON_EXTRACT(sqlc.arg('keys'), CONCAT('$[', n.k, ']')) AS o
            FROM (SELECT a.d + 10 * b.d + 100 * c.d AS k
                  FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a
                  CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b
                  CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c
                  WHERE a.d + 10 * b.d + 100 * c.d < CAST(sqlc.arg('count') AS SIGNED)) AS n
            LIMIT 1000) AS r) AS j
-- The key compared as the column's ASCII, so the lookup uses the primary key (JSON text is utf8mb4).
WHERE NOT EXISTS (SELECT 1 FROM pc_work_keys k WHERE k.logical_key = CONVERT(j.logical_key USING ascii) COLLATE ascii_bin);

-- Engine-only (mysql): No lock; which of the listed new work ids own a key now (read after WorkKeyInsertMany in the same transaction: the ids are new uuids, so a key naming one is a key this transaction inserted) (docs/protocol.md#enqueue-many).
-- name: WorkKeyListOwnersMany :many
SELECT work_id
FROM pc_work_keys
WHERE work_id IN (sqlc.slice('work_ids'));

-- Logical key row lock (FOR UPDATE), taken after WorkKeyTouch.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key')
FOR UPDATE;

-- Engine-only (postgres, mysql): Lock: logical keys (FOR UPDATE) in ascending order (the primary key range of the IN list is read, and so locked, in that order; FORCE INDEX (PRIMARY): on a small table the optimizer would scan every row, and a locking scan waits on rows other batches hold (a deadlock between two batches)); a missing key takes no lock under READ COMMITTED; MariaDB and MySQL 8 (docs/protocol.md#set-based-completion).
-- name: WorkKeyLockMany :many
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys FORCE INDEX (PRIMARY)
WHERE logical_key IN (sqlc.slice('logical_keys'))
ORDER BY logical_key
FOR UPDATE;

-- Engine-only (mysql): Logical key row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: WorkKeyTouch :execrows
UPDATE pc_work_keys SET logical_key = logical_key WHERE logical_key = sqlc.arg('logical_key');
