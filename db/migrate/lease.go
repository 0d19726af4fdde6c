package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/powercontext/powercontext/db"
)

// LeaseName is the pc_scheduler_leases row that serialises migration runs.
const LeaseName = "schema-migration"

// LeaseDuration is how long one acquisition of the schema-migration lease lasts (database time). Apply renews it
// between files and, while a file runs, every LeaseDuration/4, so a long statement (an index built CONCURRENTLY on a
// big table) keeps it.
const LeaseDuration = 600 * time.Second

// LeaseHeldError reports that another process holds the schema-migration lease.
type LeaseHeldError struct {
	Owner     string
	ExpiresAt time.Time // database time (UTC)
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("migrate: another migration run (%s) holds the %s lease until %s; rerun after it has finished",
		e.Owner, LeaseName, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// errLeaseLost is returned when the lease expired and another run took it over (or this run took it over again with
// a new fence): between two files, or while a file ran, whose statement is then cancelled.
var errLeaseLost = errors.New("migrate: lost the " + LeaseName + " lease (it expired and another run took it over); " +
	"no further migration was applied")

// acquireLease takes or renews the schema-migration lease for owner on database time: unheld or expired → take over
// with fence+1; held by owner and unexpired → renew, fence unchanged; held by another → *LeaseHeldError.
// It returns the fence now held.
func acquireLease(ctx context.Context, store db.Store, owner string) (int64, error) {
	if _, err := store.SchedulerLeaseInsertIfAbsent(ctx, LeaseName); err != nil {
		return 0, fmt.Errorf("migrate: create %s lease: %w", LeaseName, err)
	}
	var fence int64
	err := store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lease, now, err := q.SchedulerLeaseLock(ctx, LeaseName)
		if err != nil {
			return fmt.Errorf("migrate: lock %s lease: %w", LeaseName, err)
		}
		live := lease.OwnerID != "" && lease.LeaseExpiresAt.After(now)
		switch {
		case live && lease.OwnerID != owner:
			return &LeaseHeldError{Owner: lease.OwnerID, ExpiresAt: lease.LeaseExpiresAt}
		case !live:
			lease.OwnerID = owner
			lease.Fence++
		}
		lease.LeaseExpiresAt = now.Add(LeaseDuration)
		lease.UpdatedAt = now
		if err := q.SchedulerLeaseUpdate(ctx, lease); err != nil {
			return fmt.Errorf("migrate: update %s lease: %w", LeaseName, err)
		}
		fence = lease.Fence
		return nil
	})
	return fence, err
}

// releaseLease clears owner and expiry if owner still holds the lease with fence; the fence is kept.
func releaseLease(ctx context.Context, store db.Store, owner string, fence int64) error {
	return store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lease, now, err := q.SchedulerLeaseLock(ctx, LeaseName)
		if err != nil {
			return fmt.Errorf("migrate: lock %s lease: %w", LeaseName, err)
		}
		if lease.OwnerID != owner || lease.Fence != fence {
			return nil // taken over meanwhile: nothing of ours to release
		}
		lease.OwnerID = ""
		lease.LeaseExpiresAt = time.Time{}
		lease.UpdatedAt = now
		if err := q.SchedulerLeaseUpdate(ctx, lease); err != nil {
			return fmt.Errorf("migrate: release %s lease: %w", LeaseName, err)
		}
		return nil
	})
}

// whileRenewing runs fn (one file) while renewing the lease held with fence every `every`. A renewal that finds the
// lease lost cancels fn's context and whileRenewing returns errLeaseLost (joined with fn's error); a renewal that
// fails otherwise (a database blip) is retried at the next tick, well inside the lease.
func whileRenewing(ctx context.Context, store db.Store, owner string, fence int64, every time.Duration, fn func(context.Context) error) error {
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	renewing, stopRenewing := context.WithCancel(fctx) // ends the renewals once fn has returned
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for renewing.Err() == nil {
			select {
			case <-renewing.Done():
			case <-t.C:
				// fctx, not renewing: a renewal in flight when fn returns finishes (wg.Wait waits for it).
				f, err := acquireLease(fctx, store, owner)
				var heldErr *LeaseHeldError
				if errors.As(err, &heldErr) || (err == nil && f != fence) {
					cancel(errLeaseLost)
				}
			}
		}
	})
	err := fn(fctx)
	stopRenewing()
	wg.Wait()
	if errors.Is(context.Cause(fctx), errLeaseLost) {
		return errors.Join(errLeaseLost, err)
	}
	return err
}
