-- Guard: caller holds the window lock; adds one request.
-- name: RateLimitWindowIncrement :execrows
UPDATE pc_rate_limit_windows
SET request_count = request_count + 1
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at');

-- Guard: unique (principal_key, policy_id, window_started_at); never fails on an existing row.
-- name: RateLimitWindowInsertIfAbsent :execrows
INSERT INTO pc_rate_limit_windows (principal_key, policy_id, window_started_at, request_count, expires_at)
VALUES (sqlc.arg('principal_key'), sqlc.arg('policy_id'), sqlc.arg('window_started_at'), sqlc.arg('request_count'),
        sqlc.arg('expires_at'))
ON CONFLICT DO NOTHING;

-- Lock: the window row (FOR UPDATE).
-- name: RateLimitWindowLock :one
SELECT *
FROM pc_rate_limit_windows
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at')
FOR UPDATE;

-- No lock; deletes at most limit windows that expired before the cutoff, oldest first.
-- Differs from MySQL because PostgreSQL has no DELETE ... LIMIT: the rows are chosen by a keyed subquery.
-- name: RateLimitWindowPurgeExpired :execrows
DELETE FROM pc_rate_limit_windows
WHERE (principal_key, policy_id, window_started_at) IN (
    SELECT w.principal_key, w.policy_id, w.window_started_at
    FROM pc_rate_limit_windows w
    WHERE w.expires_at < sqlc.arg('expired_before')
    ORDER BY w.expires_at
    LIMIT sqlc.arg('limit')
);
