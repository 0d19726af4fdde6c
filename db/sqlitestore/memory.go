package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) MemoryRevisionList(ctx context.Context, p db.MemoryRevisionListParams) ([]db.MemoryRevision, error) {
	rs, err := q.r.MemoryRevisionList(ctx, sqlitegen.MemoryRevisionListParams{ScopeID: p.ScopeID, BeforeRevision: p.BeforeRevision, Limit: int64(p.Limit)})
	return conv.Many(errs, rs, err, conv.MemoryRevisionFromGen)
}
