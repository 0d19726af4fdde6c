package postgresstore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q queries) SchedulerScanInsertIfAbsent(ctx context.Context, scan db.SchedulerScan) (bool, error) {
	return errs.Inserted(q.q.SchedulerScanInsertIfAbsent(ctx, conv.SchedulerScanToGen[postgresgen.SchedulerScanInsertIfAbsentParams](scan)))
}

func (q queries) SchedulerScanGet(ctx context.Context, discoverer string) (db.SchedulerScan, error) {
	r, err := q.q.SchedulerScanGet(ctx, discoverer)
	return conv.One(errs, r, err, conv.SchedulerScanFromGen)
}

func (q queries) SchedulerScanUpdate(ctx context.Context, p db.SchedulerScanUpdateParams) (int64, error) {
	return errs.Rows(q.q.SchedulerScanUpdate(ctx, conv.SchedulerScanUpdateToGen[postgresgen.SchedulerScanUpdateParams](p)))
}
