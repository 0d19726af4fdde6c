-- No lock; autocommitted read.
-- name: SchedulerScanGet :one
SELECT discoverer, next_run_at, continuation, state_version, updated_at
FROM pc_scheduler_scans
WHERE discoverer = sqlc.arg('discoverer');

-- Unique key discoverer; an existing row is left untouched (rows = 0).
-- name: SchedulerScanInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_scheduler_scans (discoverer, next_run_at, continuation, state_version, updated_at)
VALUES (sqlc.arg('discoverer'), sqlc.arg('next_run_at'), sqlc.narg('continuation'), sqlc.arg('state_version'),
        sqlc.arg('updated_at'));

-- Guard: state_version equals the expected version (compare-and-set); caller asserted the scheduler lease.
-- name: SchedulerScanUpdate :execrows
UPDATE pc_scheduler_scans
SET next_run_at = sqlc.arg('next_run_at'),
    continuation = sqlc.narg('continuation'),
    state_version = state_version + 1,
    updated_at = sqlc.arg('updated_at')
WHERE discoverer = sqlc.arg('discoverer')
  AND state_version = sqlc.arg('expected_version');
