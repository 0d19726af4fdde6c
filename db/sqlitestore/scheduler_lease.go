package sqlitestore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/sqlitegen"
)

func leaseFromGen(r sqlitegen.PcSchedulerLease) db.SchedulerLease {
	return db.SchedulerLease{
		LeaseName:      r.LeaseName,
		OwnerID:        fromNullString(r.OwnerID),
		Fence:          r.Fence,
		LeaseExpiresAt: fromNullMicros(r.LeaseExpiresAt),
		UpdatedAt:      fromMicros(r.UpdatedAt),
	}
}

func (q *queries) SchedulerLeaseInsertIfAbsent(ctx context.Context, leaseName string) (bool, error) {
	return inserted(q.w.SchedulerLeaseInsertIfAbsent(ctx, leaseName))
}

// SchedulerLeaseLock is a plain read (the BEGIN IMMEDIATE transaction already holds the database write lock) that
// also returns the database clock read by the same statement.
func (q *queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	r, err := q.w.SchedulerLeaseLock(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, time.Time{}, interpretError(err)
	}
	return leaseFromGen(r.PcSchedulerLease), fromMicros(r.DbNow), nil
}

func (q *queries) SchedulerLeaseUpdate(ctx context.Context, lease db.SchedulerLease) error {
	return rowsOrNotFound(q.w.SchedulerLeaseUpdate(ctx, sqlitegen.SchedulerLeaseUpdateParams{
		OwnerID:        toNullString(lease.OwnerID),
		Fence:          lease.Fence,
		LeaseExpiresAt: toNullMicros(lease.LeaseExpiresAt),
		UpdatedAt:      toMicros(lease.UpdatedAt),
		LeaseName:      lease.LeaseName,
	}))
}

func (q *queries) SchedulerLeaseGet(ctx context.Context, leaseName string) (db.SchedulerLease, error) {
	r, err := q.r.SchedulerLeaseGet(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, interpretError(err)
	}
	return leaseFromGen(r), nil
}
