-- Each listed row is read by primary key inside a LATERAL subquery that OFFSET 0 keeps from being flattened: joined
-- directly, the cached generic plan of a table that grew from empty read every succeeded item through the status
-- index and hashed them, on every batch (docs/protocol.md#set-based-completion).
-- Engine-only (postgres): No lock (reads rows the transaction holds); the guard of WorkItemSucceedMany sent with the COMMIT (WorkItemSucceedManyAtCommit, in the COMMIT's pipelined batch): unless every listed item is now succeeded at its expected version + 1 with its attempt finished as succeeded, it divides by zero, the error aborts the transaction, and the COMMIT queued after it rolls back instead.
-- name: WorkItemAssertSucceededMany :exec
WITH e AS (
    SELECT unnest(sqlc.arg('work_ids')::uuid[]) AS work_id,
           unnest(sqlc.arg('expected_versions')::bigint[]) AS expected_version
)
SELECT 1 / (count(*) = cardinality(sqlc.arg('work_ids')::uuid[]))::int AS all_succeeded
FROM e
CROSS JOIN LATERAL (
    SELECT w.status, w.state_version, w.attempt_count
    FROM pc_work_items w
    WHERE w.work_id = e.work_id
    OFFSET 0) w
CROSS JOIN LATERAL (
    SELECT a.outcome
    FROM pc_work_attempts a
    WHERE a.work_id = e.work_id
      AND a.attempt_no = w.attempt_count
    OFFSET 0) a
WHERE w.status = 'succeeded'
  AND w.state_version = e.expected_version + 1
  AND a.outcome = 'succeeded';

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

-- Engine-only (postgres): Lock: due lane heads, then their lanes (FOR UPDATE SKIP LOCKED: it never waits, so no lock order is needed), oldest first, at most slots; claims them in the same statement (fence + 1, an attempt row) and returns them with the clock they were checked against, then up to candidates expired heads (unlocked; recovered one by one) (docs/protocol.md#set-based-claim).
-- name: WorkItemClaimMany :many
WITH clock AS MATERIALIZED (
    SELECT clock_timestamp()::timestamptz AS db_now
), supported AS MATERIALIZED (
    SELECT unnest(sqlc.arg('kinds')::text[]) AS kind, unnest(sqlc.arg('min_versions')::integer[]) AS min_version,
           unnest(sqlc.arg('max_versions')::integer[]) AS max_version
), candidates AS MATERIALIZED (
    SELECT u.work_id, u.available_at, u.created_at
    FROM ((SELECT i.work_id, i.available_at, i.created_at
           FROM pc_work_items i
           JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
           WHERE i.status = 'queued'
             AND i.available_at <= (SELECT db_now FROM clock)
             AND i.kind = ANY (sqlc.arg('kinds')::text[])
           ORDER BY i.available_at, i.created_at
           LIMIT sqlc.arg('candidates'))
          UNION ALL
          (SELECT i.work_id, i.available_at, i.created_at
           FROM pc_work_items i
           JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
           WHERE i.status = 'retry_wait'
             AND i.available_at <= (SELECT db_now FROM clock)
             AND i.kind = ANY (sqlc.arg('kinds')::text[])
           ORDER BY i.available_at, i.created_at
           LIMIT sqlc.arg('candidates'))) u
    ORDER BY u.available_at, u.created_at
), picked AS (
    -- Oldest candidate first, each item then its lane locked by primary key in a lateral lookup (the plan cannot
    -- wander off into a scan), re-checked on the locked row versions, until slots heads are held.
    SELECT li.work_id
    FROM candidates c
    CROSS JOIN LATERAL (
        SELECT i.work_id, i.lane_key, i.lane_sequence
        FROM pc_work_items i
        WHERE i.work_id = c.work_id
          AND i.status IN ('queued', 'retry_wait')
          AND i.available_at <= (SELECT db_now FROM clock)
          AND EXISTS (SELECT 1
                      FROM supported s
                      WHERE s.kind = i.kind
                        AND i.payload_version BETWEEN s.min_version AND s.max_version)
        FOR UPDATE SKIP LOCKED) li
    CROSS JOIN LATERAL (
        SELECT l.lane_key
        FROM pc_work_lanes l
        WHERE l.lane_key = li.lane_key
          AND l.head_sequence = li.lane_sequence
        FOR UPDATE SKIP LOCKED) ll
    LIMIT sqlc.arg('slots')
), numbered AS (
    SELECT p.work_id, row_number() OVER (ORDER BY p.work_id)::integer AS n
    FROM picked p
), claimed AS (
    UPDATE pc_work_items w
    SET status = 'running',
        lease_owner = sqlc.arg('owner')::text,
        lease_fence = w.lease_fence + 1,
        lease_expires_at = (SELECT db_now FROM clock) + sqlc.arg('lease_micros')::bigint * interval '1 microsecond',
        attempt_count = w.attempt_count + 1,
        generation_attempt_count = w.generation_attempt_count + 1,
        state_version = w.state_version + 1,
        updated_at = (SELECT db_now FROM clock)
    FROM numbered nb
    WHERE w.work_id = nb.work_id
    RETURNING w.work_id, w.logical_key, w.lane_key, w.lane_sequence, w.kind, w.payload_version, w.scope_id, w.payload, w.status, w.available_at, w.lease_owner, w.lease_fence, w.lease_expires_at, w.attempt_count, w.generation_attempt_count, w.recovery_generation, w.max_attempts, w.cancel_requested, w.result_code, w.result_payload, w.error_category, w.error_code, w.state_version, w.created_at, w.updated_at, w.completed_at, nb.n
), attempts AS (
    INSERT INTO pc_work_attempts (work_id, attempt_no, recovery_generation, owner_id, fence, started_at, trace_id, span_id)
    SELECT c.work_id, c.attempt_count, c.recovery_generation, sqlc.arg('owner')::text, c.lease_fence,
           (SELECT db_now FROM clock), nullif((sqlc.arg('trace_ids')::text[])[c.n], ''),
           nullif((sqlc.arg('span_ids')::text[])[c.n], '')
    FROM claimed c
    RETURNING pc_work_attempts.work_id
)
SELECT true AS claimed, c.n AS slot, c.work_id, c.logical_key, c.lane_key, c.lane_sequence, c.kind, c.payload_version, c.scope_id, c.payload, c.status, c.available_at, c.lease_owner, c.lease_fence, c.lease_expires_at, c.attempt_count, c.generation_attempt_count, c.recovery_generation, c.max_attempts, c.cancel_requested, c.result_code, c.result_payload, c.error_category, c.error_code, c.state_version, c.created_at, c.updated_at, c.completed_at,
       (SELECT db_now FROM clock) AS db_now, prev.trace_id AS previous_trace_id, prev.span_id AS previous_span_id,
       (SELECT count(*) FROM attempts)::bigint AS attempts_inserted
FROM claimed c
LEFT JOIN pc_work_attempts prev ON prev.work_id = c.work_id AND prev.attempt_no = c.attempt_count - 1
UNION ALL
(SELECT false, 0, e.work_id, e.logical_key, e.lane_key, e.lane_sequence, e.kind, e.payload_version, e.scope_id, e.payload, e.status, e.available_at, e.lease_owner, e.lease_fence, e.lease_expires_at, e.attempt_count, e.generation_attempt_count, e.recovery_generation, e.max_attempts, e.cancel_requested, e.result_code, e.result_payload, e.error_category, e.error_code, e.state_version, e.created_at, e.updated_at, e.completed_at,
        (SELECT db_now FROM clock), NULL, NULL, 0
 FROM pc_work_items e
 JOIN pc_work_lanes el ON el.lane_key = e.lane_key AND el.head_sequence = e.lane_sequence
 WHERE e.status IN ('running', 'cancelling')
   AND e.lease_expires_at <= (SELECT db_now FROM clock)
 ORDER BY e.available_at, e.created_at
 LIMIT sqlc.arg('candidates'));

-- Guard: deletes only items that are still succeeded or cancelled (never failed ones).
-- name: WorkItemDeleteTerminal :execrows
DELETE FROM pc_work_items
WHERE work_id = ANY (sqlc.arg('work_ids')::uuid[])
  AND status IN ('succeeded', 'cancelled');

-- Engine-only (postgres): Requires the batch's lane locks (held by the caller): writes each lane's allocator and head, then inserts the items as an enqueue creates them (queued, due now, no lease, state_version 1), in one statement (docs/protocol.md#enqueue-many).
-- name: WorkItemEnqueueMany :one
WITH l AS (
    UPDATE pc_work_lanes wl
    SET next_sequence = u.next_sequence,
        head_sequence = u.head_sequence
    FROM (SELECT unnest(sqlc.arg('lane_keys')::text[]) AS lane_key,
                 unnest(sqlc.arg('next_sequences')::bigint[]) AS next_sequence,
                 unnest(sqlc.arg('head_sequences')::bigint[]) AS head_sequence) u
    WHERE wl.lane_key = u.lane_key
    RETURNING wl.lane_key
), i AS (
    INSERT INTO pc_work_items (
        work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
        lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
        max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
        created_at, updated_at, completed_at
    )
    SELECT n.work_id, n.logical_key, n.lane_key, n.lane_sequence, n.kind, n.payload_version, n.scope_id, n.payload,
           'queued', sqlc.arg('now')::timestamptz, NULL, 0, NULL, 0, 0, 0, n.max_attempts, false, NULL, NULL, NULL,
           NULL, 1, sqlc.arg('now')::timestamptz, sqlc.arg('now')::timestamptz, NULL
    FROM (SELECT unnest(sqlc.arg('work_ids')::uuid[]) AS work_id,
                 unnest(sqlc.arg('logical_keys')::text[]) AS logical_key,
                 unnest(sqlc.arg('item_lane_keys')::text[]) AS lane_key,
                 unnest(sqlc.arg('lane_sequences')::bigint[]) AS lane_sequence,
                 unnest(sqlc.arg('kinds')::text[]) AS kind,
                 unnest(sqlc.arg('payload_versions')::integer[]) AS payload_version,
                 unnest(sqlc.arg('scope_ids')::text[]) AS scope_id,
                 unnest(sqlc.arg('payloads')::bytea[]) AS payload,
                 unnest(sqlc.arg('max_attempts')::integer[]) AS max_attempts) n
    RETURNING pc_work_items.work_id
)
SELECT (SELECT count(*) FROM l)::bigint AS lanes_updated,
       (SELECT count(*) FROM i)::bigint AS items_inserted;

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

-- Engine-only (postgres, mysql): Lock: the batch's items (FOR UPDATE), after their lanes and keys (docs/protocol.md#set-based-completion).
-- name: WorkItemLockMany :many
SELECT sqlc.embed(pc_work_items)
FROM pc_work_items
WHERE work_id = ANY (sqlc.arg('work_ids')::uuid[])
ORDER BY lane_key
FOR UPDATE;

-- Engine-only (postgres): Lock: the item row (FOR UPDATE SKIP LOCKED: no row when another transaction holds it), after the lane, pipelined with it (WorkLaneItemLockSkipLocked; MariaDB and SQLite read both in one statement); batched claim only (docs/protocol.md#batched-claim).
-- name: WorkItemLockSkipLocked :one
SELECT sqlc.embed(pc_work_items), clock_timestamp()::timestamptz AS db_now
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id')
FOR UPDATE SKIP LOCKED;

-- Engine-only (postgres): no lock; for the rest of the transaction (set_config local) turns bitmap and sequential scans off, so the set-based statements walk their indexes (the claim's branches in (available_at, created_at) order, stopping at their limit; the batch's rows by primary key) however stale the statistics of a fast-growing table, and uses the cached generic plan (planning the claim statement anew cost more than running it) (docs/protocol.md#set-based-claim).
-- name: WorkItemPinPlan :exec
SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true),
       set_config('plan_cache_mode', 'force_generic_plan', true);

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

-- Engine-only (postgres): Guard: caller holds lane, key and item locks; each item's state_version equals its expected version (compare-and-set); finishes a batch as succeeded in one statement: items, running attempts, keys, lane heads (docs/protocol.md#set-based-completion).
-- name: WorkItemSucceedMany :one
WITH input AS (
    SELECT unnest(sqlc.arg('work_ids')::uuid[]) AS work_id,
           unnest(sqlc.arg('expected_versions')::bigint[]) AS expected_version,
           unnest(sqlc.arg('result_codes')::text[]) AS result_code,
           unnest(sqlc.arg('result_payloads')::bytea[]) AS result_payload
), done AS (
    UPDATE pc_work_items w
    SET status = 'succeeded',
        lease_owner = NULL,
        lease_expires_at = NULL,
        result_code = input.result_code,
        result_payload = input.result_payload,
        error_category = NULL,
        error_code = NULL,
        state_version = w.state_version + 1,
        updated_at = sqlc.arg('now')::timestamptz,
        completed_at = sqlc.arg('now')::timestamptz
    FROM input
    WHERE w.work_id = input.work_id
      AND w.state_version = input.expected_version
    RETURNING w.work_id, w.logical_key, w.lane_key, w.lane_sequence, w.attempt_count
), attempts AS (
    UPDATE pc_work_attempts a
    SET finished_at = sqlc.arg('now')::timestamptz,
        outcome = 'succeeded',
        error_category = NULL,
        error_code = NULL
    FROM done d
    WHERE a.work_id = d.work_id
      AND a.attempt_no = d.attempt_count
      AND a.finished_at IS NULL
    RETURNING a.work_id
), keys AS (
    DELETE FROM pc_work_keys k
    USING done d
    WHERE k.logical_key = d.logical_key
    RETURNING k.logical_key
), heads AS (
    UPDATE pc_work_lanes l
    SET head_sequence = (
        SELECT i.lane_sequence
        FROM pc_work_items i
        WHERE i.lane_key = d.lane_key
          AND i.lane_sequence > d.lane_sequence
          AND i.status NOT IN ('succeeded', 'cancelled')
        ORDER BY i.lane_sequence
        LIMIT 1)
    FROM done d
    WHERE l.lane_key = d.lane_key
      AND l.head_sequence = d.lane_sequence
    RETURNING l.lane_key
)
SELECT (SELECT count(*) FROM done)::bigint AS items_updated,
       (SELECT count(*) FROM attempts)::bigint AS attempts_finished,
       (SELECT count(*) FROM keys)::bigint AS keys_deleted,
       (SELECT count(*) FROM heads)::bigint AS heads_advanced;

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
