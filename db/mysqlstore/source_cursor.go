package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SourceCursorLock runs the no-op SourceCursorTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) SourceCursorLock(ctx context.Context, p db.SourceCursorLockParams) (db.SourceCursor, error) {
	if _, err := touch(ctx, q, q.q.SourceCursorTouch, mysqlgen.SourceCursorTouchParams(p)); err != nil {
		return db.SourceCursor{}, errs(err)
	}
	r, err := q.q.SourceCursorLock(ctx, mysqlgen.SourceCursorLockParams(p))
	return conv.One(errs, r, err, conv.SourceCursorFromGen)
}
