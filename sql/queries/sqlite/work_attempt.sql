-- Requires the item lock (the count is exact: only the lock holder adds attempts); one item's snoozed attempts in
-- one recovery generation, read through the primary key.
-- name: WorkAttemptCountSnoozed :one
SELECT COUNT(*)
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id')
  AND recovery_generation = sqlc.arg('recovery_generation')
  AND outcome = 'snoozed';

-- Caller holds the item lock; deletes the audit rows of purged items.
-- name: WorkAttemptDeleteByWorkIDs :execrows
DELETE FROM pc_work_attempts WHERE work_id IN (sqlc.slice('work_ids'));

-- Guard: the attempt is unfinished (finished_at IS NULL); caller holds the item lock.
-- name: WorkAttemptFinish :execrows
UPDATE pc_work_attempts
SET finished_at = sqlc.arg('finished_at'),
    outcome = sqlc.arg('outcome'),
    error_category = sqlc.narg('error_category'),
    error_code = sqlc.narg('error_code')
WHERE work_id = sqlc.arg('work_id')
  AND attempt_no = sqlc.arg('attempt_no')
  AND finished_at IS NULL;

-- No lock; autocommitted read.
-- name: WorkAttemptGet :one
SELECT work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
       error_category, error_code, trace_id, span_id
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id') AND attempt_no = sqlc.arg('attempt_no');

-- Guard: the attempt is unfinished (finished_at IS NULL).
-- name: WorkAttemptHeartbeat :execrows
UPDATE pc_work_attempts
SET heartbeat_at = sqlc.arg('heartbeat_at')
WHERE work_id = sqlc.arg('work_id')
  AND attempt_no = sqlc.arg('attempt_no')
  AND finished_at IS NULL;

-- Unique key (work_id, attempt_no); caller holds the item lock.
-- name: WorkAttemptInsert :exec
INSERT INTO pc_work_attempts (
    work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
    error_category, error_code, trace_id, span_id
) VALUES (
    sqlc.arg('work_id'), sqlc.arg('attempt_no'), sqlc.arg('recovery_generation'), sqlc.arg('owner_id'),
    sqlc.arg('fence'), sqlc.arg('started_at'), sqlc.narg('heartbeat_at'), sqlc.narg('finished_at'),
    sqlc.narg('outcome'), sqlc.narg('error_category'), sqlc.narg('error_code'), sqlc.narg('trace_id'),
    sqlc.narg('span_id')
);

-- No lock; autocommitted read, oldest attempt first.
-- name: WorkAttemptListByWorkID :many
SELECT work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
       error_category, error_code, trace_id, span_id
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id')
ORDER BY attempt_no;
