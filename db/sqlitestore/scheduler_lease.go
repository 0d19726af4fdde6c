package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) SchedulerLeaseInsertIfAbsent(ctx context.Context, leaseName string) (bool, error) {
	return errs.Inserted(q.w.SchedulerLeaseInsertIfAbsent(ctx, leaseName))
}

func (q *queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	r, err := q.w.SchedulerLeaseLock(ctx, leaseName)
	return conv.Locked(errs, r.PcSchedulerLease, r.DbNow, err, conv.SchedulerLeaseFromGen)
}

func (q *queries) SchedulerLeaseUpdate(ctx context.Context, lease db.SchedulerLease) error {
	return errs.Found(q.w.SchedulerLeaseUpdate(ctx, conv.SchedulerLeaseUpdateToGen[sqlitegen.SchedulerLeaseUpdateParams](lease)))
}

func (q *queries) SchedulerLeaseGet(ctx context.Context, leaseName string) (db.SchedulerLease, error) {
	r, err := q.r.SchedulerLeaseGet(ctx, leaseName)
	return conv.One(errs, r, err, conv.SchedulerLeaseFromGen)
}
