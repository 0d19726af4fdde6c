package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) WorkAttemptInsert(ctx context.Context, a db.WorkAttempt) error {
	return errs.Err(q.w.WorkAttemptInsert(ctx, conv.WorkAttemptToGen[sqlitegen.WorkAttemptInsertParams](a)))
}

func (q *queries) WorkAttemptFinish(ctx context.Context, p db.WorkAttemptFinishParams) (int64, error) {
	return errs.Rows(q.w.WorkAttemptFinish(ctx, conv.WorkAttemptFinishToGen[sqlitegen.WorkAttemptFinishParams](p)))
}

func (q *queries) WorkAttemptHeartbeat(ctx context.Context, p db.WorkAttemptHeartbeatParams) (int64, error) {
	return errs.Rows(q.w.WorkAttemptHeartbeat(ctx, conv.WorkAttemptHeartbeatToGen[sqlitegen.WorkAttemptHeartbeatParams](p)))
}

func (q *queries) WorkAttemptGet(ctx context.Context, p db.WorkAttemptGetParams) (db.WorkAttempt, error) {
	r, err := q.r.WorkAttemptGet(ctx, sqlitegen.WorkAttemptGetParams(p))
	return conv.One(errs, r, err, conv.WorkAttemptFromGen)
}

func (q *queries) WorkAttemptListByWorkID(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	rs, err := q.r.WorkAttemptListByWorkID(ctx, workID)
	return conv.Many(errs, rs, err, conv.WorkAttemptFromGen)
}

func (q *queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	return errs.Rows(q.w.WorkAttemptDeleteByWorkIDs(ctx, workIDs))
}

func (q *queries) WorkAttemptCountSnoozed(ctx context.Context, p db.WorkAttemptCountSnoozedParams) (int64, error) {
	return errs.Rows(q.r.WorkAttemptCountSnoozed(ctx, sqlitegen.WorkAttemptCountSnoozedParams(p)))
}
