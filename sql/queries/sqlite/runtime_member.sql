-- No lock; removes one member row (clean shutdown).
-- name: RuntimeMemberDelete :execrows
DELETE FROM pc_runtime_members WHERE member_id = sqlc.arg('member_id');

-- No lock; members whose registration has not expired at the given time.
-- name: RuntimeMemberListLive :many
SELECT member_id, role, build_version, schema_min, schema_max, payload_min, payload_max, behavior_revision,
       started_at, heartbeat_at, expires_at
FROM pc_runtime_members
WHERE expires_at > sqlc.arg('now')
ORDER BY member_id;

-- No lock; deletes at most limit members whose row expired before the cutoff, oldest first (maintenance).
-- Differs from postgres because SQLite deletes a limited batch through rowid IN (SELECT rowid ... LIMIT ?).
-- name: RuntimeMemberPurgeExpired :execrows
DELETE FROM pc_runtime_members
WHERE rowid IN (
    SELECT m.rowid FROM pc_runtime_members m
    WHERE m.expires_at < sqlc.arg('expired_before')
    ORDER BY m.expires_at
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock; single-row upsert on member_id (each process writes only its own row).
-- name: RuntimeMemberUpsert :exec
INSERT INTO pc_runtime_members (
    member_id, role, build_version, schema_min, schema_max, payload_min, payload_max, behavior_revision,
    started_at, heartbeat_at, expires_at
) VALUES (
    sqlc.arg('member_id'), sqlc.arg('role'), sqlc.arg('build_version'), sqlc.arg('schema_min'),
    sqlc.arg('schema_max'), sqlc.arg('payload_min'), sqlc.arg('payload_max'), sqlc.arg('behavior_revision'),
    sqlc.arg('started_at'), sqlc.arg('heartbeat_at'), sqlc.arg('expires_at')
)
ON CONFLICT (member_id) DO UPDATE
SET role = excluded.role,
    build_version = excluded.build_version,
    schema_min = excluded.schema_min,
    schema_max = excluded.schema_max,
    payload_min = excluded.payload_min,
    payload_max = excluded.payload_max,
    behavior_revision = excluded.behavior_revision,
    started_at = excluded.started_at,
    heartbeat_at = excluded.heartbeat_at,
    expires_at = excluded.expires_at;
