package client

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// CodeUnexpectedResponse is the code the client itself puts on an APIError whose body was not the API's error
// envelope.
const CodeUnexpectedResponse = "unexpected_response"

// APIError is an error answered by the server: {"error":{"code","message","details"}} with its HTTP status and the
// X-Request-ID of the answer.
type APIError struct {
	Status    int
	Code      string
	Message   string
	Details   map[string]any
	RequestID string
	// RetryAfter is the Retry-After of a 429 or 503 answer (0 when absent).
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	var extra []string
	if f := e.Field(); f != "" {
		extra = append(extra, "field "+f)
	}
	if e.RequestID != "" {
		extra = append(extra, "request id "+e.RequestID)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}

// Field returns details.field of a 422 invalid_request ("" otherwise).
func (e *APIError) Field() string {
	f, _ := e.Details["field"].(string)
	return f
}

// DetailString returns details[name] when it is a string.
func (e *APIError) DetailString(name string) string {
	s, _ := e.Details[name].(string)
	return s
}

// Temporary reports whether repeating the same request later may succeed (429, 5xx).
func (e *APIError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// ConnectionError means no HTTP answer was received from the server at URL: it refused the connection, the name
// did not resolve, or (Timeout) it did not answer within the per-request timeout.
type ConnectionError struct {
	URL     string
	Timeout bool
	Err     error
}

func (e *ConnectionError) Error() string {
	if e.Timeout {
		return fmt.Sprintf("powercontext at %s did not answer in time: %v", e.URL, e.Err)
	}
	return fmt.Sprintf("cannot reach powercontext at %s: %v", e.URL, e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// OperationPendingError means the operation was still not terminal when the operation deadline passed. The
// operation keeps running on the server; follow it with GetOperation.
type OperationPendingError struct {
	OperationID string
	// Status is the last status seen (queued, running, retry_wait or cancelling).
	Status string
	// Deadline is the operation deadline that passed.
	Deadline time.Duration
	// LastErr is the error of the last poll when it failed transiently (nil otherwise).
	LastErr error
}

func (e *OperationPendingError) Error() string {
	return fmt.Sprintf("operation %s is still %s after %s", e.OperationID, orUnknown(e.Status), e.Deadline)
}

// OperationFailedError means the operation failed or was cancelled, or (Blocked) the flush was refused because a
// failed operation holds the scope's next window until it is retried or cancelled.
type OperationFailedError struct {
	OperationID string
	// Code is the operation's error code, or "cancelled" for a cancelled operation.
	Code string
	// Category is the operation's error category when known.
	Category string
	// Status is the operation's status (failed or cancelled).
	Status  string
	Blocked bool
}

func (e *OperationFailedError) Error() string {
	if e.Blocked {
		return fmt.Sprintf("blocked by failed operation %s (%s): retry or cancel it", e.OperationID, e.Code)
	}
	if e.Code == StatusCancelled {
		return fmt.Sprintf("operation %s was cancelled", e.OperationID)
	}
	return fmt.Sprintf("operation %s failed: %s", e.OperationID, e.Code)
}

func orUnknown(s string) string {
	if s == "" {
		return "pending"
	}
	return s
}
