package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"

	"github.com/powercontext/powercontext/db/internal/conv"
)

func (q *queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	r, err := q.w.SchedulerLeaseLock(ctx, leaseName)
	return conv.Locked(errs, r.PcSchedulerLease, r.DbNow, err, conv.SchedulerLeaseFromGen)
}
