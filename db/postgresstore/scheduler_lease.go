package postgresstore

import (
	"context"
	"time"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/gen/postgresgen"
)

func schedulerLeaseFromRow(r postgresgen.PcSchedulerLease) db.SchedulerLease {
	return db.SchedulerLease{
		LeaseName:      r.LeaseName,
		OwnerID:        fromTextPtr(r.OwnerID),
		Fence:          r.Fence,
		LeaseExpiresAt: fromTimePtr(r.LeaseExpiresAt),
		UpdatedAt:      fromTime(r.UpdatedAt),
	}
}

func (s queries) SchedulerLeaseInsertIfAbsent(ctx context.Context, leaseName string) (bool, error) {
	rows, err := s.q.SchedulerLeaseInsertIfAbsent(ctx, leaseName)
	if err != nil {
		return false, interpretError(err)
	}
	return rows == 1, nil
}

func (s queries) SchedulerLeaseLock(ctx context.Context, leaseName string) (db.SchedulerLease, time.Time, error) {
	r, err := s.q.SchedulerLeaseLock(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, time.Time{}, interpretError(err)
	}
	return schedulerLeaseFromRow(r.PcSchedulerLease), fromTime(r.DbNow), nil
}

// SchedulerLeaseUpdate returns db.ErrNotFound when the lease row does not exist.
func (s queries) SchedulerLeaseUpdate(ctx context.Context, lease db.SchedulerLease) error {
	return rowsOrNotFound(s.q.SchedulerLeaseUpdate(ctx, postgresgen.SchedulerLeaseUpdateParams{
		OwnerID:        toTextPtr(lease.OwnerID),
		Fence:          lease.Fence,
		LeaseExpiresAt: toTimePtr(lease.LeaseExpiresAt),
		UpdatedAt:      toTime(lease.UpdatedAt),
		LeaseName:      lease.LeaseName,
	}))
}

func (s queries) SchedulerLeaseGet(ctx context.Context, leaseName string) (db.SchedulerLease, error) {
	r, err := s.q.SchedulerLeaseGet(ctx, leaseName)
	if err != nil {
		return db.SchedulerLease{}, interpretError(err)
	}
	return schedulerLeaseFromRow(r), nil
}
