package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

// SourceJournalHeadLock runs the no-op SourceJournalHeadTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	if _, err := touch(ctx, q, q.q.SourceJournalHeadTouch, scopeID); err != nil {
		return db.SourceJournalHead{}, errs(err)
	}
	r, err := q.q.SourceJournalHeadLock(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceEraseByPositions(ctx context.Context, p db.SourceEraseByPositionsParams) (int64, error) {
	if len(p.Positions) == 0 {
		return 0, nil
	}
	return errs.Rows(q.q.SourceEraseByPositions(ctx, mysqlgen.SourceEraseByPositionsParams(p)))
}
