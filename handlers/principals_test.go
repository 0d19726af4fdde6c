package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/sources"
)

var (
	adminTok = strings.Repeat("A", 32)
	agentTok = strings.Repeat("g", 32) // role agent, scopes team-a/
	otherTok = strings.Repeat("o", 32) // role agent, every scope, its own rate limit
)

func principals(t testing.TB) *auth.Set {
	t.Helper()
	specs, err := auth.ParseTokens([]byte(`[
		{"name":"ops","role":"admin","token":"` + adminTok + `"},
		{"name":"team-a","role":"agent","token":"` + agentTok + `","scopes":["team-a/"]},
		{"name":"other","role":"agent","token":"` + otherTok + `","rate_limit":{"requests":2,"window_seconds":3600}}]`))
	require.NoError(t, err)
	s, err := auth.NewSet(specs)
	require.NoError(t, err)
	return s
}

func authz(tok string) hdr { return hdr{"Authorization": "Bearer " + tok} }

func from(addr string, h hdr) hdr {
	out := hdr{"RemoteAddr": addr}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// withJSON adds the JSON content type to h.
func withJSON(h hdr) hdr {
	out := hdr{"Content-Type": "application/json"}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func (e *env) captureDirect(scope, content string) {
	e.t.Helper()
	_, err := e.deps.Journal.Capture(context.Background(), sources.CaptureRequest{ScopeID: scope, Content: content})
	require.NoError(e.t, err)
}

// TestUnauthenticatedRequestsCannotLockOutClients: anonymous requests (the login page) and wrong-token requests are
// limited per client address before authentication, and never count against a principal's budget. Before, ~2
// requests/s to /ui/login from anyone kept every real client at 429, and wrong tokens were not counted at all.
func TestUnauthenticatedRequestsCannotLockOutClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.Principals = principals(t)
		d.UI = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		d.RateLimit = RateLimit{Enabled: true, Requests: 5, Window: time.Hour}
		d.UnauthenticatedPerMinute = 10
	})
	e.deps.RateLimiter = coordinator.NewRateLimiter(e.store)
	e.e = New(e.deps)
	attacker := "198.51.100.66:5000"
	var limited int
	for range 30 {
		r := serve(e.e, http.MethodGet, "/ui/login", nil, from(attacker, nil))
		if r.Code == http.StatusTooManyRequests {
			limited++
		}
	}
	require.Equal(t, 20, limited, "the anonymous flood is limited per address after its 10-request budget")
	// Wrong tokens count against the same per-address budget (now exhausted): 429, not an endless 401.
	r := e.do(http.MethodGet, "/v1/memory?scope_id=team-a/x", nil, from(attacker, authz(strings.Repeat("x", 32))))
	r.requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	require.NotEmpty(t, r.Header.Get("Retry-After"))

	// A real client is untouched: its own principal budget of 5.
	for i := range 5 {
		r := e.do(http.MethodGet, "/v1/memory?scope_id=team-a/x", nil, from("192.0.2.1:1", authz(adminTok)))
		require.Equal(t, http.StatusOK, r.Code, "request %d: %s", i, r.Body)
	}
	e.do(http.MethodGet, "/v1/memory?scope_id=team-a/x", nil, from("192.0.2.1:1", authz(adminTok))).
		requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	// Even from the attacker's address a valid token is served (its budget is the principal's, not the address's).
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/memory?scope_id=team-a/x", nil, from(attacker, authz(agentTok))).Code)

	// Another address still has its own anonymous budget.
	require.Equal(t, http.StatusOK, serve(e.e, http.MethodGet, "/ui/login", nil, from("203.0.113.5:1", nil)).Code)
	// Wrong tokens from a fresh address: 401 until its budget is spent, then 429.
	var codes []int
	for range 12 {
		codes = append(codes, e.do(http.MethodGet, "/v1/sources?scope_id=s", nil, from("203.0.113.7:1", authz("wrong"))).Code)
	}
	require.Equal(t, http.StatusUnauthorized, codes[0])
	require.Equal(t, http.StatusTooManyRequests, codes[11])
}

// TestPerPrincipalRateLimits: each principal has its own window; a principal's own limit applies even with the
// server-wide limit off.
func TestPerPrincipalRateLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.Principals = principals(t) })
	e.deps.RateLimiter = coordinator.NewRateLimiter(e.store)
	e.e = New(e.deps)
	for range 2 {
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/memory?scope_id=s", nil, authz(otherTok)).Code)
	}
	e.do(http.MethodGet, "/v1/memory?scope_id=s", nil, authz(otherTok)).requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	for range 5 { // the server-wide limit is off: the admin is not limited
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/memory?scope_id=s", nil, authz(adminTok)).Code)
	}
}

// TestRolesAndScopes: agents use Sources, Memory, Experience and MCP within their scope prefixes; operator actions
// and runtime membership need an admin; a request naming a scope outside the prefixes is 403 with the scope; lists
// show only permitted scopes; an id-addressed record of another scope is not found.
func TestRolesAndScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.Principals = principals(t) })
	agent, admin := authz(agentTok), authz(adminTok)
	e.captureDirect("team-a/x", "The API lives in Go.")
	e.captureDirect("team-b/y", "Secret plans of team b.")
	opA, opB := e.enqueueMemory("team-a/x"), e.enqueueMemory("team-b/y")

	// Role: operator actions and membership are admin-only.
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/operations/" + opA.WorkID + "/cancel", `{"expected_version":1}`},
		{http.MethodPost, "/v1/operations/" + opA.WorkID + "/retry", `{"expected_version":1}`},
		{http.MethodGet, "/v1/runtime/members", ""},
	} {
		var body *strings.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		var r resp
		if body != nil {
			r = e.do(tc.method, tc.path, body, withJSON(agent))
		} else {
			r = e.do(tc.method, tc.path, nil, agent)
		}
		d := r.requireError(t, http.StatusForbidden, CodeForbidden)
		require.Equal(t, "admin", d["required_role"], tc.path)
	}
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/runtime/members", nil, admin).Code)

	// Scope: a request naming another scope is 403 with the scope; the same request in scope works.
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/sources", `{"scope_id":"team-b/y","content":"x"}`},
		{http.MethodPost, "/v1/memory/flush", `{"scope_id":"team-b/y"}`},
		{http.MethodGet, "/v1/sources?scope_id=team-b/y", ""},
		{http.MethodGet, "/v1/memory?scope_id=team-b/y", ""},
		{http.MethodGet, "/v1/memory/search?scope_id=team-b/y&q=plans", ""},
		{http.MethodGet, "/v1/experience/candidates?scope_id=team-b/y", ""},
		{http.MethodGet, "/v1/operations?scope_id=team-b/y", ""},
		{http.MethodGet, "/v1/operations?scope_id=team-ab", ""},
	} {
		var r resp
		if tc.body != "" {
			r = e.do(tc.method, tc.path, strings.NewReader(tc.body), withJSON(agent))
		} else {
			r = e.do(tc.method, tc.path, nil, agent)
		}
		d := r.requireError(t, http.StatusForbidden, CodeForbidden)
		require.Contains(t, []any{"team-b/y", "team-ab"}, d["scope_id"], tc.path)
		require.NotContains(t, string(r.Body), "Secret")
	}
	r := e.do(http.MethodPost, "/v1/sources", strings.NewReader(`{"scope_id":"team-a/z","content":"ok"}`), withJSON(agent))
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/sources?scope_id=team-a/x", nil, agent).Code)
	// The admin is not restricted.
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/sources?scope_id=team-b/y", nil, admin).Code)

	// Lists show only permitted scopes.
	m := e.do(http.MethodGet, "/v1/operations", nil, agent).json(t)
	var scopes []string
	for _, it := range m["items"].([]any) {
		scopes = append(scopes, it.(map[string]any)["scope_id"].(string))
	}
	require.Equal(t, []string{"team-a/x"}, scopes)
	require.Len(t, e.do(http.MethodGet, "/v1/operations", nil, admin).json(t)["items"].([]any), 2)

	// Id-addressed records of another scope are not found; in scope they are.
	e.do(http.MethodGet, "/v1/operations/"+opB.WorkID, nil, agent).requireError(t, http.StatusNotFound, CodeOperationNotFound)
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/operations/"+opA.WorkID, nil, agent).Code)

	// Experience: a candidate of another scope cannot be reviewed.
	_, err := e.deps.Journal.Capture(context.Background(), sources.CaptureRequest{ScopeID: "team-b/y",
		Content: "Rotate keys monthly.", Metadata: []byte(`{"kind":"task-outcome"}`)})
	require.NoError(t, err)
	e.enqueueExperience("team-b/y")
	e.step(nil)
	items := e.do(http.MethodGet, "/v1/experience/candidates?scope_id=team-b/y", nil, admin).json(t)["items"].([]any)
	require.NotEmpty(t, items)
	cand := items[0].(map[string]any)["candidate_id"].(string)
	e.do(http.MethodPost, "/v1/experience/candidates/"+cand+"/approve", strings.NewReader(`{"expected_version":1}`), withJSON(agent)).
		requireError(t, http.StatusNotFound, CodeCandidateNotFound)
	r = e.do(http.MethodPost, "/v1/experience/candidates/"+cand+"/approve", strings.NewReader(`{"expected_version":1}`), withJSON(admin))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
}

// TestRestrictedReviewOfAMalformedCandidateID: a restricted token reviewing a candidate id that is not a uuid gets
// the candidate's 404 on every engine (PostgreSQL's uuid column would refuse the lookup itself).
func TestRestrictedReviewOfAMalformedCandidateID(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, store db.Store) {
		e := newEnvOn(t, store, func(d *Deps) { d.Principals = principals(t) })
		for _, action := range []string{"approve", "reject"} {
			e.do(http.MethodPost, "/v1/experience/candidates/not-a-uuid/"+action, strings.NewReader(`{"expected_version":1}`),
				withJSON(authz(agentTok))).requireError(t, http.StatusNotFound, CodeCandidateNotFound)
		}
	})
}

// TestTrustedProxyClientAddress: X-Forwarded-For names the client only when the direct peer is a trusted proxy;
// otherwise a client could pick any address (and any budget) it likes.
func TestTrustedProxyClientAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.Principals = principals(t)
		d.UI = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		d.UnauthenticatedPerMinute = 3
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	login := func(remote, xff string) int {
		h := hdr{"RemoteAddr": remote}
		if xff != "" {
			h["X-Forwarded-For"] = xff
		}
		return serve(e.e, http.MethodGet, "/ui/login", nil, h).Code
	}
	// Through the proxy, two clients have two budgets.
	for i := range 3 {
		require.Equal(t, http.StatusOK, login("10.0.0.5:1", "203.0.113.1"), "client 1 request %d", i)
	}
	require.Equal(t, http.StatusTooManyRequests, login("10.0.0.5:1", "203.0.113.1"))
	require.Equal(t, http.StatusOK, login("10.0.0.5:1", "198.51.100.1, 10.0.0.9"), "rightmost untrusted hop is the client")
	// A direct client cannot escape its budget by sending X-Forwarded-For.
	for i := range 3 {
		require.Equal(t, http.StatusOK, login("192.0.2.77:1", fmt.Sprintf("203.0.113.%d", 100+i)))
	}
	require.Equal(t, http.StatusTooManyRequests, login("192.0.2.77:1", "203.0.113.200"))
}
