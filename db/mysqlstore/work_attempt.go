package mysqlstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) WorkAttemptInsert(ctx context.Context, a db.WorkAttempt) error {
	return errs.Err(q.q.WorkAttemptInsert(ctx, conv.WorkAttemptToGen[mysqlgen.WorkAttemptInsertParams](a)))
}

func (q queries) WorkAttemptFinish(ctx context.Context, p db.WorkAttemptFinishParams) (int64, error) {
	return errs.Rows(q.q.WorkAttemptFinish(ctx, conv.WorkAttemptFinishToGen[mysqlgen.WorkAttemptFinishParams](p)))
}

func (q queries) WorkAttemptHeartbeat(ctx context.Context, p db.WorkAttemptHeartbeatParams) (int64, error) {
	return errs.Rows(q.q.WorkAttemptHeartbeat(ctx, conv.WorkAttemptHeartbeatToGen[mysqlgen.WorkAttemptHeartbeatParams](p)))
}

func (q queries) WorkAttemptGet(ctx context.Context, p db.WorkAttemptGetParams) (db.WorkAttempt, error) {
	r, err := q.q.WorkAttemptGet(ctx, mysqlgen.WorkAttemptGetParams(p))
	return conv.One(errs, r, err, conv.WorkAttemptFromGen)
}

func (q queries) WorkAttemptListByWorkID(ctx context.Context, workID string) ([]db.WorkAttempt, error) {
	rs, err := q.q.WorkAttemptListByWorkID(ctx, workID)
	return conv.Many(errs, rs, err, conv.WorkAttemptFromGen)
}

func (q queries) WorkAttemptDeleteByWorkIDs(ctx context.Context, workIDs []string) (int64, error) {
	if len(workIDs) == 0 {
		return 0, nil
	}
	return errs.Rows(q.q.WorkAttemptDeleteByWorkIDs(ctx, workIDs))
}

func (q queries) WorkAttemptCountSnoozed(ctx context.Context, p db.WorkAttemptCountSnoozedParams) (int64, error) {
	return errs.Rows(q.q.WorkAttemptCountSnoozed(ctx, mysqlgen.WorkAttemptCountSnoozedParams(p)))
}
