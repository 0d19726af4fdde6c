-- Engine-only (mysql): Requires the item locks (WorkItemLockMany); guard: each item's state_version equals its expected version (CAS) and its unfinished attempt is its current one (inner join: an item without one matches nothing); finishes items and attempts in one statement, per-item values looked up by work_id in a JSON object; rows matched count both tables; the items' primary key range is forced (a multi-table UPDATE that scanned a small table would wait on rows other batches hold) (docs/protocol.md#set-based-completion).
-- name: WorkItemAttemptSucceedMany :execrows
UPDATE pc_work_items FORCE INDEX (PRIMARY)
JOIN pc_work_attempts
  ON pc_work_attempts.work_id = pc_work_items.work_id
 AND pc_work_attempts.attempt_no = pc_work_items.attempt_count
 AND pc_work_attempts.finished_at IS NULL
SET pc_work_items.status = 'succeeded',
    pc_work_items.lease_owner = NULL,
    pc_work_items.lease_expires_at = NULL,
    pc_work_items.result_code = JSON_UNQUOTE(JSON_EXTRACT(sqlc.arg('results'), CONCAT('$."', pc_work_items.work_id, '".c'))),
    pc_work_items.result_payload = FROM_BASE64(JSON_UNQUOTE(JSON_EXTRACT(sqlc.arg('results'), CONCAT('$."', pc_work_items.work_id, '".p')))),
    pc_work_items.error_category = NULL,
    pc_work_items.error_code = NULL,
    pc_work_items.state_version = pc_work_items.state_version + 1,
    pc_work_items.updated_at = sqlc.arg('now'),
    pc_work_items.completed_at = CAST(sqlc.arg('now') AS DATETIME(6)),
    pc_work_attempts.finished_at = CAST(sqlc.arg('finished_at') AS DATETIME(6)),
    pc_work_attempts.outcome = 'succeeded',
    pc_work_attempts.error_category = NULL,
    pc_work_attempts.error_code = NULL
WHERE pc_work_items.work_id IN (sqlc.slice('work_ids'))
  AND pc_work_items.state_version = CAST(JSON_EXTRACT(sqlc.arg('results'), CONCAT('$."', pc_work_items.work_id, '".v')) AS SIGNED);

-- No lock; unlocked candidate query over lane heads (docs/protocol.md#claim); each candidate is re-checked under lane → key → item locks.
-- One branch per status reads pc_work_items_status_due_idx in (available_at, created_at) order and stops at the limit
-- (or, for a few deep lanes, starts from the lanes). Differs from postgres because MySQL cannot merge the ordered
-- ranges of an IN list, so queued and retry_wait are separate branches here too, and LIMIT is a bare ? (one per
-- branch and one outer; the adapter passes the same limit to each).
-- name: WorkItemClaimCandidates :many
SELECT c.work_id, c.lane_key, c.logical_key, c.lane_sequence, c.kind, c.payload_version, c.status
FROM (
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'queued'
       AND i.available_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
       AND i.kind IN (sqlc.slice('kinds'))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
    UNION ALL
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'retry_wait'
       AND i.available_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
       AND i.kind IN (sqlc.slice('kinds'))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
    UNION ALL
    (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status IN ('running', 'cancelling')
       AND i.lease_expires_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
) c
ORDER BY c.available_at, c.created_at, c.work_id
LIMIT ?;

-- WorkItemClaimCandidates read from the due index first: the queued branch reads at most the first LIMIT of the
-- oldest due queued items (pc_work_items_status_due_idx, forced) and keeps the lane heads among them; when it keeps
-- the limit, they are the oldest due heads, as WorkItemClaimCandidates would return, at the cost of the rows read
-- instead of one probe per busy lane; the adapter runs WorkItemClaimCandidates when it keeps fewer. Every retry_wait,
-- running or cancelling item is a head, so those branches read the index first too, without a bound, one status
-- each (so each reads in index order and sorts nothing).
-- Engine-only (mysql): No lock; unlocked candidate query, each candidate re-checked under locks (docs/protocol.md#claim-candidates-in-mysql-mode).
-- name: WorkItemClaimCandidatesByDue :many
SELECT c.work_id, c.lane_key, c.logical_key, c.lane_sequence, c.kind, c.payload_version, c.status
FROM (
    (SELECT STRAIGHT_JOIN d.work_id, d.lane_key, d.logical_key, d.lane_sequence, d.kind, d.payload_version, d.status,
            d.available_at, d.created_at
     FROM (SELECT i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
                  i.available_at, i.created_at
           FROM pc_work_items i FORCE INDEX (pc_work_items_status_due_idx)
           WHERE i.status = 'queued'
             AND i.available_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
             AND i.kind IN (sqlc.slice('kinds'))
           ORDER BY i.available_at, i.created_at
           LIMIT ?) d
     JOIN pc_work_lanes l ON l.lane_key = d.lane_key AND l.head_sequence = d.lane_sequence
     ORDER BY d.available_at, d.created_at
     LIMIT ?)
    UNION ALL
    (SELECT STRAIGHT_JOIN i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i FORCE INDEX (pc_work_items_status_due_idx)
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'retry_wait'
       AND i.available_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
       AND i.kind IN (sqlc.slice('kinds'))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
    UNION ALL
    (SELECT STRAIGHT_JOIN i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i FORCE INDEX (pc_work_items_status_due_idx)
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'running'
       AND i.lease_expires_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
    UNION ALL
    (SELECT STRAIGHT_JOIN i.work_id, i.lane_key, i.logical_key, i.lane_sequence, i.kind, i.payload_version, i.status,
            i.available_at, i.created_at
     FROM pc_work_items i FORCE INDEX (pc_work_items_status_due_idx)
     JOIN pc_work_lanes l ON l.lane_key = i.lane_key AND l.head_sequence = i.lane_sequence
     WHERE i.status = 'cancelling'
       AND i.lease_expires_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
     ORDER BY i.available_at, i.created_at
     LIMIT ?)
) c
ORDER BY c.available_at, c.created_at, c.work_id
LIMIT ?;

-- Engine-only (mysql): Requires the lane and item locks of WorkLaneItemLockManySkipLocked in this transaction; guard: still queued or retry_wait; claims every listed item (fence + 1, attempt + 1); the adapter requires a match for each (docs/protocol.md#set-based-claim).
-- name: WorkItemClaimListedMany :execrows
UPDATE pc_work_items
SET status = 'running',
    lease_owner = sqlc.arg('owner'),
    lease_fence = lease_fence + 1,
    lease_expires_at = sqlc.arg('lease_expires_at'),
    attempt_count = attempt_count + 1,
    generation_attempt_count = generation_attempt_count + 1,
    state_version = state_version + 1,
    updated_at = sqlc.arg('now')
WHERE work_id IN (sqlc.slice('work_ids'))
  AND status IN ('queued', 'retry_wait');

-- No lock; retention purge, guard: the item is still succeeded or cancelled.
-- name: WorkItemDeleteTerminal :execrows
DELETE FROM pc_work_items
WHERE work_id IN (sqlc.slice('work_ids'))
  AND status IN ('succeeded', 'cancelled');

-- No lock; heartbeat guard: running, no cancel requested, owner, fence and attempt count match (state_version unchanged).
-- name: WorkItemExtendLease :execrows
UPDATE pc_work_items
SET lease_expires_at = sqlc.arg('lease_expires_at')
WHERE work_id = sqlc.arg('work_id')
  AND status = 'running'
  AND cancel_requested = FALSE
  AND lease_owner = sqlc.arg('lease_owner')
  AND lease_fence = sqlc.arg('lease_fence')
  AND attempt_count = sqlc.arg('attempt_count');

-- Engine-only (mysql): MariaDB only (the adapter runs it when the server is MariaDB). Requires the lane and item locks; guard: state_version equals the expected version (CAS); WorkItemFinishJoined plus WorkLaneAdvanceHead in one statement: the lane named by lane_key is joined (missing: nothing matches) and its head set from a derived table (the form MySQL allows over a table being updated); the finishing item is excluded by lane_sequence > after_sequence, so the head is the same whether the server reads the item before or after writing it (docs/protocol.md#round-trips).
-- name: WorkItemFinishAdvanceJoined :execrows
UPDATE pc_work_items
JOIN pc_work_lanes
LEFT JOIN pc_work_attempts
  ON pc_work_attempts.work_id = pc_work_items.work_id AND pc_work_attempts.finished_at IS NULL
SET pc_work_items.status = sqlc.arg('status'),
    pc_work_items.available_at = sqlc.arg('available_at'),
    pc_work_items.lease_owner = sqlc.narg('lease_owner'),
    pc_work_items.lease_fence = sqlc.arg('lease_fence'),
    pc_work_items.lease_expires_at = sqlc.narg('lease_expires_at'),
    pc_work_items.attempt_count = sqlc.arg('attempt_count'),
    pc_work_items.generation_attempt_count = sqlc.arg('generation_attempt_count'),
    pc_work_items.recovery_generation = sqlc.arg('recovery_generation'),
    pc_work_items.max_attempts = sqlc.arg('max_attempts'),
    pc_work_items.cancel_requested = sqlc.arg('cancel_requested'),
    pc_work_items.result_code = sqlc.narg('result_code'),
    pc_work_items.result_payload = sqlc.narg('result_payload'),
    pc_work_items.error_category = sqlc.narg('error_category'),
    pc_work_items.error_code = sqlc.narg('error_code'),
    pc_work_items.state_version = sqlc.arg('state_version'),
    pc_work_items.updated_at = sqlc.arg('updated_at'),
    pc_work_items.completed_at = sqlc.narg('completed_at'),
    pc_work_attempts.finished_at = CAST(sqlc.narg('finished_at') AS DATETIME(6)),
    pc_work_attempts.outcome = CAST(sqlc.narg('outcome') AS CHAR),
    pc_work_attempts.error_category = CAST(sqlc.narg('attempt_error_category') AS CHAR),
    pc_work_attempts.error_code = CAST(sqlc.narg('attempt_error_code') AS CHAR),
    pc_work_lanes.head_sequence = (
        SELECT nxt.lane_sequence
        FROM (
            SELECT i.lane_sequence
            FROM pc_work_items i
            WHERE i.lane_key = sqlc.arg('lane_key')
              AND i.lane_sequence > sqlc.arg('after_sequence')
              AND i.status NOT IN ('succeeded', 'cancelled')
            ORDER BY i.lane_sequence
            LIMIT 1) AS nxt)
WHERE pc_work_items.work_id = sqlc.arg('work_id')
  AND pc_work_lanes.lane_key = sqlc.arg('lane_key')
  AND pc_work_items.state_version = sqlc.arg('expected_version')
  AND (pc_work_attempts.attempt_no = CAST(sqlc.arg('attempt_no') AS SIGNED) OR pc_work_attempts.work_id IS NULL);

-- Engine-only (mysql): Requires the item lock; guard: state_version equals the expected version (CAS); WorkItemUpdateState and WorkAttemptFinish in one statement: the item's unfinished attempt is LEFT JOINed (none: only the item is written) and must be attempt_no (another one: nothing matches, the caller fails); rows matched count both tables (docs/protocol.md#round-trips).
-- name: WorkItemFinishJoined :execrows
UPDATE pc_work_items
LEFT JOIN pc_work_attempts
  ON pc_work_attempts.work_id = pc_work_items.work_id AND pc_work_attempts.finished_at IS NULL
SET pc_work_items.status = sqlc.arg('status'),
    pc_work_items.available_at = sqlc.arg('available_at'),
    pc_work_items.lease_owner = sqlc.narg('lease_owner'),
    pc_work_items.lease_fence = sqlc.arg('lease_fence'),
    pc_work_items.lease_expires_at = sqlc.narg('lease_expires_at'),
    pc_work_items.attempt_count = sqlc.arg('attempt_count'),
    pc_work_items.generation_attempt_count = sqlc.arg('generation_attempt_count'),
    pc_work_items.recovery_generation = sqlc.arg('recovery_generation'),
    pc_work_items.max_attempts = sqlc.arg('max_attempts'),
    pc_work_items.cancel_requested = sqlc.arg('cancel_requested'),
    pc_work_items.result_code = sqlc.narg('result_code'),
    pc_work_items.result_payload = sqlc.narg('result_payload'),
    pc_work_items.error_category = sqlc.narg('error_category'),
    pc_work_items.error_code = sqlc.narg('error_code'),
    pc_work_items.state_version = sqlc.arg('state_version'),
    pc_work_items.updated_at = sqlc.arg('updated_at'),
    pc_work_items.completed_at = sqlc.narg('completed_at'),
    pc_work_attempts.finished_at = CAST(sqlc.narg('finished_at') AS DATETIME(6)),
    pc_work_attempts.outcome = CAST(sqlc.narg('outcome') AS CHAR),
    pc_work_attempts.error_category = CAST(sqlc.narg('attempt_error_category') AS CHAR),
    pc_work_attempts.error_code = CAST(sqlc.narg('attempt_error_code') AS CHAR)
WHERE pc_work_items.work_id = sqlc.arg('work_id')
  AND pc_work_items.state_version = sqlc.arg('expected_version')
  AND (pc_work_attempts.attempt_no = CAST(sqlc.arg('attempt_no') AS SIGNED) OR pc_work_attempts.work_id IS NULL);

-- No lock; plain read of one item.
-- name: WorkItemGet :one
SELECT work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
       lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
       max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
       created_at, updated_at, completed_at
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id');

-- No lock; due lane heads (queued/retry_wait, available_at <= now) counted by (kind, payload_version).
-- name: WorkItemHeadKindVersions :many
SELECT i.kind, i.payload_version, COUNT(*) AS item_count
FROM pc_work_lanes l
JOIN pc_work_items i ON i.lane_key = l.lane_key AND i.lane_sequence = l.head_sequence
WHERE l.head_sequence IS NOT NULL
  AND i.status IN ('queued', 'retry_wait')
  AND i.available_at <= CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
GROUP BY i.kind, i.payload_version
ORDER BY i.kind, i.payload_version;

-- Requires the lane lock; guard: primary key and unique (lane_key, lane_sequence).
-- name: WorkItemInsert :exec
INSERT INTO pc_work_items (work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload,
                           status, available_at, lease_owner, lease_fence, lease_expires_at, attempt_count,
                           generation_attempt_count, recovery_generation, max_attempts, cancel_requested,
                           result_code, result_payload, error_category, error_code, state_version, created_at,
                           updated_at, completed_at)
VALUES (sqlc.arg('work_id'), sqlc.arg('logical_key'), sqlc.arg('lane_key'), sqlc.arg('lane_sequence'),
        sqlc.arg('kind'), sqlc.arg('payload_version'), sqlc.arg('scope_id'), sqlc.arg('payload'), sqlc.arg('status'),
        sqlc.arg('available_at'), sqlc.narg('lease_owner'), sqlc.arg('lease_fence'), sqlc.narg('lease_expires_at'),
        sqlc.arg('attempt_count'), sqlc.arg('generation_attempt_count'), sqlc.arg('recovery_generation'),
        sqlc.arg('max_attempts'), sqlc.arg('cancel_requested'), sqlc.narg('result_code'),
        sqlc.narg('result_payload'), sqlc.narg('error_category'), sqlc.narg('error_code'),
        sqlc.arg('state_version'), sqlc.arg('created_at'), sqlc.arg('updated_at'), sqlc.narg('completed_at'));

-- Engine-only (mysql): Requires the batch's lane locks and its keys inserted by this transaction; guard: primary key and unique (lane_key, lane_sequence); inserts up to 1,000 items as an enqueue creates them (queued, due now, no lease, state_version 1) from a JSON array of objects (bytes as base64; the adapter sends 32 per statement). Each row's object is taken out of the array once, in a derived table its LIMIT keeps materialized: a JSON path into the whole argument parses it from its start, so one path per column and row cost nine passes over the array per row (docs/protocol.md#set-based-steps-in-mysql-mode).
-- name: WorkItemInsertMany :execrows
INSERT INTO pc_work_items (
    work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
    lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
    max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
    created_at, updated_at, completed_at
)
SELECT JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.w')),
       JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.l')),
       JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.n')),
       CAST(JSON_EXTRACT(r.o, '$.s') AS SIGNED),
       JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.k')),
       CAST(JSON_EXTRACT(r.o, '$.v') AS SIGNED),
       FROM_BASE64(JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.c'))),
       FROM_BASE64(JSON_UNQUOTE(JSON_EXTRACT(r.o, '$.p'))),
       'queued', CAST(sqlc.arg('now') AS DATETIME(6)), NULL, 0, NULL, 0, 0, 0,
       CAST(JSON_EXTRACT(r.o, '$.m') AS SIGNED),
       FALSE, NULL, NULL, NULL, NULL, 1, CAST(sqlc.arg('now') AS DATETIME(6)), CAST(sqlc.arg('now') AS DATETIME(6)), NULL
FROM (SELECT JSON_EXTRACT(sqlc.arg('items'), CONCAT('$[', n.k, ']')) AS o
      FROM (SELECT a.d + 10 * b.d + 100 * c.d AS k
            FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a
            CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b
            CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c
            WHERE a.d + 10 * b.d + 100 * c.d < CAST(sqlc.arg('count') AS SIGNED)) AS n
      LIMIT 1000) AS r;

-- No lock; newest first with optional scope/status filters and a (created_at, work_id) keyset.
-- name: WorkItemList :many
SELECT work_id, logical_key, lane_key, lane_sequence, kind, payload_version, scope_id, payload, status, available_at,
       lease_owner, lease_fence, lease_expires_at, attempt_count, generation_attempt_count, recovery_generation,
       max_attempts, cancel_requested, result_code, result_payload, error_category, error_code, state_version,
       created_at, updated_at, completed_at
FROM pc_work_items
WHERE kind IN (sqlc.slice('kinds'))
  AND (sqlc.arg('scope_id') = '' OR scope_id = sqlc.arg('scope_id'))
  AND (sqlc.arg('status') = '' OR status = sqlc.arg('status'))
  AND (sqlc.narg('before_created_at') IS NULL
       OR created_at < sqlc.narg('before_created_at')
       OR (created_at = sqlc.narg('before_created_at') AND work_id < sqlc.arg('before_work_id')))
ORDER BY created_at DESC, work_id DESC
LIMIT ?;

-- Engine-only (mysql): No lock (the caller holds the item locks); the lane and logical key of the listed items (docs/protocol.md#set-based-completion).
-- name: WorkItemListKeysMany :many
SELECT work_id, lane_key, logical_key
FROM pc_work_items
WHERE work_id IN (sqlc.slice('work_ids'));

-- Item row lock (FOR UPDATE), taken after WorkItemTouch; returns the database clock from the same statement.
-- name: WorkItemLock :one
SELECT sqlc.embed(pc_work_items), CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_items
WHERE work_id = sqlc.arg('work_id')
FOR UPDATE;

-- Engine-only (postgres, mysql): Lock: items (FOR UPDATE) in ascending work_id order (the primary key range of the IN list is read, and so locked, in that order; FORCE INDEX (PRIMARY): on a small table the optimizer would scan every row, and a locking scan waits on rows other batches hold (a deadlock between two batches)), with the database clock; MariaDB and MySQL 8 (docs/protocol.md#set-based-completion).
-- name: WorkItemLockMany :many
SELECT sqlc.embed(pc_work_items), CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)) AS db_now
FROM pc_work_items FORCE INDEX (PRIMARY)
WHERE work_id IN (sqlc.slice('work_ids'))
ORDER BY work_id
FOR UPDATE;

-- No lock; succeeded/cancelled items completed before the cutoff, oldest first.
-- name: WorkItemPurgeCandidates :many
SELECT work_id
FROM pc_work_items
WHERE completed_at < sqlc.arg('completed_before')
  AND status IN ('succeeded', 'cancelled')
ORDER BY completed_at, work_id
LIMIT ?;

-- No lock; depth and oldest creation time of non-terminal (and failed) items by (kind, status).
-- name: WorkItemQueueStatistics :many
SELECT kind, status, COUNT(*) AS item_count, CAST(MIN(created_at) AS DATETIME(6)) AS oldest_created_at
FROM pc_work_items
WHERE status NOT IN ('succeeded', 'cancelled')
GROUP BY kind, status
ORDER BY kind, status;

-- Engine-only (mysql): Item row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: WorkItemTouch :execrows
UPDATE pc_work_items SET work_id = work_id WHERE work_id = sqlc.arg('work_id');

-- Requires the item lock; guard: state_version equals the expected version (CAS).
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
