package mysqlstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/mysqlgen"
)

func schedulerLeaseFromGen(r mysqlgen.PcSchedulerLease) db.SchedulerLease {
	return db.SchedulerLease{
		LeaseName:      r.LeaseName,
		OwnerID:        fromNullString(r.OwnerID),
		Fence:          r.Fence,
		LeaseExpiresAt: fromNullTime(r.LeaseExpiresAt),
		UpdatedAt:      r.UpdatedAt.UTC(),
	}
}

func (q *queries) SchedulerLeaseInsertIfAbsent(ctx context.Context, leaseName string) (bool, error) {
	n, err := q.q.SchedulerLeaseInsertIfAbsent(ctx, leaseName)
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

func (q *queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	if _, err := q.q.SchedulerLeaseTouch(ctx, leaseName); err != nil {
		return db.SchedulerLease{}, time.Time{}, interpretError(err)
	}
	r, err := q.q.SchedulerLeaseLock(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, time.Time{}, interpretError(err)
	}
	return schedulerLeaseFromGen(r.PcSchedulerLease), r.DbNow.UTC(), nil
}

func (q *queries) SchedulerLeaseUpdate(ctx context.Context, lease db.SchedulerLease) error {
	n, err := q.q.SchedulerLeaseUpdate(ctx, mysqlgen.SchedulerLeaseUpdateParams{
		OwnerID:        nullString(lease.OwnerID),
		Fence:          lease.Fence,
		LeaseExpiresAt: nullTime(lease.LeaseExpiresAt),
		UpdatedAt:      ts(lease.UpdatedAt),
		LeaseName:      lease.LeaseName,
	})
	return rowsFound(n, err)
}

func (q *queries) SchedulerLeaseGet(ctx context.Context, leaseName string) (db.SchedulerLease, error) {
	r, err := q.q.SchedulerLeaseGet(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, interpretError(err)
	}
	return schedulerLeaseFromGen(r), nil
}
