package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	return errs.Inserted(q.w.SourceJournalHeadInsertIfAbsent(ctx, scopeID))
}

func (q *queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.w.SourceJournalHeadLock(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q *queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	return errs.Found(q.w.SourceJournalHeadUpdate(ctx, conv.SourceJournalHeadUpdateToGen[sqlitegen.SourceJournalHeadUpdateParams](h)))
}

func (q *queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.r.SourceJournalHeadGet(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q *queries) SourceJournalHeadListPending(ctx context.Context, p db.SourceJournalHeadListPendingParams) ([]db.SourceJournalHead, error) {
	rs, err := q.r.SourceJournalHeadListPending(ctx, sqlitegen.SourceJournalHeadListPendingParams(p))
	return conv.Many(errs, rs, err, conv.SourceJournalHeadFromGen)
}

func (q *queries) SourceInsert(ctx context.Context, s db.Source) error {
	return errs.Err(q.w.SourceInsert(ctx, conv.SourceToGen[sqlitegen.SourceInsertParams](s)))
}

func (q *queries) SourceGetByID(ctx context.Context, p db.SourceGetByIDParams) (db.Source, error) {
	r, err := q.r.SourceGetByID(ctx, sqlitegen.SourceGetByIDParams(p))
	return conv.One(errs, r, err, conv.SourceFromGen)
}

func (q *queries) SourceListRange(ctx context.Context, p db.SourceListRangeParams) ([]db.Source, error) {
	rs, err := q.r.SourceListRange(ctx, sqlitegen.SourceListRangeParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q *queries) SourceListAfter(ctx context.Context, p db.SourceListAfterParams) ([]db.Source, error) {
	rs, err := q.r.SourceListAfter(ctx, sqlitegen.SourceListAfterParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q *queries) SourceErase(ctx context.Context, p db.SourceEraseParams) (int64, error) {
	return errs.Rows(q.w.SourceErase(ctx, sqlitegen.SourceEraseParams(p)))
}

func (q *queries) SourceEraseByPositions(ctx context.Context, p db.SourceEraseByPositionsParams) (int64, error) {
	if len(p.Positions) == 0 {
		return 0, nil
	}
	return errs.Rows(q.w.SourceEraseByPositions(ctx, sqlitegen.SourceEraseByPositionsParams(p)))
}

func (q *queries) SourceListErasable(ctx context.Context, p db.SourceListErasableParams) ([]db.SourcePosition, error) {
	rs, err := q.r.SourceListErasable(ctx, conv.SourceListErasableToGen[sqlitegen.SourceListErasableParams](p))
	return conv.Many(errs, rs, err, conv.SourcePositionFromGen)
}
