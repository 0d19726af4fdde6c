-- No lock; removes one member row (graceful shutdown).
-- name: RuntimeMemberDelete :execrows
DELETE FROM pc_runtime_members WHERE member_id = sqlc.arg('member_id');

-- No lock; members whose expiry is after now.
-- name: RuntimeMemberListLive :many
SELECT member_id, role, build_version, schema_min, schema_max, payload_min, payload_max, behavior_revision,
       started_at, heartbeat_at, expires_at
FROM pc_runtime_members
WHERE expires_at > sqlc.arg('now')
ORDER BY member_id;

-- No lock; deletes at most limit members whose row expired before the cutoff, oldest first (maintenance).
-- Differs from postgres because MySQL has DELETE ... LIMIT.
-- name: RuntimeMemberPurgeExpired :execrows
DELETE FROM pc_runtime_members
WHERE expires_at < sqlc.arg('expired_before')
ORDER BY expires_at
LIMIT ?;

-- Guard: primary key; single-row autocommitted upsert. Differs from postgres because MySQL has ON DUPLICATE KEY UPDATE, not ON CONFLICT.
-- name: RuntimeMemberUpsert :exec
INSERT INTO pc_runtime_members (member_id, role, build_version, schema_min, schema_max, payload_min, payload_max,
                                behavior_revision, started_at, heartbeat_at, expires_at)
VALUES (sqlc.arg('member_id'), sqlc.arg('role'), sqlc.arg('build_version'), sqlc.arg('schema_min'),
        sqlc.arg('schema_max'), sqlc.arg('payload_min'), sqlc.arg('payload_max'), sqlc.arg('behavior_revision'),
        sqlc.arg('started_at'), sqlc.arg('heartbeat_at'), sqlc.arg('expires_at'))
ON DUPLICATE KEY UPDATE
    role = VALUES(role),
    build_version = VALUES(build_version),
    schema_min = VALUES(schema_min),
    schema_max = VALUES(schema_max),
    payload_min = VALUES(payload_min),
    payload_max = VALUES(payload_max),
    behavior_revision = VALUES(behavior_revision),
    started_at = VALUES(started_at),
    heartbeat_at = VALUES(heartbeat_at),
    expires_at = VALUES(expires_at);
