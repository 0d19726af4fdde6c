package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) MemoryRevisionList(ctx context.Context, p db.MemoryRevisionListParams) ([]db.MemoryRevision, error) {
	rs, err := q.q.MemoryRevisionList(ctx, postgresgen.MemoryRevisionListParams{ScopeID: p.ScopeID, BeforeRevision: p.BeforeRevision, Limit: p.Limit})
	return conv.Many(errs, rs, err, conv.MemoryRevisionFromGen)
}
