package db

import (
	"context"
	"time"
)

// SchedulerLeaseQueries are the statements of pc_scheduler_leases (sql/queries/<engine>/scheduler_lease.sql). A method with more than one argument
// besides ctx takes a <Method>Params struct.
type SchedulerLeaseQueries interface {
	SchedulerLeaseGet(ctx context.Context, leaseName string) (SchedulerLease, error)
	SchedulerLeaseInsertIfAbsent(ctx context.Context, leaseName string) (bool, error)

	// SchedulerLeaseLock returns the locked row and the database clock read in the same statement.
	SchedulerLeaseLock(ctx context.Context, leaseName string) (SchedulerLease, time.Time, error)
	SchedulerLeaseUpdate(ctx context.Context, lease SchedulerLease) error
}
