-- No lock; unlocked candidate query over lane heads: due heads of the given kinds plus expired heads of any kind.
-- One branch per status reads pc_work_items_status_due_idx in (available_at, created_at) order and stops at the
-- limit (or, for a few deep lanes, starts from the lanes); the database clock is read once (InitPlan) so it bounds
-- the index range.
-- name: WorkItemClaimCandidates :many
SELECT c.work_id, c.lane_key, c.logical_key, c.lane_sequence, c.kind, c.payload_version, c.status
FROM (
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'queued'
       AND i.available_at <= (SELECT clock_timestamp())
       AND i.kind = ANY (sqlc.arg('kinds')::text[])
     ORDER BY i.available_at, i.created_at
     LIMIT sqlc.arg('limit'))
    UNION ALL
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'retry_wait'
       AND i.available_at <= (SELECT clock_timestamp())
       AND i.kind = ANY (sqlc.arg('kinds')::text[])
     ORDER BY i.available_at, i.created_at
     LIMIT sqlc.arg('limit'))
    UNION ALL
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status IN ('running', 'cancelling')
       AND i.lease_expires_at <= (SELECT clock_timestamp())
     ORDER BY i.available_at, i.created_at
     LIMIT sqlc.arg('limit'))
) c
ORDER BY c.available_at, c.created_at
LIMIT sqlc.arg('limit');

-- Guard: deletes only items that are still succeeded or cancelled (never failed ones).
-- name: WorkItemDeleteTerminal :execrows
DELETE FROM pc_work_items
WHERE work_id = ANY (sqlc.arg('work_ids')::uuid[])
  AND status IN ('succeeded', 'cancelled');

-- Guard: running, no cancel requested, and owner, fence and attempt count equal to the claim's; no version bump.
-- name: WorkItemExtendLease :execrows
UPDATE pc_work_items
SET lease_expires_at = sqlc.narg('lease_expires_at')
WHERE work_id = sqlc.arg('work_id')
  AND status = 'running'
  AND NOT cancel_requested
  AND lease_owner = sqlc.narg('lease_owner')
  AND lease_fence = sqlc.arg('lease_fence')
  AND attempt_count = sqlc.arg('attempt_count');

-- No lock; plain read of one item.
-- name: WorkItemGet :one
SELECT *
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id');

-- No lock; counts due lane heads by (kind, payload_version) for readiness.
-- name: WorkItemHeadKindVersions :many
SELECT i.kind, i.payload_version, count(*) AS item_count
FROM pc_work_lanes l
JOIN pc_work_items i ON i.lane_key = l.lane_key AND i.lane_sequence = l.head_sequence
WHERE l.head_sequence IS NOT NULL
  AND i.status IN ('queued', 'retry_wait')
  AND i.available_at <= clock_timestamp()
GROUP BY i.kind, i.payload_version
ORDER BY i.kind, i.payload_version;

-- Guard: caller holds the lane lock and the key is new; unique work_id and (lane_key, lane_sequence).
-- name: WorkItemInsert :exec
INSERT INTO pc_work_items (
    work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
    lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
    max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
    created_at, updated_at, completed_at
) VALUES (
    sqlc.arg('work_id'), sqlc.arg('logical_key'), sqlc.arg('lane_key'), sqlc.arg('lane_sequence'), sqlc.arg('kind'),
    sqlc.arg('payload_version'), sqlc.arg('scope_id'), sqlc.arg('payload'), sqlc.arg('status'),
    sqlc.arg('available_at'), sqlc.narg('lease_owner'), sqlc.arg('lease_fence'), sqlc.narg('lease_expires_at'),
    sqlc.arg('attempt_count'), sqlc.arg('generation_attempt_count'), sqlc.arg('recovery_generation'),
    sqlc.arg('max_attempts'), sqlc.arg('cancel_requested'), sqlc.narg('result_code'), sqlc.narg('result_payload'),
    sqlc.narg('error_category'), sqlc.narg('error_code'), sqlc.arg('state_version'), sqlc.arg('created_at'),
    sqlc.arg('updated_at'), sqlc.narg('completed_at')
);

-- No lock; newest first (created_at DESC, work_id DESC) with optional scope/status filters and a keyset position.
-- name: WorkItemList :many
SELECT *
FROM pc_work_items
WHERE kind = ANY (sqlc.arg('kinds')::text[])
  AND (sqlc.narg('scope_id')::text IS NULL OR scope_id = sqlc.narg('scope_id')::text)
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
  AND (sqlc.narg('before_created_at')::timestamptz IS NULL
    OR (created_at, work_id) < (sqlc.narg('before_created_at')::timestamptz, sqlc.narg('before_work_id')::text::uuid))
ORDER BY created_at DESC, work_id DESC
LIMIT sqlc.arg('limit');

-- Lock: the item row (FOR UPDATE), after lane and key; returns the database clock from the same statement.
-- name: WorkItemLock :one
SELECT sqlc.embed(pc_work_items), clock_timestamp()::timestamptz AS db_now
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id')
FOR UPDATE;

-- Lock: the item row (FOR UPDATE SKIP LOCKED: no row when another transaction holds it), after the lane; batched claim only (docs/protocol.md#batched-claim).
-- name: WorkItemLockSkipLocked :one
SELECT sqlc.embed(pc_work_items), clock_timestamp()::timestamptz AS db_now
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id')
FOR UPDATE SKIP LOCKED;

-- No lock; succeeded/cancelled items completed before the cutoff, oldest first (never failed ones).
-- name: WorkItemPurgeCandidates :many
SELECT work_id
FROM pc_work_items
WHERE status IN ('succeeded', 'cancelled')
  AND completed_at < sqlc.narg('completed_before')
ORDER BY completed_at, work_id
LIMIT sqlc.arg('limit');

-- No lock; depth and oldest creation time of live and failed items by (kind, status).
-- name: WorkItemQueueStatistics :many
SELECT kind, status, count(*) AS item_count, min(created_at)::timestamptz AS oldest_created_at
FROM pc_work_items
WHERE status NOT IN ('succeeded', 'cancelled')
GROUP BY kind, status
ORDER BY kind, status;

-- Guard: state_version equals the expected version (compare-and-set); writes every mutable column.
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
