package db

import (
	"context"
)

// MemoryEmbeddingQueries are the statements of pc_memory_embeddings: one vector per entry of a scope's latest revision (docs/memory.md#embeddings) (sql/queries/<engine>/memory_embedding.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type MemoryEmbeddingQueries interface {
	// MemoryEmbeddingDelete deletes one entry's vector (a redaction deleting the entry). Returns rows deleted.
	MemoryEmbeddingDelete(ctx context.Context, p MemoryEntryDeleteParams) (int64, error)

	// MemoryEmbeddingDeleteBatch deletes at most p.Limit vectors of a scope (the erase). Returns rows deleted.
	MemoryEmbeddingDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)

	// MemoryEmbeddingDeleteBefore deletes at most p.Limit vectors of the scope's revisions before p.BeforeRevision.
	// Returns rows deleted.
	MemoryEmbeddingDeleteBefore(ctx context.Context, p MemoryEmbeddingDeleteBeforeParams) (int64, error)

	// MemoryEmbeddingDeleteRevisionBatch deletes at most p.Limit vectors of one revision (retention). Returns rows
	// deleted.
	MemoryEmbeddingDeleteRevisionBatch(ctx context.Context, p MemoryEntryDeleteRevisionBatchParams) (int64, error)

	// MemoryEmbeddingListByRevision returns every vector of one revision (any model), in entry order.
	MemoryEmbeddingListByRevision(ctx context.Context, p MemoryEntryListByRevisionParams) ([]MemoryEmbedding, error)

	// MemoryEmbeddingListStaleScopes is the embedding discoverer's keyset over scopes: up to p.Limit scope ids after
	// p.AfterScopeID, in byte order, whose latest revision has fewer vectors of p.Model than entries.
	MemoryEmbeddingListStaleScopes(ctx context.Context, p MemoryEmbeddingListStaleScopesParams) ([]string, error)

	// MemoryEmbeddingUpsert writes one entry's vector, replacing the row of another model. The caller holds the
	// scope's memory lane lock or a memory lane item's claim.
	MemoryEmbeddingUpsert(ctx context.Context, e MemoryEmbedding) error

	// MemoryEmbeddingUpsertMany is MemoryEmbeddingUpsert of every row, in order (a composite step, like
	// MemoryEntryInsertMany). The first failure is returned.
	MemoryEmbeddingUpsertMany(ctx context.Context, es []MemoryEmbedding) error
}
