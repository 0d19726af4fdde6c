/*
Package client is the Go client of the powercontext HTTP API (docs/api.md).

Every method is one or more independent HTTP requests; the client keeps no session, so any API replica may answer
any request. Errors answered by the server decode into *APIError (status, bounded code, message, details and the
X-Request-ID of the answer); a server that cannot be reached yields *ConnectionError.

FlushMemory keeps the old synchronous meaning of a memory flush on top of the asynchronous Operation API: it
submits POST /v1/memory/flush with "Prefer: respond-async"; a 200 answer is returned as is, and a 202 answer is
followed by polling GET /v1/operations/{id} every poll interval — each poll a new request — until the operation
is terminal or the operation deadline (default 30 s, counted from the submission) passes:

	succeeded            → FlushResult (status "processed")
	failed / cancelled   → *OperationFailedError{OperationID, Code} (Code is the error code, or "cancelled")
	409 operation_blocked → *OperationFailedError with Blocked set
	deadline passed      → *OperationPendingError{OperationID}; the operation keeps running on the server

Transient answers while polling (unreachable replica, 429, 5xx) are retried until the deadline.
*/
package client
