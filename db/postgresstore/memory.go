package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) MemoryRevisionInsert(ctx context.Context, r db.MemoryRevision) error {
	return errs.Err(q.q.MemoryRevisionInsert(ctx, conv.MemoryRevisionToGen[postgresgen.MemoryRevisionInsertParams](r)))
}

func (q queries) MemoryRevisionLatest(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.q.MemoryRevisionLatest(ctx, scopeID)
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}

func (q queries) MemoryRevisionGet(ctx context.Context, p db.MemoryRevisionGetParams) (db.MemoryRevision, error) {
	r, err := q.q.MemoryRevisionGet(ctx, postgresgen.MemoryRevisionGetParams(p))
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}

func (q queries) MemoryRevisionList(ctx context.Context, p db.MemoryRevisionListParams) ([]db.MemoryRevision, error) {
	rs, err := q.q.MemoryRevisionList(ctx, postgresgen.MemoryRevisionListParams{ScopeID: p.ScopeID, BeforeRevision: p.BeforeRevision, Limit: p.Limit})
	return conv.Many(errs, rs, err, conv.MemoryRevisionFromGen)
}

func (q queries) MemoryRevisionLatestWithEntryIDs(ctx context.Context, scopeID string) (db.MemoryRevision, error) {
	r, err := q.q.MemoryRevisionLatestWithEntryIDs(ctx, scopeID)
	return conv.One(errs, r, err, conv.MemoryRevisionFromGen)
}
