package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoSniffOnEveryResponse: success, error, unmatched, exempt and delegated responses all carry nosniff.
func TestNoSniffOnEveryResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.MCP = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte("up 1\n"))
		})
	})
	for _, r := range []resp{
		e.get("/health/live"), e.get("/health/ready"), e.get("/metrics"), e.get("/nope"),
		e.get("/v1/memory?scope_id=s"), e.get("/v1/sources?limit=x"), e.post("/v1/sources", `{`),
		e.do(http.MethodDelete, "/v1/sources", nil, nil), e.post("/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
	} {
		require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), "status %d: %s", r.Code, r.Body)
	}
}

// TestHeadOnHealth: HEAD works wherever GET does on the health endpoints (load balancers probe with HEAD).
func TestHeadOnHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.Readiness = func(context.Context) (string, map[string]any) { return "ready", nil }
	})
	for _, p := range []string{"/health/live", "/health/ready"} {
		r := e.do(http.MethodHead, p, nil, nil)
		require.Equal(t, http.StatusOK, r.Code, p)
		require.Empty(t, r.Body, p)
	}
	down := newEnv(t, func(d *Deps) {
		d.Readiness = func(context.Context) (string, map[string]any) { return "not_ready", nil }
	})
	r := down.do(http.MethodHead, "/health/ready", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, r.Code)
	require.Empty(t, r.Body)
}

// TestMalformedQueryIsRejected: a query string that does not parse is 422 with the offending parameter, never
// silently shortened (an operations list filtered by scope must not fall back to every scope).
func TestMalformedQueryIsRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("a", "x", nil)
	for _, tc := range []struct{ target, field string }{
		{"/v1/operations?scope_id=a%ZZ", "scope_id"},
		{"/v1/operations?scope_id=a;kind=memory_flush", "scope_id"},
		{"/v1/operations?kind=memory_flush&scope_id=a%", "scope_id"},
		{"/v1/sources?scope_id=a&limit=5;x", "limit"},
		{"/v1/sources?%ZZ=1&scope_id=a", "query"},
		{"/v1/memory?scope_id=a&%=b", "query"},
		{"/v1/experience/candidates?scope_id=a%2", "scope_id"},
	} {
		d := e.get(tc.target).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.target)
	}
	// Well-formed queries still work, including empty pairs and escaped separators.
	require.Equal(t, http.StatusOK, e.get("/v1/sources?scope_id=a&&limit=5").Code)
	require.Equal(t, http.StatusOK, e.get("/v1/sources?scope_id=a%3Bb").Code)
	require.Equal(t, http.StatusOK, e.get("/v1/operations?").Code)
}

// TestDuplicateJSONKeysAreRejected: a body with a repeated member name is ambiguous (parsers disagree on which wins),
// so it is refused as invalid JSON naming the key, at any depth.
func TestDuplicateJSONKeysAreRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ path, body, field string }{
		{"/v1/sources", `{"scope_id":"a","content":"x","scope_id":"b"}`, "scope_id"},
		{"/v1/sources", `{"scope_id":"a","content":"x","metadata":{"k":1,"j":{"z":1,"z":2}}}`, "metadata.j.z"},
		{"/v1/sources", `{"scope_id":"a","content":"x","metadata":{"l":[{"k":1},{"k":1,"k":2}]}}`, "metadata.l[1].k"},
		{"/v1/memory/flush", `{"scope_id":"a","scope_id":"a"}`, "scope_id"},
		{"/v1/operations/00000000-0000-4000-8000-000000000000/cancel", `{"expected_version":1,"expected_version":2}`, "expected_version"},
	} {
		d := e.post(tc.path, tc.body).requireError(t, http.StatusBadRequest, CodeInvalidJSON)
		require.Equal(t, tc.field, d["field"], tc.body)
	}
	// The same key in sibling objects is not a duplicate.
	r := e.post("/v1/sources", `{"scope_id":"a","content":"x","metadata":{"a":{"k":1},"b":{"k":1}}}`)
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
}

// TestLoopbackHostOnlyWithoutToken: without any token the server trusts only loopback callers, so a page on
// another origin that rebinds its DNS name to 127.0.0.1 must not reach it (its requests carry its own Host).
func TestLoopbackHostOnlyWithoutToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.MCP = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
		d.UI = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	})
	for _, host := range []string{"evil.example", "evil.example:8080", "10.0.0.1:8080", "127.0.0.1.evil.example",
		"localhost.evil.example", "[2001:db8::1]:8080", ""} {
		for _, p := range []string{"/v1/sources?scope_id=s", "/ui", "/mcp"} {
			r := e.do(http.MethodGet, p, nil, hdr{"Host": host})
			r.requireError(t, http.StatusForbidden, CodeHostNotAllowed)
		}
	}
	for _, host := range []string{"localhost", "localhost:8080", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:8080",
		"127.1.2.3:80", "[::1]:8080", "[::1]"} {
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/sources?scope_id=s", nil, hdr{"Host": host}).Code, host)
	}
	// Probes keep working from anywhere.
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/health/live", nil, hdr{"Host": "10.0.0.1:8080"}).Code)

	// With a token, any Host is accepted (the token is the protection).
	tok := newEnv(t, func(d *Deps) { d.AuthToken = strings.Repeat("t", 32) })
	r := tok.do(http.MethodGet, "/v1/sources?scope_id=s", nil, hdr{"Host": "api.example.com", "Authorization": "Bearer " + strings.Repeat("t", 32)})
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
}

// TestJSONMemberNamesMatchExactly: member names are case-sensitive and a name the route does not take is refused,
// so {"scope_id":"p","Scope_ID":"q"} is never stored in scope q (encoding/json alone matches names
// case-insensitively and the last one wins) while a gateway reads scope p.
func TestJSONMemberNamesMatchExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ path, body, field string }{
		{"/v1/sources", `{"scope_id":"p","Scope_ID":"q","content":"x"}`, "Scope_ID"},
		{"/v1/sources", `{"SCOPE_ID":"q","content":"x"}`, "SCOPE_ID"},
		{"/v1/sources", `{"scope_id":"p","content":"x","extra":1}`, "extra"},
		{"/v1/sources", `{"scope_id":"p","Content":"x"}`, "Content"},
		{"/v1/memory/flush", `{"scope_id":"p","Scope_id":"q"}`, "Scope_id"},
		{"/v1/operations/00000000-0000-4000-8000-000000000000/cancel", `{"Expected_Version":1}`, "Expected_Version"},
	} {
		d := e.post(tc.path, tc.body).requireError(t, http.StatusBadRequest, CodeInvalidJSON)
		require.Equal(t, tc.field, d["field"], tc.body)
	}
	for _, scope := range []string{"p", "q"} {
		r := e.get("/v1/sources?scope_id=" + scope)
		require.Equal(t, http.StatusOK, r.Code)
		require.NotContains(t, string(r.Body), `"source_id"`, "nothing was stored in scope %s", scope)
	}
	// Free-form metadata keeps any member names; exact names are accepted.
	r := e.post("/v1/sources", `{"scope_id":"p","content":"x","metadata":{"Scope_ID":"q","Extra":1}}`)
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
}
