package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) MemoryEmbeddingUpsert(ctx context.Context, e db.MemoryEmbedding) error {
	return errs.Err(q.w.MemoryEmbeddingUpsert(ctx, conv.MemoryEmbeddingToGen[sqlitegen.MemoryEmbeddingUpsertParams](e)))
}

func (q *queries) MemoryEmbeddingListByRevision(ctx context.Context, p db.MemoryEntryListByRevisionParams) ([]db.MemoryEmbedding, error) {
	rs, err := q.r.MemoryEmbeddingListByRevision(ctx, sqlitegen.MemoryEmbeddingListByRevisionParams(p))
	return conv.Many(errs, rs, err, conv.MemoryEmbeddingFromGen)
}

func (q *queries) MemoryEmbeddingListStaleScopes(ctx context.Context, p db.MemoryEmbeddingListStaleScopesParams) ([]string, error) {
	return errs.Strings(q.r.MemoryEmbeddingListStaleScopes(ctx, sqlitegen.MemoryEmbeddingListStaleScopesParams(p)))
}

func (q *queries) MemoryEmbeddingDeleteBefore(ctx context.Context, p db.MemoryEmbeddingDeleteBeforeParams) (int64, error) {
	return errs.Rows(q.w.MemoryEmbeddingDeleteBefore(ctx, sqlitegen.MemoryEmbeddingDeleteBeforeParams(p)))
}

func (q *queries) MemoryEmbeddingDelete(ctx context.Context, p db.MemoryEntryDeleteParams) (int64, error) {
	return errs.Rows(q.w.MemoryEmbeddingDelete(ctx, sqlitegen.MemoryEmbeddingDeleteParams(p)))
}

func (q *queries) MemoryEmbeddingDeleteBatch(ctx context.Context, p db.ScopeBatchParams) (int64, error) {
	return errs.Rows(q.w.MemoryEmbeddingDeleteBatch(ctx, sqlitegen.MemoryEmbeddingDeleteBatchParams(p)))
}

func (q *queries) MemoryEmbeddingDeleteRevisionBatch(ctx context.Context, p db.MemoryEntryDeleteRevisionBatchParams) (int64, error) {
	return errs.Rows(q.w.MemoryEmbeddingDeleteRevisionBatch(ctx, sqlitegen.MemoryEmbeddingDeleteRevisionBatchParams(p)))
}
