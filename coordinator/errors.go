package coordinator

import (
	"context"
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

// errorClasses are the sentinels ErrorClass names, in the order it tests them.
var errorClasses = []struct {
	err  error
	name string
}{
	{ErrStaleWorkClaim, "stale_work_claim"},
	{ErrCancelRequested, "cancel_requested"},
	{ErrStaleCoordinatorLease, "stale_coordinator_lease"},
	{ErrInvalidArgument, "invalid_argument"},
	{ErrKeyIdentityMismatch, "key_identity_mismatch"},
	{db.ErrNotFound, "not_found"},
	{db.ErrConflict, "conflict"},
	{db.ErrDeadlock, "deadlock"},
	{db.ErrUnavailable, "database_unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
}

// ErrorClass names err for logs and spans without its text (which may quote database values): the protocol's
// sentinel or the classified handler pair when err is one, the context error, else the Go type of the innermost
// wrapped error. The result is drawn from a bounded set (sentinels and types compiled into the binary).
func ErrorClass(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	var he *HandlerError
	if errors.As(err, &he) {
		return he.Category + "/" + he.Code
	}
	var sc *StateConflictError
	if errors.As(err, &sc) {
		return "state_conflict"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return fmt.Sprintf("%T", err)
}
