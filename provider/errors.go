package provider

import (
	"errors"
	"time"

	"github.com/powercontext/powercontext/coordinator"
)

func errRateLimited() *coordinator.HandlerError {
	return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRateLimited, true)
}

func errUnavailable() *coordinator.HandlerError {
	return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeUnavailable, true)
}

// errRequestRejected is provider/request_rejected, not retryable: the provider refused this request as such (HTTP
// 400, 413 or 422: too long for the model's context, malformed for this endpoint), so sending it again cannot
// succeed. The window fails at once and its lane waits for an operator (retry after a fix, skip or cancel).
func errRequestRejected() *coordinator.HandlerError {
	return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRequestRejected, false)
}

func errInvalidOutput() *coordinator.HandlerError {
	return coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, true)
}

// RetryAfterError is a provider/rate_limited failure carrying a retry hint (from a limiter or an upstream
// Retry-After header). Its text is the bounded pair only; it unwraps to the *coordinator.HandlerError.
type RetryAfterError struct {
	Err        *coordinator.HandlerError
	RetryAfter time.Duration
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// SnoozeAfter implements coordinator.Snoozer: the item waits for the hint without spending an attempt.
func (e *RetryAfterError) SnoozeAfter() time.Duration { return e.RetryAfter }

func rateLimitedErr(retryAfter time.Duration) error {
	if retryAfter <= 0 {
		return errRateLimited()
	}
	return &RetryAfterError{Err: errRateLimited(), RetryAfter: retryAfter}
}

// RetryAfter reports the retry hint carried by err, if any.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) && ra.RetryAfter > 0 {
		return ra.RetryAfter, true
	}
	return 0, false
}
