package db

import (
	"time"
)

// MemoryEmbedding is one row of pc_memory_embeddings: the vector of one entry in the embedding space Model, as
// little-endian float32 (len(Embedding) == 4 × Dimensions).
type MemoryEmbedding struct {
	ScopeID    string
	Revision   int64
	EntryNo    int32
	Model      string
	Dimensions int32
	Embedding  []byte
	CreatedAt  time.Time
}

// MemoryEmbeddingListStaleScopesParams pages MemoryEmbeddingListStaleScopes.
type MemoryEmbeddingListStaleScopesParams struct {
	AfterScopeID string
	Model        string
	Limit        int32
}

// MemoryEmbeddingDeleteBeforeParams bounds one MemoryEmbeddingDeleteBefore.
type MemoryEmbeddingDeleteBeforeParams struct {
	ScopeID        string
	BeforeRevision int64
	Limit          int32
}
