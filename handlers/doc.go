/*
Package handlers is the HTTP API (docs/api.md) on Echo v4. Handlers are thin: bind, validate, call the domain or
the ledger, map errors. Request and response bodies (DTOs) are declared in api/types, which the MCP tools share;
this package maps domain values into them. A new body goes there too, where a test compares it with its schema in
api/openapi.yaml. The dashboard (ui) sits above this package and is never imported by it: app/ hands its sessions
in as a DashboardSessions and mounts its handler as Deps.UI.

# Middleware, outermost first

  - request id: X-Request-ID is echoed when the client sent a sane token (1..128 of [A-Za-z0-9._:-]) and
    generated otherwise; every response carries it.
  - request log: one line per request with a constant message, the route template (never the raw path), method,
    status, latency and request id. Never bodies, query strings or scope ids.
  - panic recovery: a panic becomes 500 internal_error.
  - body limit: a declared or streamed body beyond Deps.BodyLimit is 413 payload_too_large.
  - bearer auth (when a token is configured; /health/* and /metrics are exempt), compared in constant time.
  - shared rate limit (optional) per principal: the token's hash, or the remote address; 429 with Retry-After.

# Errors

Every error body is {"error":{"code","message","details"}} from one mapper (errorHandler). Codes are bounded;
a 5xx never carries internal error text (it is logged with the request id instead).

# Kinds

The Operation API shows the kinds of internal/opkinds (shared with MCP and the dashboard): memory_flush, experience_incubation and, to admins only (or on a
server without principals), the system kind maintenance. Any other kind answers 404 operation_not_found and is never
listed.
*/
package handlers
