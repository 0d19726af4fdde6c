-- No lock; plain read of one scan position.
-- name: SchedulerScanGet :one
SELECT *
FROM pc_scheduler_scans
WHERE discoverer = sqlc.arg('discoverer');

-- Guard: unique discoverer; never fails on an existing row (inserted = rows == 1).
-- name: SchedulerScanInsertIfAbsent :execrows
INSERT INTO pc_scheduler_scans (discoverer, next_run_at, continuation, state_version, updated_at)
VALUES (sqlc.arg('discoverer'), sqlc.arg('next_run_at'), sqlc.narg('continuation'), sqlc.arg('state_version'),
        sqlc.arg('updated_at'))
ON CONFLICT DO NOTHING;

-- Guard: state_version equals the expected version (compare-and-set); the version becomes expected + 1.
-- name: SchedulerScanUpdate :execrows
UPDATE pc_scheduler_scans
SET next_run_at = sqlc.arg('next_run_at'),
    continuation = sqlc.narg('continuation'),
    state_version = state_version + 1,
    updated_at = sqlc.arg('updated_at')
WHERE discoverer = sqlc.arg('discoverer')
  AND state_version = sqlc.arg('expected_version');
