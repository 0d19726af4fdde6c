package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"

	"github.com/powercontext/powercontext/db/internal/conv"
)

// SchedulerLeaseLock runs the no-op SchedulerLeaseTouch first on OceanBase (touch), so that the transaction and the row lock really start
// (OceanBase), then the SELECT ... FOR UPDATE.
func (q queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	if _, err := touch(ctx, q, q.q.SchedulerLeaseTouch, leaseName); err != nil {
		return db.SchedulerLease{}, time.Time{}, errs(err)
	}
	r, err := q.q.SchedulerLeaseLock(ctx, leaseName)
	return conv.Locked(errs, r.PcSchedulerLease, r.DbNow, err, conv.SchedulerLeaseFromGen)
}
