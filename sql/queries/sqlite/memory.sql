-- No lock; one revision of a scope by number.
-- name: MemoryRevisionGet :one
SELECT scope_id, revision, work_id, cursor_generation, window_after, window_through, entry_count, created_at,
       last_entry_id, evicted_entry_ids
FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision');

-- Unique key (scope_id, revision); caller holds the lane lock and the domain cursor.
-- name: MemoryRevisionInsert :exec
INSERT INTO pc_memory_revisions (
    scope_id, revision, work_id, cursor_generation, window_after, window_through, entry_count, created_at,
    last_entry_id, evicted_entry_ids
) VALUES (
    sqlc.arg('scope_id'), sqlc.arg('revision'), sqlc.arg('work_id'), sqlc.arg('cursor_generation'),
    sqlc.arg('window_after'), sqlc.arg('window_through'), sqlc.arg('entry_count'), sqlc.arg('created_at'),
    sqlc.narg('last_entry_id'), sqlc.narg('evicted_entry_ids')
);

-- No lock; the newest revision of a scope.
-- name: MemoryRevisionLatest :one
SELECT scope_id, revision, work_id, cursor_generation, window_after, window_through, entry_count, created_at,
       last_entry_id, evicted_entry_ids
FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
ORDER BY revision DESC
LIMIT 1;

-- No lock; the newest revision of a scope that records entry ids (revisions an older build wrote record none),
-- walking the primary key down from the newest revision.
-- name: MemoryRevisionLatestWithEntryIDs :one
SELECT scope_id, revision, work_id, cursor_generation, window_after, window_through, entry_count, created_at,
       last_entry_id, evicted_entry_ids
FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
  AND evicted_entry_ids IS NOT NULL
ORDER BY revision DESC
LIMIT 1;

-- No lock; keyset page of a scope's revisions below before_revision, newest first (primary key order).
-- name: MemoryRevisionList :many
SELECT scope_id, revision, work_id, cursor_generation, window_after, window_through, entry_count, created_at,
       last_entry_id, evicted_entry_ids
FROM pc_memory_revisions
WHERE scope_id = sqlc.arg('scope_id')
  AND revision < sqlc.arg('before_revision')
ORDER BY revision DESC
LIMIT sqlc.arg('limit');
