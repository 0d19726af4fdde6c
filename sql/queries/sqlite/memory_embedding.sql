-- Statements of entry embeddings (docs/memory.md#embeddings).

-- Guard: caller verified the redaction's claim under its item lock; the vector of one entry it deletes.
-- name: MemoryEmbeddingDelete :execrows
DELETE FROM pc_memory_embeddings
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
  AND entry_no = sqlc.arg('entry_no');

-- Guard: caller verified the erase's claim under its item lock; at most limit vectors of one scope.
-- name: MemoryEmbeddingDeleteBatch :execrows
DELETE FROM pc_memory_embeddings
WHERE rowid IN (
    SELECT e.rowid FROM pc_memory_embeddings e
    WHERE e.scope_id = sqlc.arg('scope_id')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- Requires the scope's memory lane lock (a revision commit) or a memory lane item's claim; at most limit vectors of
-- revisions before before_revision (only the latest revision keeps its vectors).
-- name: MemoryEmbeddingDeleteBefore :execrows
DELETE FROM pc_memory_embeddings
WHERE rowid IN (
    SELECT e.rowid FROM pc_memory_embeddings e
    WHERE e.scope_id = sqlc.arg('scope_id') AND e.revision < sqlc.arg('before_revision')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock (an old revision is never written again); at most limit vectors of one revision (retention).
-- name: MemoryEmbeddingDeleteRevisionBatch :execrows
DELETE FROM pc_memory_embeddings
WHERE rowid IN (
    SELECT e.rowid FROM pc_memory_embeddings e
    WHERE e.scope_id = sqlc.arg('scope_id') AND e.revision = sqlc.arg('revision')
    LIMIT CAST(sqlc.arg('limit') AS INT32)
);

-- No lock; every vector of one revision (any model) in entry order.
-- name: MemoryEmbeddingListByRevision :many
SELECT scope_id, revision, entry_no, model, dimensions, embedding, created_at
FROM pc_memory_embeddings
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
ORDER BY entry_no;

-- No lock; the embedding discoverer's keyset over scopes (journal heads after after_scope_id): those whose latest
-- revision has fewer vectors of model than entries. One index probe per scope into each table.
-- name: MemoryEmbeddingListStaleScopes :many
SELECT h.scope_id
FROM pc_source_journal_heads h
WHERE h.scope_id > sqlc.arg('after_scope_id')
  AND (SELECT r.entry_count FROM pc_memory_revisions r WHERE r.scope_id = h.scope_id ORDER BY r.revision DESC LIMIT 1) > (
      SELECT count(*) FROM pc_memory_embeddings e
      WHERE e.scope_id = h.scope_id
        AND e.model = sqlc.arg('model')
        AND e.revision = (SELECT max(m.revision) FROM pc_memory_revisions m WHERE m.scope_id = h.scope_id))
ORDER BY h.scope_id
LIMIT CAST(sqlc.arg('limit') AS INT32);

-- Requires the scope's memory lane lock (a revision commit) or a memory lane item's claim; one entry's vector,
-- replacing a vector of another model.
-- name: MemoryEmbeddingUpsert :exec
INSERT INTO pc_memory_embeddings (scope_id, revision, entry_no, model, dimensions, embedding, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('revision'), sqlc.arg('entry_no'), sqlc.arg('model'), sqlc.arg('dimensions'),
        sqlc.arg('embedding'), sqlc.arg('created_at'))
ON CONFLICT (scope_id, revision, entry_no) DO UPDATE
SET model = excluded.model,
    dimensions = excluded.dimensions,
    embedding = excluded.embedding,
    created_at = excluded.created_at;
