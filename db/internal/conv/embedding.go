package conv

import "github.com/powercontext/powercontext/db"

type memoryEmbedding[T Time] = struct {
	ScopeID    string
	Revision   int64
	EntryNo    int32
	Model      string
	Dimensions int32
	Embedding  []byte
	CreatedAt  T
}

// MemoryEmbeddingFromGen converts a pc_memory_embeddings row.
func MemoryEmbeddingFromGen[T Time, R ~memoryEmbedding[T]](g R) db.MemoryEmbedding {
	r := memoryEmbedding[T](g)
	return db.MemoryEmbedding{ScopeID: r.ScopeID, Revision: r.Revision, EntryNo: r.EntryNo, Model: r.Model,
		Dimensions: r.Dimensions, Embedding: r.Embedding, CreatedAt: TimeFromGen(r.CreatedAt)}
}

// MemoryEmbeddingToGen builds the parameters of MemoryEmbeddingUpsert.
func MemoryEmbeddingToGen[P ~memoryEmbedding[T], T Time](e db.MemoryEmbedding) P {
	return P(memoryEmbedding[T]{ScopeID: e.ScopeID, Revision: e.Revision, EntryNo: e.EntryNo, Model: e.Model,
		Dimensions: e.Dimensions, Embedding: e.Embedding, CreatedAt: TimeToGen[T](e.CreatedAt)})
}
