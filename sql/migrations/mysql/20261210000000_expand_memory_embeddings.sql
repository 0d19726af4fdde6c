-- Expand-only (the expand_ label): a binary built before this migration keeps working with it applied.
-- Entry embeddings (docs/memory.md#embeddings): one vector per entry of a revision in the embedding space `model`
-- (the configured embedder's), as little-endian float32 (4 bytes per dimension). Written in the final commit of the
-- revision (or by a memory_embed operation in the scope's memory lane); only the latest revision keeps its vectors.
-- Deleted with their entries by a redaction, a scope erase and revision retention.
CREATE TABLE pc_memory_embeddings (
    scope_id   VARBINARY(256) NOT NULL,
    revision   BIGINT       NOT NULL,
    entry_no   INT          NOT NULL,
    model      VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    dimensions INT          NOT NULL,
    embedding  BLOB         NOT NULL,
    created_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (scope_id, revision, entry_no),
    CONSTRAINT pc_memory_embeddings_dimensions_check CHECK (dimensions BETWEEN 1 AND 8192),
    CONSTRAINT pc_memory_embeddings_embedding_check CHECK (LENGTH(embedding) = 4 * dimensions)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
