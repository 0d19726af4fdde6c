-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Entry embeddings (docs/memory.md#embeddings): one vector per entry of a revision in the embedding space `model`
-- (the configured embedder's), as little-endian float32 (4 bytes per dimension). Written in the final commit of the
-- revision (or by a memory_embed operation in the scope's memory lane); only the latest revision keeps its vectors.
-- Deleted with their entries by a redaction, a scope erase and revision retention.
CREATE TABLE pc_memory_embeddings (
    scope_id   TEXT         NOT NULL,
    revision   INTEGER      NOT NULL,
    entry_no   INTEGER      NOT NULL,
    model      TEXT         NOT NULL,
    dimensions INTEGER      NOT NULL,
    embedding  BLOB         NOT NULL,
    created_at INTEGER      NOT NULL,
    CONSTRAINT pc_memory_embeddings_pkey PRIMARY KEY (scope_id, revision, entry_no),
    CONSTRAINT pc_memory_embeddings_dimensions_check CHECK (dimensions BETWEEN 1 AND 8192),
    CONSTRAINT pc_memory_embeddings_embedding_check CHECK (length(embedding) = 4 * dimensions)
);
