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
    metadata = CAST('{}' AS BINARY),
    erased_at = CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id')
  AND erased_at IS NULL;

-- Guard: not erased yet (erased_at IS NULL); no lock (content is never read under one). Retention: forgets the
-- given Sources of one scope; erased_at on the database clock.
-- name: SourceEraseByPositions :execrows
UPDATE pc_sources
SET content = '',
    metadata = CAST('{}' AS BINARY),
    erased_at = CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6))
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position IN (sqlc.slice('positions'))
  AND erased_at IS NULL;

-- No lock; plain read of one Source by its capture id.
-- name: SourceGetByID :one
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND source_id = sqlc.arg('source_id');

-- Requires the journal head lock of the scope; guard: unique (scope_id, source_id) and primary key (scope_id, journal_position).
-- name: SourceInsert :exec
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('journal_position'), sqlc.arg('source_id'), sqlc.arg('source_type'),
        sqlc.arg('content'), sqlc.arg('metadata'), sqlc.arg('created_at'));

-- Requires the journal head lock of the scope (an import, docs/portability.md); guard: the same unique keys as SourceInsert. Differs from postgres because MySQL has no array parameters: one multi-row statement over parallel lists of text (sqlc.slice; metadata in hex, times as DATETIME(6) text, an empty string for not erased), row i taking the i-th element of each (ELT), rows 1..row_count (at most 1000) numbered by a digits cross join; an erased row is written as its tombstone.
-- name: SourceInsertMany :execrows
INSERT INTO pc_sources (scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at)
SELECT sqlc.arg('scope_id'), r.journal_position, r.source_id, r.source_type,
       CASE WHEN r.erased_at IS NULL THEN r.content ELSE '' END,
       CASE WHEN r.erased_at IS NULL THEN UNHEX(r.metadata) ELSE CAST('{}' AS BINARY) END,
       r.created_at, r.erased_at
FROM (SELECT n.i,
             CAST(ELT(n.i, sqlc.slice('journal_positions')) AS SIGNED) AS journal_position,
             ELT(n.i, sqlc.slice('source_ids')) AS source_id,
             ELT(n.i, sqlc.slice('source_types')) AS source_type,
             ELT(n.i, sqlc.slice('contents')) AS content,
             ELT(n.i, sqlc.slice('metadatas')) AS metadata,
             CAST(ELT(n.i, sqlc.slice('created_ats')) AS DATETIME(6)) AS created_at,
             CAST(NULLIF(ELT(n.i, sqlc.slice('erased_ats')), '') AS DATETIME(6)) AS erased_at
      FROM (SELECT 1 + u.d + 10 * t.d + 100 * h.d AS i
            FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS u
            CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS t
            CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) AS h
            WHERE 1 + u.d + 10 * t.d + 100 * h.d <= CAST(sqlc.arg('row_count') AS SIGNED)) AS n) AS r
ORDER BY r.i;

-- No lock; plain read of one journal head.
-- name: SourceJournalHeadGet :one
SELECT scope_id, position, updated_at
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id');

-- Guard: primary key; run autocommitted before the locking transaction (docs/protocol.md#creating-rows). Inserted = rows == 1; a new head is at 0.
-- name: SourceJournalHeadInsertIfAbsent :execrows
INSERT IGNORE INTO pc_source_journal_heads (scope_id, position, updated_at)
VALUES (sqlc.arg('scope_id'), 0, CAST(CURRENT_TIMESTAMP(6) AS DATETIME(6)));

-- No lock; keyset over scopes (scope_id > after) whose head is beyond the named cursor (missing cursor = 0).
-- name: SourceJournalHeadListPending :many
SELECT h.scope_id, h.position, h.updated_at
FROM pc_source_journal_heads h
LEFT JOIN pc_source_cursors c ON c.scope_id = h.scope_id AND c.cursor_name = sqlc.arg('cursor_name')
WHERE h.scope_id > sqlc.arg('after_scope_id')
  AND h.position > COALESCE(c.position, 0)
ORDER BY h.scope_id
LIMIT ?;

-- Journal head row lock (FOR UPDATE), taken after SourceJournalHeadTouch; serialises Source captures of one scope.
-- name: SourceJournalHeadLock :one
SELECT scope_id, position, updated_at
FROM pc_source_journal_heads
WHERE scope_id = sqlc.arg('scope_id')
FOR UPDATE;

-- Engine-only (mysql): Journal head row lock via a no-op update, run by the adapter before the FOR UPDATE read, because OceanBase starts the transaction and the row lock only on a write.
-- name: SourceJournalHeadTouch :execrows
UPDATE pc_source_journal_heads SET scope_id = scope_id WHERE scope_id = sqlc.arg('scope_id');

-- Requires the journal head lock held by the caller; 0 rows (no such head) becomes db.ErrNotFound.
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
LIMIT ?;

-- No lock; retention candidates: Sources not erased, created before the cut-off and consumed by every cursor of
-- their scope (position <= the lowest cursor; a scope without a cursor has none), oldest first.
-- name: SourceListErasable :many
SELECT s.scope_id, s.journal_position
FROM pc_sources s
WHERE s.erased_at IS NULL
  AND s.created_at < sqlc.arg('created_before')
  AND s.journal_position <= (SELECT MIN(c.position) FROM pc_source_cursors c WHERE c.scope_id = s.scope_id)
ORDER BY s.created_at, s.scope_id, s.journal_position
LIMIT ?;

-- No lock; the Sources of the window (after, through], in journal order.
-- name: SourceListRange :many
SELECT scope_id, journal_position, source_id, source_type, content, metadata, created_at, erased_at
FROM pc_sources
WHERE scope_id = sqlc.arg('scope_id')
  AND journal_position > sqlc.arg('after_position')
  AND journal_position <= sqlc.arg('through_position')
ORDER BY journal_position;
