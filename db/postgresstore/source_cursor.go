package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) SourceCursorGet(ctx context.Context, p db.SourceCursorGetParams) (db.SourceCursor, error) {
	r, err := q.q.SourceCursorGet(ctx, postgresgen.SourceCursorGetParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

func (q queries) SourceCursorLock(ctx context.Context, p db.SourceCursorLockParams) (db.SourceCursor, error) {
	r, err := q.q.SourceCursorLock(ctx, postgresgen.SourceCursorLockParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

func (q queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return errs.Err(q.q.SourceCursorInsert(ctx, conv.SourceCursorToGen[postgresgen.SourceCursorInsertParams](c)))
}

func (q queries) SourceCursorAdvance(ctx context.Context, p db.SourceCursorAdvanceParams) (int64, error) {
	return errs.Rows(q.q.SourceCursorAdvance(ctx, conv.SourceCursorAdvanceToGen[postgresgen.SourceCursorAdvanceParams](p)))
}
