package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) MemoryRevisionInsert(ctx context.Context, r db.MemoryRevision) error {
	return errs.Err(q.w.MemoryRevisionInsert(ctx, conv.MemoryRevisionToGen[sqlitegen.MemoryRevisionInsertParams](r)))
}

func (q *queries) MemoryRevisionLatest(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.r.MemoryRevisionLatest(ctx, scopeID)
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}

func (q *queries) MemoryRevisionGet(ctx context.Context, p db.MemoryRevisionGetParams) (db.MemoryRevision, error) {
	r, err := q.r.MemoryRevisionGet(ctx, sqlitegen.MemoryRevisionGetParams(p))
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}

func (q *queries) MemoryRevisionList(ctx context.Context, p db.MemoryRevisionListParams) ([]db.MemoryRevision, error) {
	rs, err := q.r.MemoryRevisionList(ctx, sqlitegen.MemoryRevisionListParams{ScopeID: p.ScopeID, BeforeRevision: p.BeforeRevision, Limit: int64(p.Limit)})
	return conv.Many(errs, rs, err, conv.MemoryRevisionFromGen)
}

func (q *queries) MemoryRevisionLatestWithEntryIDs(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.r.MemoryRevisionLatestWithEntryIDs(ctx, scopeID)
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}
