package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// schedulerLeaseCases are the cases of pc_scheduler_leases (scheduler_lease.sql).
var schedulerLeaseCases = []storeCase{
	{"SchedulerLeaseLock/InsertLockUpdateGet", testSchedulerLease},
}

func testSchedulerLease(t *testing.T, s db.Store) {
	ctx := context.Background()
	name := "work-discovery"
	before := dbNow(t, s)

	_, err := s.SchedulerLeaseGet(ctx, name)
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		_, _, err := q.SchedulerLeaseLock(ctx, name)
		require.ErrorIs(t, err, db.ErrNotFound)
		return nil
	}))
	require.ErrorIs(t, s.SchedulerLeaseUpdate(ctx, db.SchedulerLease{LeaseName: name, UpdatedAt: before}), db.ErrNotFound)

	inserted, err := s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.False(t, inserted)

	// A new lease is unowned, fence 0, stamped with the database clock.
	lease, err := s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, name, lease.LeaseName)
	require.Empty(t, lease.OwnerID)
	require.Zero(t, lease.Fence)
	require.True(t, lease.LeaseExpiresAt.IsZero())
	requireUTC(t, lease.UpdatedAt)
	requireNear(t, before, lease.UpdatedAt, clockSlack)

	// Acquire under the lock, on the clock read by the lock.
	var acquired db.SchedulerLease
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		l, now, err := q.SchedulerLeaseLock(ctx, name)
		require.NoError(t, err)
		require.Equal(t, lease, l)
		requireUTC(t, now)
		requireNear(t, time.Now(), now, clockSlack)
		require.False(t, now.Before(before))
		acquired = db.SchedulerLease{
			LeaseName: name, OwnerID: "member-1", Fence: l.Fence + 1,
			LeaseExpiresAt: us(now.Add(30 * time.Second)), UpdatedAt: us(now),
		}
		return q.SchedulerLeaseUpdate(ctx, acquired)
	}))
	got, err := s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, acquired, got)

	// Release clears owner and expiry and keeps the fence.
	released := acquired
	released.OwnerID = ""
	released.LeaseExpiresAt = time.Time{}
	released.UpdatedAt = us(acquired.UpdatedAt.Add(time.Second))
	require.NoError(t, s.SchedulerLeaseUpdate(ctx, released))
	got, err = s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, released, got)
	require.EqualValues(t, 1, got.Fence)

	// InsertIfAbsent on an existing lease changes nothing.
	inserted, err = s.SchedulerLeaseInsertIfAbsent(ctx, name)
	require.NoError(t, err)
	require.False(t, inserted)
	got, err = s.SchedulerLeaseGet(ctx, name)
	require.NoError(t, err)
	require.Equal(t, released, got)
}
