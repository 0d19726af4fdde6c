-- No lock; removes one session by its digest (logout).
-- name: UISessionDelete :execrows
DELETE FROM pc_ui_sessions WHERE session_digest = sqlc.arg('session_digest');

-- No lock; one primary-key read of a session that has not expired on the database clock.
-- name: UISessionGetUnexpired :one
SELECT session_digest, principal_name, principal_binding, created_at, expires_at
FROM pc_ui_sessions
WHERE session_digest = sqlc.arg('session_digest')
  AND expires_at > clock_timestamp();

-- Guard: primary key (the digest of a fresh random id; a duplicate is db.ErrConflict); no lock.
-- name: UISessionInsert :exec
INSERT INTO pc_ui_sessions (session_digest, principal_name, principal_binding, created_at, expires_at)
VALUES (sqlc.arg('session_digest'), sqlc.arg('principal_name'), sqlc.arg('principal_binding'), sqlc.arg('created_at'),
        sqlc.arg('expires_at'));

-- No lock; deletes at most limit sessions that expired before the cutoff, oldest first (maintenance).
-- Differs from MySQL because PostgreSQL has no DELETE ... LIMIT: the rows are chosen by a keyed subquery.
-- name: UISessionPurgeExpired :execrows
DELETE FROM pc_ui_sessions
WHERE session_digest IN (
    SELECT s.session_digest
    FROM pc_ui_sessions s
    WHERE s.expires_at < sqlc.arg('expired_before')
    ORDER BY s.expires_at
    LIMIT sqlc.arg('limit')
);
