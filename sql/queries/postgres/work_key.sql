-- Guard: caller holds the lane lock; the key is deleted when its item succeeds or is cancelled.
-- name: WorkKeyDelete :execrows
DELETE FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key');

-- Guard: unique logical_key and work_id; never fails on an existing row (inserted = rows == 1).
-- name: WorkKeyInsertIfAbsent :execrows
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
VALUES (sqlc.arg('logical_key'), sqlc.arg('work_id'), sqlc.arg('lane_key'), sqlc.arg('created_at'))
ON CONFLICT DO NOTHING;

-- Engine-only (postgres, mysql): Guard: primary key and unique work_id, under the batch's lane locks: inserts the keys that do not exist yet (ON CONFLICT DO NOTHING takes no lock on an existing row) and returns the work ids it inserted (docs/protocol.md#enqueue-many).
-- name: WorkKeyInsertMany :many
INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
SELECT unnest(sqlc.arg('logical_keys')::text[]), unnest(sqlc.arg('work_ids')::uuid[]),
       unnest(sqlc.arg('lane_keys')::text[]), sqlc.arg('created_at')::timestamptz
ON CONFLICT DO NOTHING
RETURNING work_id;

-- Engine-only (postgres): Guard: caller holds the lane lock; inserts the key if absent and only then (data-modifying CTEs, one statement) writes the lane's allocator and head and inserts the item.
-- name: WorkKeyItemInsert :one
WITH k AS (
    INSERT INTO pc_work_keys (logical_key, work_id, lane_key, created_at)
    VALUES (sqlc.arg('key_logical_key'), sqlc.arg('key_work_id'), sqlc.arg('key_lane_key'), sqlc.arg('key_created_at'))
    ON CONFLICT DO NOTHING
    RETURNING pc_work_keys.logical_key
), l AS (
    UPDATE pc_work_lanes wl
    SET next_sequence = sqlc.arg('lane_next_sequence'),
        head_sequence = sqlc.narg('lane_head_sequence')
    WHERE wl.lane_key = sqlc.arg('lane_lane_key')
      AND EXISTS (SELECT 1 FROM k)
    RETURNING wl.lane_key
), i AS (
    INSERT INTO pc_work_items (
        work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
        lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
        max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
        created_at, updated_at, completed_at
    )
    SELECT sqlc.arg('work_id')::uuid, sqlc.arg('logical_key')::text, sqlc.arg('lane_key')::text,
           sqlc.arg('lane_sequence')::bigint, sqlc.arg('kind')::text, sqlc.arg('payload_version')::integer,
           sqlc.arg('scope_id')::text, sqlc.arg('payload')::bytea, sqlc.arg('status')::text,
           sqlc.arg('available_at')::timestamptz, sqlc.narg('lease_owner')::text, sqlc.arg('lease_fence')::bigint,
           sqlc.narg('lease_expires_at')::timestamptz, sqlc.arg('attempt_count')::integer,
           sqlc.arg('generation_attempt_count')::integer, sqlc.arg('recovery_generation')::integer,
           sqlc.arg('max_attempts')::integer, sqlc.arg('cancel_requested')::boolean, sqlc.narg('result_code')::text,
           sqlc.narg('result_payload')::bytea, sqlc.narg('error_category')::text, sqlc.narg('error_code')::text,
           sqlc.arg('state_version')::bigint, sqlc.arg('created_at')::timestamptz,
           sqlc.arg('updated_at')::timestamptz, sqlc.narg('completed_at')::timestamptz
    WHERE EXISTS (SELECT 1 FROM k)
    RETURNING pc_work_items.work_id
)
SELECT (SELECT count(*) FROM k)::bigint AS keys_inserted,
       (SELECT count(*) FROM l)::bigint AS lanes_updated,
       (SELECT count(*) FROM i)::bigint AS items_inserted;

-- Lock: the logical key row (FOR UPDATE); taken after the lane lock.
-- name: WorkKeyLock :one
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = sqlc.arg('logical_key')
FOR UPDATE;

-- Engine-only (postgres, mysql): Lock: the batch's logical keys (FOR UPDATE), after their lanes and before their items (docs/protocol.md#set-based-completion).
-- name: WorkKeyLockMany :many
SELECT logical_key, work_id, lane_key, created_at
FROM pc_work_keys
WHERE logical_key = ANY (sqlc.arg('logical_keys')::text[])
ORDER BY logical_key
FOR UPDATE;
