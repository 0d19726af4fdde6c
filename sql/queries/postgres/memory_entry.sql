-- Guard: caller holds the lane and domain cursor locks; unique (scope_id, revision, entry_no).
-- name: MemoryEntryInsert :exec
INSERT INTO pc_memory_entries (scope_id, revision, entry_no, content, source_positions, created_at, entry_id)
VALUES (sqlc.arg('scope_id'), sqlc.arg('revision'), sqlc.arg('entry_no'), sqlc.arg('content'),
        sqlc.arg('source_positions'), sqlc.arg('created_at'), sqlc.narg('entry_id'));

-- No lock; every entry of one revision in entry order.
-- name: MemoryEntryListByRevision :many
SELECT *
FROM pc_memory_entries
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
ORDER BY entry_no;
