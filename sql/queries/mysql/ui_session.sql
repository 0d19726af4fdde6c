-- No lock; removes one session by its digest (logout).
-- name: UISessionDelete :execrows
DELETE FROM pc_ui_sessions WHERE session_digest = sqlc.arg('session_digest');

-- No lock; one primary-key read of a session that has not expired on the database clock.
-- name: UISessionGetUnexpired :one
SELECT session_digest, principal_name, principal_binding, created_at, expires_at
FROM pc_ui_sessions
WHERE session_digest = sqlc.arg('session_digest')
  AND expires_at > CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6));

-- Guard: primary key (the digest of a fresh random id; a duplicate is db.ErrConflict); no lock.
-- name: UISessionInsert :exec
INSERT INTO pc_ui_sessions (session_digest, principal_name, principal_binding, created_at, expires_at)
VALUES (sqlc.arg('session_digest'), sqlc.arg('principal_name'), sqlc.arg('principal_binding'), sqlc.arg('created_at'),
        sqlc.arg('expires_at'));

-- No lock; deletes at most limit sessions that expired before the cutoff, oldest first (maintenance). Differs from postgres because MySQL has DELETE ... LIMIT.
-- name: UISessionPurgeExpired :execrows
DELETE FROM pc_ui_sessions
WHERE expires_at < sqlc.arg('expired_before')
ORDER BY expires_at
LIMIT ?;
