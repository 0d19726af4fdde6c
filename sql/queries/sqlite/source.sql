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
    metadata = CAST('{}' AS BLOB),
    erased_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id')
  AND erased_at IS NULL;

-- Guard: not erased yet (erased_at IS NULL); no lock (content is never read under one). Retention: forgets the
-- given Sources of one scope; erased_at on the database clock.
-- name: SourceEraseByPositions :execrows
UPDATE pc_sources
SET content = '',
    metadata = CAST('{}' AS BLOB),
    erased_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position IN (sqlc.slice('positions'))
  AND erased_at IS NULL;

-- No lock; plain read of one Source by its capture id.
-- name: SourceGetByID :one
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id');

-- Guard: caller holds the journal head lock of the scope; unique (scope_id, source_id) and (scope_id, journal_position).
-- name: SourceInsert :exec
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('journal_position'), sqlc.arg('source_id'), sqlc.arg('source_type'),
        sqlc.arg('content'), sqlc.arg('metadata'), sqlc.arg('created_at'));

-- Guard: caller holds the journal head lock of the scope (an import); the same unique keys as SourceInsert. Differs from postgres because SQLite has no arrays: one statement over the set read from a JSON array parameter (json_each); a row with erased_at is written as its tombstone.
-- name: SourceInsertMany :execrows
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at)
SELECT sqlc.arg('scope_id'), json_extract(r.value, '$.journal_position'), json_extract(r.value, '$.source_id'),
       json_extract(r.value, '$.source_type'),
       CASE WHEN json_extract(r.value, '$.erased_at') IS NULL THEN json_extract(r.value, '$.content') ELSE '' END,
       CASE WHEN json_extract(r.value, '$.erased_at') IS NULL THEN unhex(json_extract(r.value, '$.metadata')) ELSE CAST('{}' AS BLOB) END,
       json_extract(r.value, '$.created_at'), json_extract(r.value, '$.erased_at')
FROM json_each(sqlc.arg('rows')) AS r;

-- No lock; autocommitted read of one journal head.
-- name: SourceJournalHeadGet :one
SELECT scope_id, position, updated_at
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id');

-- Unique key scope_id; creates a head at position 0 stamped with the database clock; an existing row is left untouched.
-- name: SourceJournalHeadInsertIfAbsent :execrows
INSERT OR IGNORE INTO pc_source_journal_heads (scope_id, position, updated_at)
VALUES (sqlc.arg('scope_id'), 0, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000);

-- No lock; keyset over scopes (scope_id > after, BINARY collation) whose head is beyond the named cursor (missing cursor = 0).
-- name: SourceJournalHeadListPending :many
SELECT h.scope_id, h.position, h.updated_at
FROM pc_source_journal_heads h
LEFT JOIN pc_source_cursors c ON c.scope_id = h.scope_id AND c.cursor_name = sqlc.arg('cursor_name')
WHERE h.scope_id > sqlc.arg('after_scope_id')
  AND h.position > COALESCE(c.position, 0)
ORDER BY h.scope_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Journal head lock. Differs from postgres because SQLite has no FOR UPDATE: a plain read inside the BEGIN IMMEDIATE transaction, which already holds the database write lock.
-- name: SourceJournalHeadLock :one
SELECT scope_id, position, updated_at
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id');

-- Guard: caller holds the journal head lock (SourceJournalHeadLock in the same transaction); rows = 0 means the head does not exist.
-- name: SourceJournalHeadUpdate :execrows
UPDATE pc_source_journal_heads
SET position = sqlc.arg('position'),
    updated_at = sqlc.arg('updated_at')
WHERE scope_id = sqlc.arg('scope_id');

-- No lock; up to limit Sources after a journal position, in journal order.
-- name: SourceListAfter :many
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position > sqlc.arg('after_position')
ORDER BY journal_position
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; retention candidates: Sources not erased, created before the cut-off and consumed by every cursor of
-- their scope (position <= the lowest cursor; a scope without a cursor has none), oldest first.
-- name: SourceListErasable :many
SELECT s.scope_id, s.journal_position
FROM pc_sources s
WHERE s.erased_at IS NULL
  AND s.created_at < sqlc.arg('created_before')
  AND s.journal_position <= (SELECT MIN(c.position) FROM pc_source_cursors c WHERE c.scope_id = s.scope_id)
ORDER BY s.created_at, s.scope_id, s.journal_position
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- No lock; the Sources of the window (after, through], in journal order.
-- name: SourceListRange :many
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position > sqlc.arg('after_position')
  AND journal_position <= sqlc.arg('through_position')
ORDER BY journal_position;
