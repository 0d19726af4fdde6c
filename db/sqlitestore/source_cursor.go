package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) SourceCursorGet(ctx context.Context, p db.SourceCursorGetParams) (db.SourceCursor, error) {
	r, err := q.r.SourceCursorGet(ctx, sqlitegen.SourceCursorGetParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

func (q *queries) SourceCursorLock(ctx context.Context, p db.SourceCursorLockParams) (db.SourceCursor, error) {
	r, err := q.w.SourceCursorLock(ctx, sqlitegen.SourceCursorLockParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

func (q *queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return errs.Err(q.w.SourceCursorInsert(ctx, conv.SourceCursorToGen[sqlitegen.SourceCursorInsertParams](c)))
}

func (q *queries) SourceCursorAdvance(ctx context.Context, p db.SourceCursorAdvanceParams) (int64, error) {
	return errs.Rows(q.w.SourceCursorAdvance(ctx, conv.SourceCursorAdvanceToGen[sqlitegen.SourceCursorAdvanceParams](p)))
}
