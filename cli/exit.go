package cli

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/powercontext/powercontext/client"
)

// Exit codes of the powercontext command line, for scripts (README.md#exit-codes). The client commands use them
// all; the server commands use 0, 1 and 2.
const (
	ExitOK          = 0 // success
	ExitFailed      = 1 // any other failure: a 5xx answer, an operation that failed or was cancelled, a local error
	ExitUsage       = 2 // a bad command line or configuration, refused before any request was sent
	ExitUnreachable = 3 // no answer from the server: refused, unresolvable, or --timeout passed
	ExitClientError = 4 // the server answered 4xx: bad token, not found, conflict, validation, rate limit
	ExitPending     = 5 // the operation was still running at --deadline; it continues on the server
)

// Failure is a client command's error as the user reads it: Msg is the explained one-line message; Err the error of
// the client underneath (its type decides the exit code and the JSON error object).
type Failure struct {
	Msg string
	Err error
}

func (e *Failure) Error() string { return e.Msg }
func (e *Failure) Unwrap() error { return e.Err }

// ExitCode is the exit code of a client command's error (see the constants); nil is ExitOK. A *UsageError is
// ExitUsage; errors of other origins are ExitFailed.
func ExitCode(err error) int {
	var usage *UsageError
	var pending *client.OperationPendingError
	var conn *client.ConnectionError
	var api *client.APIError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &pending):
		return ExitPending
	case errors.As(err, &conn):
		return ExitUnreachable
	case errors.As(err, &api) && api.Status >= 400 && api.Status < 500:
		return ExitClientError
	default:
		return ExitFailed
	}
}

// ErrorObject is the JSON error a command run with --output json writes on standard error, one line:
// {"error": {...}}. Code is the server's error code for an answer, else one of usage_error, unreachable, timeout,
// operation_pending, operation_failed, operation_cancelled, operation_blocked or failed.
type ErrorObject struct {
	ExitCode    int            `json:"exit_code"`
	Code        string         `json:"code"`
	Message     string         `json:"message"`
	Status      int            `json:"status,omitempty"`
	RequestID   string         `json:"request_id,omitempty"`
	OperationID string         `json:"operation_id,omitempty"`
	Details     map[string]any `json:"details,omitempty"`
}

// WriteJSONError writes err as {"error": ErrorObject} on one line; exit is the exit code the command returns.
func WriteJSONError(w io.Writer, err error, exit int) error {
	o := ErrorObject{ExitCode: exit, Code: "failed", Message: strings.Join(strings.Fields(err.Error()), " ")}
	var pending *client.OperationPendingError
	var failed *client.OperationFailedError
	var conn *client.ConnectionError
	var api *client.APIError
	switch {
	case exit == ExitUsage:
		o.Code = "usage_error"
	case errors.As(err, &pending):
		o.Code, o.OperationID = "operation_pending", pending.OperationID
		o.Details = map[string]any{"status": pendingStatus(pending.Status), "deadline_seconds": pending.Deadline.Seconds()}
	case errors.As(err, &failed):
		o.OperationID = failed.OperationID
		switch {
		case failed.Blocked:
			o.Code = "operation_blocked"
		case failed.Code == client.StatusCancelled:
			o.Code = "operation_cancelled"
		default:
			o.Code = "operation_failed"
		}
		if failed.Code != client.StatusCancelled {
			o.Details = map[string]any{"category": failed.Category, "code": failed.Code}
		}
	case errors.As(err, &conn):
		o.Code = "unreachable"
		if conn.Timeout {
			o.Code = "timeout"
		}
		o.Details = map[string]any{"server": conn.URL}
	case errors.As(err, &api):
		o.Code, o.Status, o.RequestID, o.Details = api.Code, api.Status, api.RequestID, api.Details
		if id, ok := api.Details["operation_id"].(string); ok {
			o.OperationID = id
		}
	}
	b, mErr := json.Marshal(map[string]ErrorObject{"error": o})
	if mErr != nil {
		return mErr
	}
	return writeJSONLine(w, b)
}

// JSONOutput reports whether a command line asks for --output json (-o json, -ojson, --output=json): its errors
// are then JSON objects. It reads the arguments themselves so that a command line cobra refused still qualifies.
func JSONOutput(args []string) bool {
	last := ""
	for i, a := range args {
		switch {
		case a == "--":
			return last == outputJSON
		case a == "-o" || a == "--output":
			if i+1 < len(args) {
				last = args[i+1]
			}
		case strings.HasPrefix(a, "--output="):
			last = strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			last = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		}
	}
	return last == outputJSON
}
