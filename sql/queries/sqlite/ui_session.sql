-- No lock; removes one session by its digest (logout).
-- name: UISessionDelete :execrows
DELETE FROM pc_ui_sessions WHERE session_digest = sqlc.arg('session_digest');

-- No lock; one primary-key read of a session that has not expired on the database clock.
-- Differs from postgres because SQLite's clock is unix microseconds UTC with millisecond resolution.
-- name: UISessionGetUnexpired :one
SELECT session_digest, principal_name, principal_binding, created_at, expires_at
FROM pc_ui_sessions
WHERE session_digest = sqlc.arg('session_digest')
  AND expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000;

-- Guard: primary key (the digest of a fresh random id; a duplicate is db.ErrConflict); no lock.
-- name: UISessionInsert :exec
INSERT INTO pc_ui_sessions (session_digest, principal_name, principal_binding, created_at, expires_at)
VALUES (sqlc.arg('session_digest'), sqlc.arg('principal_name'), sqlc.arg('principal_binding'), sqlc.arg('created_at'),
        sqlc.arg('expires_at'));

-- No lock; deletes at most limit sessions that expired before the cut-off, oldest first (maintenance). Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: UISessionPurgeExpired :execrows
DELETE FROM pc_ui_sessions
WHERE rowid IN (
    SELECT s.rowid FROM pc_ui_sessions s
    WHERE s.expires_at < sqlc.arg('expired_before')
    ORDER BY s.expires_at
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);
