package coordinator

import (
	"context"

	"github.com/powercontext/powercontext/db"
)

// InClaim runs fn in one transaction after locking claimed's item and verifying, on the database time read with
// that lock, that the attempt which claimed it still owns it (docs/protocol.md#fencing): the same check Complete
// makes. claimed is the item a handler's Prepare received (status running, with the claim's owner, fence and
// attempt). It lets a handler whose work is too large for the final transaction — erasing a scope — commit it in
// bounded, fenced steps: a deposed attempt's step fails with ErrStaleWorkClaim and writes nothing, and a pending
// cancel request returns ErrCancelRequested. fn takes locks after the item only (domain rows), and must not call
// the Store outside q.
func (l *Ledger) InClaim(ctx context.Context, claimed db.WorkItem, fn func(ctx context.Context, q db.Queries) error) error {
	c := Claim{Item: claimed, Owner: claimed.LeaseOwner, Fence: claimed.LeaseFence, AttemptNo: claimed.AttemptCount}
	return l.store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		item, now, err := q.WorkItemLock(ctx, claimed.WorkID)
		if err != nil {
			return err
		}
		if err := verifyClaim(item, c, now); err != nil {
			return err
		}
		return fn(ctx, q)
	})
}
