package coordinator

import (
	"errors"
	"fmt"

	"github.com/powercontext/powercontext/db"
)

// Typed errors of the ledger protocol, defined once.
var (
	// ErrStaleWorkClaim: the claim no longer owns the item (status, owner, fence, attempt or lease expiry differ on
	// database time). Every write by a deposed worker fails with it and changes nothing.
	ErrStaleWorkClaim = errors.New("coordinator: stale work claim")
	// ErrCancelRequested: an operator asked to cancel the item while this claim ran; the domain commit did not run.
	// The worker converges with Ledger.ConfirmCancelled (or the lease expires and a claim pass does it).
	ErrCancelRequested = errors.New("coordinator: cancel requested")
	// ErrStaleCoordinatorLease: a scheduler lease assert failed (owner, fence or expiry on database time).
	ErrStaleCoordinatorLease = errors.New("coordinator: stale coordinator lease")
	// ErrNotFound: the work item (or lease) does not exist.
	ErrNotFound = db.ErrNotFound
	// ErrInvalidArgument: a caller passed a value the protocol refuses (oversized or non-object JSON, bad ids).
	ErrInvalidArgument = errors.New("coordinator: invalid argument")
	// ErrKeyIdentityMismatch: a logical key already belongs to an item of another kind, scope or lane.
	ErrKeyIdentityMismatch = errors.New("coordinator: logical key identity mismatch")
)

// StateConflictError reports an operator transition refused because the item is in another state or version.
type StateConflictError struct {
	WorkID        string
	Status        string
	ActualVersion int64
}

func (e *StateConflictError) Error() string {
	return fmt.Sprintf("coordinator: state conflict on work item %s (status %s, version %d)", e.WorkID, e.Status, e.ActualVersion)
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
