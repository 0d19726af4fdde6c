-- Requires the item lock (the count is exact: only the lock holder adds attempts); one item's snoozed attempts in
-- one recovery generation, read through the primary key.
-- name: WorkAttemptCountSnoozed :one
SELECT COUNT(*)
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id')
  AND recovery_generation = sqlc.arg('recovery_generation')
  AND outcome = 'snoozed';

-- Engine-only (mysql): No lock (the items are locked by the caller); the trace ids of each listed item's current attempt, read before the claim starts the next one (docs/protocol.md#set-based-claim).
-- name: WorkAttemptCurrentTraces :many
SELECT a.work_id, a.trace_id, a.span_id
FROM pc_work_items i
JOIN pc_work_attempts a ON a.work_id = i.work_id AND a.attempt_no = i.attempt_count
WHERE i.work_id IN (sqlc.slice('work_ids'));

-- No lock; retention purge of the attempts of purged items.
-- name: WorkAttemptDeleteByWorkIDs :execrows
DELETE FROM pc_work_attempts WHERE work_id IN (sqlc.slice('work_ids'));

-- Requires the item lock; guard: the attempt is not finished yet.
-- name: WorkAttemptFinish :execrows
UPDATE pc_work_attempts
SET finished_at = sqlc.arg('finished_at'),
    outcome = sqlc.arg('outcome'),
    error_category = sqlc.narg('error_category'),
    error_code = sqlc.narg('error_code')
WHERE work_id = sqlc.arg('work_id')
  AND attempt_no = sqlc.arg('attempt_no')
  AND finished_at IS NULL;

-- No lock; plain read of one attempt.
-- name: WorkAttemptGet :one
SELECT work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
       error_category, error_code, trace_id, span_id
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id') AND attempt_no = sqlc.arg('attempt_no');

-- Guard: the attempt is not finished yet (runs after a successful WorkItemExtendLease).
-- name: WorkAttemptHeartbeat :execrows
UPDATE pc_work_attempts
SET heartbeat_at = sqlc.arg('heartbeat_at')
WHERE work_id = sqlc.arg('work_id')
  AND attempt_no = sqlc.arg('attempt_no')
  AND finished_at IS NULL;

-- Requires the item lock; guard: primary key (work_id, attempt_no).
-- name: WorkAttemptInsert :exec
INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at,
                              finished_at, outcome, error_category, error_code, trace_id, span_id)
VALUES (sqlc.arg('work_id'), sqlc.arg('attempt_no'), sqlc.arg('recovery_generation'), sqlc.arg('owner_id'),
        sqlc.arg('fence'), sqlc.arg('started_at'), sqlc.narg('heartbeat_at'), sqlc.narg('finished_at'),
        sqlc.narg('outcome'), sqlc.narg('error_category'), sqlc.narg('error_code'), sqlc.narg('trace_id'),
        sqlc.narg('span_id'));

-- Engine-only (mysql): Requires the item locks and the claim (WorkItemClaimListedMany) of this transaction; guard: primary key (work_id, attempt_no); one attempt row per claimed item from its claimed state (a consistent read that sees this transaction's own writes), the trace ids looked up by work_id in a JSON object (docs/protocol.md#set-based-claim).
-- name: WorkAttemptInsertClaimed :execrows
INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, trace_id, span_id)
SELECT i.work_id, i.attempt_count, i.recovery_generation, i.lease_owner, i.lease_fence, i.updated_at,
       JSON_UNQUOTE(JSON_EXTRACT(sqlc.arg('traces'), CONCAT('$."', i.work_id, '"[0]'))),
       JSON_UNQUOTE(JSON_EXTRACT(sqlc.arg('traces'), CONCAT('$."', i.work_id, '"[1]')))
FROM pc_work_items i
WHERE i.work_id IN (sqlc.slice('work_ids'));

-- No lock; the attempts of one item in attempt order.
-- name: WorkAttemptListByWorkID :many
SELECT work_id, attempt_no, recovery_generation, owner_id, fence, started_at, heartbeat_at, finished_at, outcome,
       error_category, error_code, trace_id, span_id
FROM pc_work_attempts
WHERE work_id = sqlc.arg('work_id')
ORDER BY attempt_no;
