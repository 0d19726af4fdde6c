-- Guard: compare-and-set on (position, generation); caller holds the cursor lock. Returns rows changed.
-- name: SourceCursorAdvance :execrows
UPDATE pc_source_cursors
SET position = sqlc.arg('position'),
    generation = sqlc.arg('generation'),
    updated_at = sqlc.arg('updated_at')
WHERE scope_id = sqlc.arg('scope_id')
  AND cursor_name = sqlc.arg('cursor_name')
  AND position = sqlc.arg('from_position')
  AND generation = sqlc.arg('from_generation');

-- No lock; plain read of one cursor (a missing row is db.ErrNotFound; the domain reads it as (0, 0)).
-- name: SourceCursorGet :one
SELECT *
FROM pc_source_cursors
WHERE scope_id = sqlc.arg('scope_id')
  AND cursor_name = sqlc.arg('cursor_name');

-- Guard: caller holds the lane lock of the scope's work; unique (scope_id, cursor_name).
-- name: SourceCursorInsert :exec
INSERT INTO pc_source_cursors (scope_id, cursor_name, position, generation, updated_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('cursor_name'), sqlc.arg('position'), sqlc.arg('generation'),
        sqlc.arg('updated_at'));

-- Lock: the cursor row (FOR UPDATE); the domain cursor is the last lock in the global order.
-- name: SourceCursorLock :one
SELECT *
FROM pc_source_cursors
WHERE scope_id = sqlc.arg('scope_id')
  AND cursor_name = sqlc.arg('cursor_name')
FOR UPDATE;
