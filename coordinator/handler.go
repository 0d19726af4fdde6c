package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/powercontext/powercontext/db"
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

// Error categories and codes of docs/protocol.md#errors (the bounded set).
const (
	CategoryInternal      = "internal"
	CodeUnhandled         = "unhandled_handler_error"
	CategoryPayload       = "payload"
	CodeInvalidPayload    = "invalid_payload"
	CategoryConflict      = "conflict"
	CodeCursorChanged     = "cursor_changed"
	CategoryRetention     = "retention"
	CodeWindowUnavailable = "source_window_unavailable"
	CategoryConfiguration = "configuration"
	CodeExperienceOff     = "experience_pipeline_unavailable"
	CategoryProvider      = "provider"
	CodeRateLimited       = "rate_limited"
	CodeUnavailable       = "unavailable"
	CodeInvalidOutput     = "invalid_output"
	CodeRequestRejected   = "request_rejected"
)

// HandlerError is a typed, classified handler failure. Its text is the bounded pair only, never exception text.
type HandlerError struct {
	Category  string
	Code      string
	Retryable bool
}

func (e *HandlerError) Error() string { return fmt.Sprintf("handler error %s/%s", e.Category, e.Code) }

// NewHandlerError returns a classified failure.
func NewHandlerError(category, code string, retryable bool) *HandlerError {
	return &HandlerError{Category: category, Code: code, Retryable: retryable}
}

// Classify maps any handler error to a bounded failure; unclassified errors are internal/unhandled_handler_error
// and retryable (docs/protocol.md#errors).
func Classify(err error) Failure {
	var he *HandlerError
	if errors.As(err, &he) {
		return Failure{Category: he.Category, Code: he.Code, Retryable: he.Retryable}
	}
	return Failure{Category: CategoryInternal, Code: CodeUnhandled, Retryable: true}
}
