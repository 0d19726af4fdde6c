package sqlitestore

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) SchedulerScanInsertIfAbsent(ctx context.Context, scan db.SchedulerScan) (bool, error) {
	return errs.Inserted(q.w.SchedulerScanInsertIfAbsent(ctx, conv.SchedulerScanToGen[sqlitegen.SchedulerScanInsertIfAbsentParams](scan)))
}

func (q *queries) SchedulerScanGet(ctx context.Context, discoverer string) (db.SchedulerScan, error) {
	r, err := q.r.SchedulerScanGet(ctx, discoverer)
	return conv.One(errs, r, err, conv.SchedulerScanFromGen)
}

func (q *queries) SchedulerScanUpdate(ctx context.Context, p db.SchedulerScanUpdateParams) (int64, error) {
	return errs.Rows(q.w.SchedulerScanUpdate(ctx, conv.SchedulerScanUpdateToGen[sqlitegen.SchedulerScanUpdateParams](p)))
}
