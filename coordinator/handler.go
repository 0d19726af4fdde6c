package coordinator

import (
	"context"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/errclass"
)

// Handler executes one kind of work. Prepare runs outside any transaction (it may call a model provider for tens
// of seconds); the returned commit runs inside the ledger's final transaction.
type Handler interface {
	Kind() string
	PayloadVersions() VersionRange
	Prepare(ctx context.Context, item db.WorkItem) (Prepared, error)
}

// Prepared is a handler's outcome, ready to commit.
type Prepared struct {
	Result Result
	Commit DomainCommit // nil when there is nothing to write (for example already_committed)
	// Alone commits the item in a transaction of its own, never in a completer batch. A domain commit that locks
	// lanes besides its item's (the erase commit locks the scope's other lanes) sets it: a batch holds all its lanes
	// before any domain commit runs, so one more lane taken then could come before a lane the batch already holds
	// (docs/protocol.md#lock-order).
	Alone bool
}

// Error categories and codes of docs/protocol.md#errors (the bounded set), defined in internal/errclass so that the
// providers can raise them without importing the ledger.
const (
	CategoryInternal      = errclass.CategoryInternal
	CodeUnhandled         = errclass.CodeUnhandled
	CategoryPayload       = errclass.CategoryPayload
	CodeInvalidPayload    = errclass.CodeInvalidPayload
	CategoryConflict      = errclass.CategoryConflict
	CodeCursorChanged     = errclass.CodeCursorChanged
	CategoryRetention     = errclass.CategoryRetention
	CodeWindowUnavailable = errclass.CodeWindowUnavailable
	CategoryConfiguration = errclass.CategoryConfiguration
	CodeExperienceOff     = errclass.CodeExperienceOff
	CategoryProvider      = errclass.CategoryProvider
	CodeRateLimited       = errclass.CodeRateLimited
	CodeUnavailable       = errclass.CodeUnavailable
	CodeInvalidOutput     = errclass.CodeInvalidOutput
	CodeRequestRejected   = errclass.CodeRequestRejected
)

// HandlerError is a typed, classified handler failure (errclass.Error). Its text is the bounded pair only, never
// exception text.
type HandlerError = errclass.Error

// NewHandlerError returns a classified failure.
func NewHandlerError(category, code string, retryable bool) *HandlerError {
	return errclass.New(category, code, retryable)
}

// Classify maps any handler error to a bounded failure; unclassified errors are internal/unhandled_handler_error
// and retryable (docs/protocol.md#errors).
func Classify(err error) Failure { return Failure(errclass.Classify(err)) }
