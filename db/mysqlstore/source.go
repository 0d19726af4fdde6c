package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	return errs.Inserted(q.q.SourceJournalHeadInsertIfAbsent(ctx, scopeID))
}

// SourceJournalHeadLock runs the no-op SourceJournalHeadTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	if _, err := touch(ctx, q, q.q.SourceJournalHeadTouch, scopeID); err != nil {
		return db.SourceJournalHead{}, errs(err)
	}
	r, err := q.q.SourceJournalHeadLock(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	return errs.Found(q.q.SourceJournalHeadUpdate(ctx, conv.SourceJournalHeadUpdateToGen[mysqlgen.SourceJournalHeadUpdateParams](h)))
}

func (q queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.q.SourceJournalHeadGet(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceJournalHeadListPending(ctx context.Context, p db.SourceJournalHeadListPendingParams) ([]db.SourceJournalHead, error) {
	rs, err := q.q.SourceJournalHeadListPending(ctx, mysqlgen.SourceJournalHeadListPendingParams(p))
	return conv.Many(errs, rs, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceInsert(ctx context.Context, s db.Source) error {
	return errs.Err(q.q.SourceInsert(ctx, conv.SourceToGen[mysqlgen.SourceInsertParams](s)))
}

func (q queries) SourceGetByID(ctx context.Context, p db.SourceGetByIDParams) (db.Source, error) {
	r, err := q.q.SourceGetByID(ctx, mysqlgen.SourceGetByIDParams(p))
	return conv.One(errs, r, err, conv.SourceFromGen)
}

func (q queries) SourceListRange(ctx context.Context, p db.SourceListRangeParams) ([]db.Source, error) {
	rs, err := q.q.SourceListRange(ctx, mysqlgen.SourceListRangeParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q queries) SourceListAfter(ctx context.Context, p db.SourceListAfterParams) ([]db.Source, error) {
	rs, err := q.q.SourceListAfter(ctx, mysqlgen.SourceListAfterParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q queries) SourceErase(ctx context.Context, p db.SourceEraseParams) (int64, error) {
	return errs.Rows(q.q.SourceErase(ctx, mysqlgen.SourceEraseParams(p)))
}

func (q queries) SourceEraseByPositions(ctx context.Context, p db.SourceEraseByPositionsParams) (int64, error) {
	if len(p.Positions) == 0 {
		return 0, nil
	}
	return errs.Rows(q.q.SourceEraseByPositions(ctx, mysqlgen.SourceEraseByPositionsParams(p)))
}

func (q queries) SourceListErasable(ctx context.Context, p db.SourceListErasableParams) ([]db.SourcePosition, error) {
	rs, err := q.q.SourceListErasable(ctx, conv.SourceListErasableToGen[mysqlgen.SourceListErasableParams](p))
	return conv.Many(errs, rs, err, conv.SourcePositionFromGen)
}
