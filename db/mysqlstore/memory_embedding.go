package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) MemoryEmbeddingUpsert(ctx context.Context, e db.MemoryEmbedding) error {
	return errs.Err(q.q.MemoryEmbeddingUpsert(ctx, conv.MemoryEmbeddingToGen[mysqlgen.MemoryEmbeddingUpsertParams](e)))
}

func (q queries) MemoryEmbeddingListByRevision(ctx context.Context, p db.MemoryEntryListByRevisionParams) ([]db.MemoryEmbedding, error) {
	rs, err := q.q.MemoryEmbeddingListByRevision(ctx, mysqlgen.MemoryEmbeddingListByRevisionParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEmbeddingFromGen)
}

func (q queries) MemoryEmbeddingListStaleScopes(ctx context.Context, p db.MemoryEmbeddingListStaleScopesParams) ([]string, error) {
	return errs.Strings(q.q.MemoryEmbeddingListStaleScopes(ctx, mysqlgen.MemoryEmbeddingListStaleScopesParams(p)))
}

func (q queries) MemoryEmbeddingDeleteBefore(ctx context.Context, p db.MemoryEmbeddingDeleteBeforeParams) (int64, error) {
	return errs.Rows(q.q.MemoryEmbeddingDeleteBefore(ctx, mysqlgen.MemoryEmbeddingDeleteBeforeParams(p)))
}

func (q queries) MemoryEmbeddingDelete(ctx context.Context, p db.MemoryEntryDeleteParams) (int64, error) {
	return errs.Rows(q.q.MemoryEmbeddingDelete(ctx, mysqlgen.MemoryEmbeddingDeleteParams(p)))
}

func (q queries) MemoryEmbeddingDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.q.MemoryEmbeddingDeleteBatch(ctx, mysqlgen.MemoryEmbeddingDeleteBatchParams(p)))
}

func (q queries) MemoryEmbeddingDeleteRevisionBatch(ctx context.Context, p db.MemoryEntryDeleteRevisionBatchParams) (int64, error) {
	return errs.Rows(q.q.MemoryEmbeddingDeleteRevisionBatch(ctx, mysqlgen.MemoryEmbeddingDeleteRevisionBatchParams(p)))
}
