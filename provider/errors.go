package provider

import (
	"errors"
	"time"

	"github.com/powercontext/powercontext/internal/errclass"
)

func errRateLimited() *errclass.Error {
	return errclass.New(errclass.CategoryProvider, errclass.CodeRateLimited, true)
}

func errUnavailable() *errclass.Error {
	return errclass.New(errclass.CategoryProvider, errclass.CodeUnavailable, true)
}

// errRequestRejected is provider/request_rejected, not retryable: the provider refused this request as such (HTTP
// 400, 413 or 422: too long for the model's context, malformed for this endpoint), so sending it again cannot
// succeed. The window fails at once and its lane waits for an operator (retry after a fix, skip or cancel).
func errRequestRejected() *errclass.Error {
	return errclass.New(errclass.CategoryProvider, errclass.CodeRequestRejected, false)
}

func errInvalidOutput() *errclass.Error {
	return errclass.New(errclass.CategoryProvider, errclass.CodeInvalidOutput, true)
}

// RetryAfterError is a provider/rate_limited failure carrying a retry hint (from a limiter or an upstream
// Retry-After header). Its text is the bounded pair only; it unwraps to the *errclass.Error.
type RetryAfterError struct {
	Err        *errclass.Error
	RetryAfter time.Duration
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// SnoozeAfter implements errclass.Snoozer: the item waits for the hint without spending an attempt.
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
