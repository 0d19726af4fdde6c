-- No lock; how many of the scope's Sources up to a journal position are tombstones, through the primary key (an
-- export's closing check: as many as the stream holds means none was forgotten after it was read).
-- name: SourceCountErased :one
SELECT COUNT(*)
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position <= sqlc.arg('through_position')
  AND erased_at IS NOT NULL;

-- Guard: not erased yet (erased_at IS NULL); no lock (content is never read under one); erased_at on the database clock.
-- Forgets the Source: its row stays as a tombstone holding the journal position.
-- name: SourceErase :execrows
UPDATE pc_sources
SET content = '',
    metadata = CAST('{}' AS bytea),
    erased_at = clock_timestamp()
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id')
  AND erased_at IS NULL;

-- Guard: not erased yet (erased_at IS NULL); no lock (content is never read under one). Retention: forgets the
-- given Sources of one scope; erased_at on the database clock.
-- name: SourceEraseByPositions :execrows
UPDATE pc_sources
SET content = '',
    metadata = CAST('{}' AS bytea),
    erased_at = clock_timestamp()
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position = ANY (sqlc.arg('positions')::bigint[])
  AND erased_at IS NULL;

-- No lock; plain read of one Source by its capture id.
-- name: SourceGetByID :one
SELECT *
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id');

-- Guard: caller holds the journal head lock of the scope; unique (scope_id, source_id) and (scope_id, journal_position).
-- name: SourceInsert :exec
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('journal_position'), sqlc.arg('source_id'), sqlc.arg('source_type'),
        sqlc.arg('content'), sqlc.arg('metadata'), sqlc.arg('created_at'));

-- Requires the journal head lock of the scope (an import, docs/portability.md); guard: the same unique keys as SourceInsert. One statement over the set (unnest of parallel arrays); an erased row is written as its tombstone.
-- name: SourceInsertMany :execrows
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at)
SELECT sqlc.arg('scope_id'), r.journal_position, r.source_id, r.source_type,
       CASE WHEN r.erased THEN '' ELSE r.content END,
       CASE WHEN r.erased THEN CAST('{}' AS bytea) ELSE r.metadata END,
       r.created_at, CASE WHEN r.erased THEN r.erased_at END
FROM (SELECT unnest(sqlc.arg('journal_positions')::bigint[]) AS journal_position,
             unnest(sqlc.arg('source_ids')::text[]) AS source_id,
             unnest(sqlc.arg('source_types')::text[]) AS source_type,
             unnest(sqlc.arg('contents')::text[]) AS content,
             unnest(sqlc.arg('metadatas')::bytea[]) AS metadata,
             unnest(sqlc.arg('created_ats')::timestamptz[]) AS created_at,
             unnest(sqlc.arg('erased')::boolean[]) AS erased,
             unnest(sqlc.arg('erased_ats')::timestamptz[]) AS erased_at) AS r;

-- No lock; plain read of one journal head.
-- name: SourceJournalHeadGet :one
SELECT *
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id');

-- Guard: unique scope_id; never fails on an existing row (inserted = rows == 1). A new head is at position 0.
-- name: SourceJournalHeadInsertIfAbsent :execrows
INSERT INTO pc_source_journal_heads (scope_id, position, updated_at)
VALUES (sqlc.arg('scope_id'), 0, clock_timestamp())
ON CONFLICT DO NOTHING;

-- No lock; keyset over scopes (scope_id > after) whose head is beyond the named cursor (missing cursor = 0).
-- name: SourceJournalHeadListPending :many
SELECT h.scope_id, h.position, h.updated_at
FROM pc_source_journal_heads h
LEFT JOIN pc_source_cursors c ON c.scope_id = h.scope_id AND c.cursor_name = sqlc.arg('cursor_name')
WHERE h.scope_id > sqlc.arg('after_scope_id')
  AND h.position > COALESCE(c.position, 0)
ORDER BY h.scope_id
LIMIT sqlc.arg('limit');

-- Lock: the journal head row (FOR UPDATE); serialises Source captures of one scope.
-- name: SourceJournalHeadLock :one
SELECT *
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id')
FOR UPDATE;

-- Guard: caller holds the journal head lock; 0 rows (no such head) becomes db.ErrNotFound.
-- name: SourceJournalHeadUpdate :execrows
UPDATE pc_source_journal_heads
SET position = sqlc.arg('position'),
    updated_at = sqlc.arg('updated_at')
WHERE scope_id = sqlc.arg('scope_id');

-- No lock; up to limit Sources after a journal position, in journal order.
-- name: SourceListAfter :many
SELECT *
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position > sqlc.arg('after_position')
ORDER BY journal_position
LIMIT sqlc.arg('limit');

-- No lock; retention candidates: Sources not erased, created before the cut-off and consumed by every cursor of
-- their scope (position <= the lowest cursor; a scope without a cursor has none), oldest first.
-- name: SourceListErasable :many
SELECT s.scope_id, s.journal_position
FROM pc_sources s
WHERE s.erased_at IS NULL
  AND s.created_at < sqlc.arg('created_before')
  AND s.journal_position <= (SELECT MIN(c.position) FROM pc_source_cursors c WHERE c.scope_id = s.scope_id)
ORDER BY s.created_at, s.scope_id, s.journal_position
LIMIT sqlc.arg('limit');

-- No lock; the Sources of the window (after, through], in journal order.
-- name: SourceListRange :many
SELECT *
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position > sqlc.arg('after_position')
  AND journal_position <= sqlc.arg('through_position')
ORDER BY journal_position;
