package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) SourceCursorGet(ctx context.Context, p db.SourceCursorGetParams) (db.SourceCursor, error) {
	r, err := q.q.SourceCursorGet(ctx, mysqlgen.SourceCursorGetParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

// SourceCursorLock runs the no-op SourceCursorTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) SourceCursorLock(ctx context.Context, p db.SourceCursorLockParams) (db.SourceCursor, error) {
	if _, err := touch(ctx, q, q.q.SourceCursorTouch, mysqlgen.SourceCursorTouchParams(p)); err != nil {
		return db.SourceCursor{}, errs(err)
	}
	r, err := q.q.SourceCursorLock(ctx, mysqlgen.SourceCursorLockParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}

func (q queries) SourceCursorInsert(ctx context.Context, c db.SourceCursor) error {
	return errs.Err(q.q.SourceCursorInsert(ctx, conv.SourceCursorToGen[mysqlgen.SourceCursorInsertParams](c)))
}

func (q queries) SourceCursorAdvance(ctx context.Context, p db.SourceCursorAdvanceParams) (int64, error) {
	return errs.Rows(q.q.SourceCursorAdvance(ctx, conv.SourceCursorAdvanceToGen[mysqlgen.SourceCursorAdvanceParams](p)))
}
