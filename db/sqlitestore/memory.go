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
