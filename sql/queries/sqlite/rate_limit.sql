-- Caller holds the window lock (RateLimitWindowLock in the same transaction).
-- name: RateLimitWindowIncrement :execrows
UPDATE pc_rate_limit_windows
SET request_count = request_count + 1
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at');

-- Unique key (principal_key, policy_id, window_started_at); an existing window is left untouched (rows = 0).
-- name: RateLimitWindowInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_rate_limit_windows (principal_key, policy_id, window_started_at, request_count, expires_at)
VALUES (sqlc.arg('principal_key'), sqlc.arg('policy_id'), sqlc.arg('window_started_at'), sqlc.arg('request_count'),
        sqlc.arg('expires_at'));

-- Window lock. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: RateLimitWindowLock :one
SELECT principal_key, policy_id, window_started_at, request_count, expires_at
FROM pc_rate_limit_windows
WHERE principal_key = sqlc.arg('principal_key')
  AND policy_id = sqlc.arg('policy_id')
  AND window_started_at = sqlc.arg('window_started_at');

-- No lock; deletes at most limit windows expired before the cut-off. Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: RateLimitWindowPurgeExpired :execrows
DELETE FROM pc_rate_limit_windows
WHERE rowid IN (
    SELECT w.rowid FROM pc_rate_limit_windows w
    WHERE w.expires_at < sqlc.arg('expired_before')
    ORDER BY w.expires_at
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);
