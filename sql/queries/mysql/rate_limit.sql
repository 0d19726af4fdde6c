-- Requires the window lock (RateLimitWindowLock); adds one request.
-- name: RateLimitWindowIncrement :execrows
UPDATE pc_rate_limit_windows
SET request_count = request_count + 1
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at');

-- Guard: primary key; run autocommitted before the locking transaction (docs/protocol.md#creating-rows). Inserted = rows == 1.
-- name: RateLimitWindowInsertIfAbsent :execrows
INSERT IGNORE INTO pc_rate_limit_windows (principal_key, policy_id, window_started_at, request_count, expires_at)
VALUES (sqlc.arg('principal_key'), sqlc.arg('policy_id'), sqlc.arg('window_started_at'), sqlc.arg('request_count'),
        sqlc.arg('expires_at'));

-- Window row lock (FOR UPDATE), taken after RateLimitWindowTouch.
-- name: RateLimitWindowLock :one
SELECT principal_key, policy_id, window_started_at, request_count, expires_at
FROM pc_rate_limit_windows
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at')
FOR UPDATE;

-- No lock; deletes at most limit windows that expired before the cutoff, oldest first. Differs from postgres because MySQL has DELETE ... LIMIT.
-- name: RateLimitWindowPurgeExpired :execrows
DELETE FROM pc_rate_limit_windows
WHERE expires_at < sqlc.arg('expired_before')
ORDER BY expires_at
LIMIT ?;

-- Engine-only (mysql): Window row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: RateLimitWindowTouch :execrows
UPDATE pc_rate_limit_windows
SET principal_key = principal_key
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at');
