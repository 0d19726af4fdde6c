package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func (q *queries) SourceEraseByPositions(ctx context.Context, p db.SourceEraseByPositionsParams) (int64, error) {
	if len(p.Positions) == 0 {
		return 0, nil
	}
	return errs.Rows(q.w.SourceEraseByPositions(ctx, sqlitegen.SourceEraseByPositionsParams(p)))
}
