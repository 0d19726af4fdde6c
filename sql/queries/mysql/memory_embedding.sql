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
WHERE scope_id = sqlc.arg('scope_id')
LIMIT ?;

-- Requires the scope's memory lane lock (a revision commit) or a memory lane item's claim; at most limit vectors of
-- revisions before before_revision (only the latest revision keeps its vectors).
-- name: MemoryEmbeddingDeleteBefore :execrows
DELETE FROM pc_memory_embeddings
WHERE scope_id = sqlc.arg('scope_id')
  AND revision < sqlc.arg('before_revision')
LIMIT ?;

-- No lock (an old revision is never written again); at most limit vectors of one revision (retention).
-- name: MemoryEmbeddingDeleteRevisionBatch :execrows
DELETE FROM pc_memory_embeddings
WHERE scope_id = sqlc.arg('scope_id')
  AND revision = sqlc.arg('revision')
LIMIT ?;

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
      SELECT COUNT(*) FROM pc_memory_embeddings e
      WHERE e.scope_id = h.scope_id
        AND e.model = sqlc.arg('model')
        AND e.revision = (SELECT MAX(m.revision) FROM pc_memory_revisions m WHERE m.scope_id = h.scope_id))
ORDER BY h.scope_id
LIMIT ?;

-- Requires the scope's memory lane lock (a revision commit) or a memory lane item's claim; one entry's vector,
-- replacing a vector of another model. Differs from postgres because MySQL has ON DUPLICATE KEY UPDATE, not ON CONFLICT.
-- name: MemoryEmbeddingUpsert :exec
INSERT INTO pc_memory_embeddings (scope_id, revision, entry_no, model, dimensions, embedding, created_at)
VALUES (sqlc.arg('scope_id'), sqlc.arg('revision'), sqlc.arg('entry_no'), sqlc.arg('model'), sqlc.arg('dimensions'),
        sqlc.arg('embedding'), sqlc.arg('created_at'))
ON DUPLICATE KEY UPDATE
    model = VALUES(model),
    dimensions = VALUES(dimensions),
    embedding = VALUES(embedding),
    created_at = VALUES(created_at);
