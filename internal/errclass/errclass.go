// Package errclass holds the bounded error classes of a failed piece of work (docs/protocol.md#errors): the
// (category, code) pairs, the classified Error that carries one, and Snoozer, the "not now" hint. It sits below
// both the ledger (coordinator), which persists the pairs, and the model providers (provider), which raise them,
// so neither has to import the other. It imports nothing of this module.
package errclass

import (
	"errors"
	"fmt"
	"time"
)

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

// Error is a typed, classified failure. Its text is the bounded pair only, never exception text.
type Error struct {
	Category  string
	Code      string
	Retryable bool
}

func (e *Error) Error() string { return fmt.Sprintf("handler error %s/%s", e.Category, e.Code) }

// New returns a classified failure.
func New(category, code string, retryable bool) *Error {
	return &Error{Category: category, Code: code, Retryable: retryable}
}

// Classify returns the classified failure err carries (possibly wrapped); an unclassified error is
// internal/unhandled_handler_error and retryable.
func Classify(err error) Error {
	var e *Error
	if errors.As(err, &e) {
		return *e
	}
	return Error{Category: CategoryInternal, Code: CodeUnhandled, Retryable: true}
}

// Snoozer is implemented by errors that mean "not now" rather than "this attempt failed": a shared limit (a
// provider's 429, the shared provider rate limiter) is exhausted and retrying sooner cannot help. SnoozeAfter is the
// delay the provider or limiter named, 0 when it named none.
type Snoozer interface {
	error
	SnoozeAfter() time.Duration
}

// SnoozeHint reports whether err means "not now" and the delay named for it (0 when none was named). A
// provider/rate_limited error always does, with or without a Snoozer carrying the delay.
func SnoozeHint(err error) (time.Duration, bool) {
	var s Snoozer
	if errors.As(err, &s) {
		return max(s.SnoozeAfter(), 0), true
	}
	var e *Error
	if errors.As(err, &e) && e.Category == CategoryProvider && e.Code == CodeRateLimited {
		return 0, true
	}
	return 0, false
}
