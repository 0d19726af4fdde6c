package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/sources"
)

// Error codes of the API (bounded).
const (
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeInvalidJSON          = "invalid_json"
	CodeInvalidRequest       = "invalid_request"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeHostNotAllowed       = "host_not_allowed"
	CodeRateLimited          = "rate_limited"
	CodeTooManyImports       = "too_many_imports"
	CodeRuntimeNotReady      = "runtime_not_ready"
	CodeInternal             = "internal_error"
	CodeOperationNotFound    = "operation_not_found"
	CodeOperationConflict    = "operation_conflict"
	CodeOperationBlocked     = "operation_blocked"
	CodeOperationFailed      = "operation_failed"
	CodeOperationCancelled   = "operation_cancelled"
	CodeCandidateNotFound    = "candidate_not_found"
	CodeCandidateConflict    = "candidate_conflict"
	CodeSourceNotFound       = "source_not_found"
	CodeScopeErasing         = "scope_erasing"
	CodeRevisionNotFound     = "revision_not_found"
	CodeSkillConflict        = "skill_conflict"
)

// APIError is an error with its HTTP status and public body. Handlers return it; errorHandler writes it.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// errorBody is the wire shape of every error.
type errorBody struct {
	Error errorPayload `json:"error"`
}

type errorPayload struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func apiErr(status int, code, message string, details map[string]any) *APIError {
	return &APIError{Status: status, Code: code, Message: message, Details: details}
}

func invalidField(field, message string) *APIError {
	return apiErr(http.StatusUnprocessableEntity, CodeInvalidRequest, message, map[string]any{"field": field})
}

func invalidJSON(message string) *APIError {
	return apiErr(http.StatusBadRequest, CodeInvalidJSON, message, nil)
}

func operationNotFound() *APIError {
	return apiErr(http.StatusNotFound, CodeOperationNotFound, "operation not found", nil)
}

func candidateNotFound() *APIError {
	return apiErr(http.StatusNotFound, CodeCandidateNotFound, "experience candidate not found", nil)
}

func notReady(what string) *APIError {
	return apiErr(http.StatusServiceUnavailable, CodeRuntimeNotReady, what+" is not available on this process", nil)
}

// operationError maps a ledger error on an operation route: not found → operation_not_found, a state conflict →
// operation_conflict; anything else is passed through to the generic mapping.
func operationError(err error) error {
	if errors.Is(err, coordinator.ErrNotFound) || errors.Is(err, db.ErrNotFound) {
		return operationNotFound()
	}
	if sc, ok := coordinator.IsStateConflict(err); ok {
		return apiErr(http.StatusConflict, CodeOperationConflict, "the operation is in another state or version",
			map[string]any{"operation_id": sc.WorkID, "status": sc.Status, "actual_version": sc.ActualVersion})
	}
	return err
}

// toAPIError maps any error to its public form. ok is false for unexpected errors (500).
func toAPIError(err error) (*APIError, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae, true
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return apiErr(http.StatusNotFound, CodeNotFound, "no such route", nil), true
		case http.StatusMethodNotAllowed:
			return apiErr(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method not allowed on this route", nil), true
		case http.StatusRequestEntityTooLarge:
			return apiErr(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body is too large", nil), true
		case http.StatusUnsupportedMediaType:
			return apiErr(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "request body must be application/json", nil), true
		case http.StatusUnauthorized:
			return apiErr(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid bearer token", nil), true
		case http.StatusBadRequest:
			return invalidJSON("malformed request"), true
		}
		if he.Code >= 400 && he.Code < 500 {
			return apiErr(he.Code, CodeInvalidRequest, http.StatusText(he.Code), nil), true
		}
		return nil, false
	}
	var ve *sources.ValidationError
	if errors.As(err, &ve) {
		return invalidField(ve.Field, ve.Message), true
	}
	if sc, ok := coordinator.IsStateConflict(err); ok {
		return apiErr(http.StatusConflict, CodeOperationConflict, "the operation is in another state or version",
			map[string]any{"operation_id": sc.WorkID, "status": sc.Status, "actual_version": sc.ActualVersion}), true
	}
	if errors.Is(err, lifecycle.ErrSourceNotFound) {
		return apiErr(http.StatusNotFound, CodeSourceNotFound, "no such source in that scope", nil), true
	}
	if errors.Is(err, memory.ErrRevisionNotFound) {
		return apiErr(http.StatusNotFound, CodeRevisionNotFound, "no such memory revision in that scope (never committed, or purged by retention)", nil), true
	}
	if errors.Is(err, sources.ErrScopeErasing) {
		return apiErr(http.StatusConflict, CodeScopeErasing, "the scope is being erased; retry once its scope_erase operation has finished", nil), true
	}
	var cc *experience.ErrCandidateConflict
	if errors.As(err, &cc) {
		return apiErr(http.StatusConflict, CodeCandidateConflict, "the candidate is in another state or version",
			map[string]any{"status": cc.Status, "actual_version": cc.ActualVersion}), true
	}
	if errors.Is(err, db.ErrNotFound) {
		return apiErr(http.StatusNotFound, CodeNotFound, "not found", nil), true
	}
	if errors.Is(err, coordinator.ErrInvalidArgument) {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidRequest, "the request was refused as invalid", nil), true
	}
	if errors.Is(err, db.ErrUnavailable) {
		return apiErr(http.StatusServiceUnavailable, CodeRuntimeNotReady, "the database is unavailable; retry later",
			map[string]any{"dependency": "database"}), true
	}
	return nil, false
}

// errorHandler is the server's one error mapper (echo.HTTPErrorHandler).
func errorHandler(s *server) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		// The client went away (it cancelled or timed out): nothing failed on our side and nobody reads an answer.
		// 499 ("client closed request", as nginx logs it) keeps such requests out of the 5xx error counts.
		if c.Request().Context().Err() != nil && errors.Is(err, context.Canceled) {
			c.Response().WriteHeader(statusClientClosed)
			return
		}
		ae, ok := toAPIError(err)
		if !ok {
			// Error text can carry driver messages with row values: log a bounded class only (docs/architecture.md#privacy).
			s.log.Error().Str("error_class", errorClass(err)).Str("request_id", requestID(c)).Str("route", s.routeOf(c)).
				Str("method", c.Request().Method).Msg("request failed")
			ae = apiErr(http.StatusInternalServerError, CodeInternal, "internal server error", nil)
		}
		if ae.Status == http.StatusMethodNotAllowed {
			if allow, ok := c.Get(echo.ContextKeyHeaderAllow).(string); ok && allow != "" {
				c.Response().Header().Set(echo.HeaderAllow, allow)
			}
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(ae.Status)
			return
		}
		_ = c.JSON(ae.Status, errorBody{Error: errorPayload{Code: ae.Code, Message: ae.Message, Details: ae.Details}})
	}
}

// statusClientClosed is recorded for requests whose client disconnected before the answer.
const statusClientClosed = 499

// errorClass names an unexpected error without its text.
func errorClass(err error) string {
	switch {
	case errors.Is(err, db.ErrDeadlock):
		return "deadlock"
	case errors.Is(err, db.ErrConflict):
		return "conflict"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, context.Canceled):
		return "canceled"
	default:
		return "unexpected"
	}
}
