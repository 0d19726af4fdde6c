package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) SourceJournalHeadInsertIfAbsent(ctx context.Context, scopeID string) (bool, error) {
	return errs.Inserted(q.q.SourceJournalHeadInsertIfAbsent(ctx, scopeID))
}

func (q queries) SourceJournalHeadLock(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.q.SourceJournalHeadLock(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceJournalHeadUpdate(ctx context.Context, h db.SourceJournalHead) error {
	return errs.Found(q.q.SourceJournalHeadUpdate(ctx, conv.SourceJournalHeadUpdateToGen[postgresgen.SourceJournalHeadUpdateParams](h)))
}

func (q queries) SourceJournalHeadGet(ctx context.Context, scopeID string) (db.SourceJournalHead, error) {
	r, err := q.q.SourceJournalHeadGet(ctx, scopeID)
	return conv.One(errs, r, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceJournalHeadListPending(ctx context.Context, p db.SourceJournalHeadListPendingParams) ([]db.SourceJournalHead, error) {
	rs, err := q.q.SourceJournalHeadListPending(ctx, postgresgen.SourceJournalHeadListPendingParams(p))
	return conv.Many(errs, rs, err, conv.SourceJournalHeadFromGen)
}

func (q queries) SourceInsert(ctx context.Context, s db.Source) error {
	return errs.Err(q.q.SourceInsert(ctx, conv.SourceToGen[postgresgen.SourceInsertParams](s)))
}

func (q queries) SourceGetByID(ctx context.Context, p db.SourceGetByIDParams) (db.Source, error) {
	r, err := q.q.SourceGetByID(ctx, postgresgen.SourceGetByIDParams(p))
	return conv.One(errs, r, err, conv.SourceFromGen)
}

func (q queries) SourceListRange(ctx context.Context, p db.SourceListRangeParams) ([]db.Source, error) {
	rs, err := q.q.SourceListRange(ctx, postgresgen.SourceListRangeParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q queries) SourceListAfter(ctx context.Context, p db.SourceListAfterParams) ([]db.Source, error) {
	rs, err := q.q.SourceListAfter(ctx, postgresgen.SourceListAfterParams(p))
	return conv.Many(errs, rs, err, conv.SourceFromGen)
}

func (q queries) SourceErase(ctx context.Context, p db.SourceEraseParams) (int64, error) {
	return errs.Rows(q.q.SourceErase(ctx, postgresgen.SourceEraseParams(p)))
}

func (q queries) SourceEraseByPositions(ctx context.Context, p db.SourceEraseByPositionsParams) (int64, error) {
	return errs.Rows(q.q.SourceEraseByPositions(ctx, postgresgen.SourceEraseByPositionsParams(p)))
}

func (q queries) SourceListErasable(ctx context.Context, p db.SourceListErasableParams) ([]db.SourcePosition, error) {
	rs, err := q.q.SourceListErasable(ctx, conv.SourceListErasableToGen[postgresgen.SourceListErasableParams](p))
	return conv.Many(errs, rs, err, conv.SourcePositionFromGen)
}
