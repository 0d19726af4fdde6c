-- No lock: unlocked candidates over lane heads (docs/protocol.md#claim). One branch per status reads
-- pc_work_items_status_due_idx in (available_at, created_at) order and stops at the limit. Differs from postgres
-- because kinds arrive as a JSON array read with json_each (sqlc.slice cannot sit beside named args on SQLite, sqlc
-- #2452) and a compound SELECT needs its ordered, limited branches wrapped in subqueries.
-- name: WorkItemClaimCandidates :many
SELECT c.work_id, c.lane_key, c.logical_key, c.lane_sequence, c.kind, c.payload_version, c.status
FROM (
    SELECT work_id, lane_key, logical_key, lane_sequence, kind, payload_version, status, available_at, created_at FROM (
        SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
               i.available_at, i.created_at
        FROM pc_work_items i
        JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
        WHERE i.status = 'queued'
          AND i.available_at <= CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
          AND i.kind IN (SELECT value FROM json_each(CAST(sqlc.arg('kinds_json') AS TEXT)))
        ORDER BY i.available_at, i.created_at
        LIMIT CAST(sqlc.arg('limit') AS INT32))
    UNION ALL
    SELECT work_id, lane_key, logical_key, lane_sequence, kind, payload_version, status, available_at, created_at FROM (
        SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
               i.available_at, i.created_at
        FROM pc_work_items i
        JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
        WHERE i.status = 'retry_wait'
          AND i.available_at <= CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
          AND i.kind IN (SELECT value FROM json_each(CAST(sqlc.arg('kinds_json') AS TEXT)))
        ORDER BY i.available_at, i.created_at
        LIMIT CAST(sqlc.arg('limit') AS INT32))
    UNION ALL
    SELECT work_id, lane_key, logical_key, lane_sequence, kind, payload_version, status, available_at, created_at FROM (
        SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
               i.available_at, i.created_at
        FROM pc_work_items i
        JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
        WHERE i.status IN ('running', 'cancelling')
          AND i.lease_expires_at <= CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
        ORDER BY i.available_at, i.created_at
        LIMIT CAST(sqlc.arg('limit') AS INT32))
) c
ORDER BY c.available_at, c.created_at
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Guard: only rows still succeeded or cancelled are deleted.
-- name: WorkItemDeleteTerminal :execrows
DELETE FROM pc_work_items
WHERE work_id IN (sqlc.slice('work_ids'))
  AND status IN ('succeeded', 'cancelled');

-- Guard: lease owner, fence and attempt count match, running, no cancel requested; state_version unchanged.
-- name: WorkItemExtendLease :execrows
UPDATE pc_work_items
SET lease_expires_at = sqlc.arg('lease_expires_at')
WHERE work_id = sqlc.arg('work_id')
  AND status = 'running'
  AND cancel_requested = 0
  AND lease_owner = sqlc.arg('lease_owner')
  AND lease_fence = sqlc.arg('lease_fence')
  AND attempt_count = sqlc.arg('attempt_count');

-- No lock; autocommitted read.
-- name: WorkItemGet :one
SELECT work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status,
       available_at, lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count,
       recovery_generation, max_attempts, cancel_requested, result_code, result_payload, error_category,
       error_code, state_version, created_at, updated_at, completed_at
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id');

-- No lock: due lane heads counted by (kind, payload_version) for readiness.
-- name: WorkItemHeadKindVersions :many
SELECT i.kind, i.payload_version, COUNT(*) AS item_count
FROM pc_work_items i
JOIN pc_work_lanes l ON i.lane_key = l.lane_key AND i.lane_sequence = l.head_sequence
WHERE i.status IN ('queued', 'retry_wait')
  AND i.available_at <= CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
GROUP BY i.kind, i.payload_version
ORDER BY i.kind, i.payload_version;

-- Unique keys work_id and (lane_key, lane_sequence); caller holds the lane and key locks.
-- name: WorkItemInsert :exec
INSERT INTO pc_work_items (
    work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status,
    available_at, lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count,
    recovery_generation, max_attempts, cancel_requested, result_code, result_payload, error_category,
    error_code, state_version, created_at, updated_at, completed_at
) VALUES (
    sqlc.arg('work_id'), sqlc.arg('logical_key'), sqlc.arg('lane_key'), sqlc.arg('lane_sequence'),
    sqlc.arg('kind'), sqlc.arg('payload_version'), sqlc.arg('scope_id'), sqlc.arg('payload'), sqlc.arg('status'),
    sqlc.arg('available_at'), sqlc.narg('lease_owner'), sqlc.arg('lease_fence'), sqlc.narg('lease_expires_at'),
    sqlc.arg('attempt_count'), sqlc.arg('generation_attempt_count'), sqlc.arg('recovery_generation'),
    sqlc.arg('max_attempts'), sqlc.arg('cancel_requested'), sqlc.narg('result_code'), sqlc.narg('result_payload'),
    sqlc.narg('error_category'), sqlc.narg('error_code'), sqlc.arg('state_version'), sqlc.arg('created_at'),
    sqlc.arg('updated_at'), sqlc.narg('completed_at')
);

-- No lock; keyset page, newest first. Differs from postgres because sqlc.slice cannot sit beside named args on SQLite (sqlc #2452), so kinds arrive as a JSON array read with json_each.
-- name: WorkItemList :many
SELECT work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status,
       available_at, lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count,
       recovery_generation, max_attempts, cancel_requested, result_code, result_payload, error_category,
       error_code, state_version, created_at, updated_at, completed_at
FROM pc_work_items
WHERE kind IN (SELECT value FROM json_each(CAST(sqlc.arg('kinds_json') AS TEXT)))
  AND (scope_id = sqlc.narg('scope_id') OR sqlc.narg('scope_id') IS NULL)
  AND (status = sqlc.narg('status') OR sqlc.narg('status') IS NULL)
  AND (created_at < sqlc.narg('before_created_at') OR sqlc.narg('before_created_at') IS NULL
       OR (created_at = sqlc.narg('before_created_at') AND work_id < sqlc.arg('before_work_id')))
ORDER BY created_at DESC, work_id DESC
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Item lock plus the database clock from the same statement. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: WorkItemLock :one
SELECT sqlc.embed(pc_work_items), CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000 AS db_now
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id');

-- No lock: terminal (succeeded/cancelled, never failed) items completed before the cut-off, oldest first.
-- name: WorkItemPurgeCandidates :many
SELECT work_id
FROM pc_work_items
WHERE status IN ('succeeded', 'cancelled')
  AND completed_at < sqlc.arg('completed_before')
ORDER BY completed_at, work_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock: depth and oldest creation time per (kind, status) of every non-terminal or failed item.
-- name: WorkItemQueueStatistics :many
SELECT kind, status, COUNT(*) AS item_count, CAST(MIN(created_at) AS INTEGER) AS oldest_created_at
FROM pc_work_items
WHERE status NOT IN ('succeeded', 'cancelled')
GROUP BY kind, status
ORDER BY kind, status;

-- Guard: state_version equals the expected version (compare-and-set); caller holds lane, key and item locks.
-- name: WorkItemUpdateState :execrows
UPDATE pc_work_items
SET status = sqlc.arg('status'),
    available_at = sqlc.arg('available_at'),
    lease_owner = sqlc.narg('lease_owner'),
    lease_fence = sqlc.arg('lease_fence'),
    lease_expires_at = sqlc.narg('lease_expires_at'),
    attempt_count = sqlc.arg('attempt_count'),
    generation_attempt_count = sqlc.arg('generation_attempt_count'),
    recovery_generation = sqlc.arg('recovery_generation'),
    max_attempts = sqlc.arg('max_attempts'),
    cancel_requested = sqlc.arg('cancel_requested'),
    result_code = sqlc.narg('result_code'),
    result_payload = sqlc.narg('result_payload'),
    error_category = sqlc.narg('error_category'),
    error_code = sqlc.narg('error_code'),
    state_version = sqlc.arg('state_version'),
    updated_at = sqlc.arg('updated_at'),
    completed_at = sqlc.narg('completed_at')
WHERE work_id = sqlc.arg('work_id')
  AND state_version = sqlc.arg('expected_version');
