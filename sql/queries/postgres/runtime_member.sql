-- No lock; a process removes its own membership row on shutdown.
-- name: RuntimeMemberDelete :execrows
DELETE FROM pc_runtime_members
WHERE member_id = sqlc.arg('member_id');

-- No lock; members whose row has not expired at the given (database) time.
-- name: RuntimeMemberListLive :many
SELECT *
FROM pc_runtime_members
WHERE expires_at > sqlc.arg('now')
ORDER BY member_id;

-- No lock; deletes at most limit members whose row expired before the cutoff, oldest first (maintenance).
-- Differs from MySQL because PostgreSQL has no DELETE ... LIMIT: the rows are chosen by a keyed subquery.
-- name: RuntimeMemberPurgeExpired :execrows
DELETE FROM pc_runtime_members
WHERE member_id IN (
    SELECT m.member_id
    FROM pc_runtime_members m
    WHERE m.expires_at < sqlc.arg('expired_before')
    ORDER BY m.expires_at
    LIMIT sqlc.arg('limit')
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
SET role = EXCLUDED.role,
    build_version = EXCLUDED.build_version,
    schema_min = EXCLUDED.schema_min,
    schema_max = EXCLUDED.schema_max,
    payload_min = EXCLUDED.payload_min,
    payload_max = EXCLUDED.payload_max,
    behavior_revision = EXCLUDED.behavior_revision,
    started_at = EXCLUDED.started_at,
    heartbeat_at = EXCLUDED.heartbeat_at,
    expires_at = EXCLUDED.expires_at;
