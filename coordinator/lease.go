package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/powercontext/powercontext/db"
)

// Lease names (docs/protocol.md#tables).
const (
	LeaseWorkDiscovery     = "work-discovery"
	LeaseSingleNodeRuntime = "single-node-runtime"
	LeaseSchemaMigration   = "schema-migration"
)

// LeaseToken is a held scheduler lease: name, owner and the fence it was acquired with.
type LeaseToken struct {
	Name      string
	Owner     string
	Fence     int64
	ExpiresAt time.Time
}

// AcquireResult reports an acquire attempt.
type AcquireResult struct {
	Token    LeaseToken
	Acquired bool // the caller holds the lease now
	Renewed  bool // it already held it (fence unchanged)
	HolderID string
}

// AcquireLease acquires or renews a named lease on database time (docs/protocol.md#scheduler): same owner and unexpired → renew
// (fence unchanged); expired or never held → take over (fence+1); otherwise held by another → not acquired.
// The row is created by an autocommitted insert-if-absent before the locking transaction (docs/protocol.md#creating-rows).
func (l *Ledger) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (AcquireResult, error) {
	if name == "" || owner == "" || len(owner) > 128 || ttl <= 0 {
		return AcquireResult{}, invalidArgument("lease needs a name, an owner (1..128 bytes) and a positive ttl")
	}
	for range 2 {
		var res AcquireResult
		err := l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			res = AcquireResult{}
			lease, now, err := q.SchedulerLeaseLock(ctx, name)
			if err != nil {
				return err
			}
			held := lease.OwnerID != "" && now.Before(lease.LeaseExpiresAt)
			switch {
			case held && lease.OwnerID == owner:
				res.Renewed = true
			case held:
				res.HolderID = lease.OwnerID
				return nil
			default:
				lease.Fence++
				lease.OwnerID = owner
			}
			lease.LeaseExpiresAt = now.Add(ttl)
			lease.UpdatedAt = now
			if err := q.SchedulerLeaseUpdate(ctx, lease); err != nil {
				return err
			}
			res.Acquired = true
			res.HolderID = owner
			res.Token = LeaseToken{Name: name, Owner: owner, Fence: lease.Fence, ExpiresAt: lease.LeaseExpiresAt}
			return nil
		})
		if !errors.Is(err, db.ErrNotFound) {
			return res, err
		}
		if _, err := l.store.SchedulerLeaseInsertIfAbsent(ctx, name); err != nil {
			return AcquireResult{}, err
		}
	}
	return AcquireResult{}, errors.New("coordinator: lease row vanished after creation")
}

// AssertLease checks, in its own transaction, that the token still holds the lease.
func (l *Ledger) AssertLease(ctx context.Context, t LeaseToken) error {
	return l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error { return assertLease(ctx, q, t) })
}

// AssertLeaseTx is assertLease for callers composing their own transaction (the lease is the first lock).
func AssertLeaseTx(ctx context.Context, q db.Queries, t LeaseToken) error {
	return assertLease(ctx, q, t)
}

// assertLease locks the lease row and fails with ErrStaleCoordinatorLease unless owner and fence match exactly
// and the lease is unexpired on database time.
func assertLease(ctx context.Context, q db.Queries, t LeaseToken) error {
	lease, now, err := q.SchedulerLeaseLock(ctx, t.Name)
	if errors.Is(err, db.ErrNotFound) {
		return ErrStaleCoordinatorLease
	}
	if err != nil {
		return err
	}
	if lease.OwnerID != t.Owner || lease.Fence != t.Fence || !now.Before(lease.LeaseExpiresAt) {
		return ErrStaleCoordinatorLease
	}
	return nil
}

// ReleaseLease clears owner and expiry if the token still holds the lease; the fence is kept so the next holder's
// fence is still larger.
func (l *Ledger) ReleaseLease(ctx context.Context, t LeaseToken) error {
	return l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		lease, now, err := q.SchedulerLeaseLock(ctx, t.Name)
		if err != nil {
			return err
		}
		if lease.OwnerID != t.Owner || lease.Fence != t.Fence {
			return ErrStaleCoordinatorLease
		}
		lease.OwnerID = ""
		lease.LeaseExpiresAt = time.Time{}
		lease.UpdatedAt = now
		return q.SchedulerLeaseUpdate(ctx, lease)
	})
}
