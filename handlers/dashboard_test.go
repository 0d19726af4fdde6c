package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/ui"
)

// dashboardEnv is the API with the real dashboard and the test principals.
func dashboardEnv(t *testing.T) *env {
	t.Helper()
	set := principals(t)
	e := newEnv(t, func(d *Deps) { d.Principals = set })
	e.deps.UI = ui.New(ui.Deps{Ledger: e.ledger, Store: e.store, Logger: zerolog.Nop(), Principals: set})
	e.e = New(e.deps)
	return e
}

// TestDashboardBeforeSignIn: without credentials /ui shows the sign-in page (HTML, not a JSON 401) and the
// page's stylesheet and script load; the data pages stay closed.
func TestDashboardBeforeSignIn(t *testing.T) {
	t.Parallel()
	e := dashboardEnv(t)
	for _, p := range []string{"/ui", "/ui/operations", "/ui/blocked"} {
		r := e.get(p)
		require.Equal(t, http.StatusUnauthorized, r.Code, p)
		require.Contains(t, r.Header.Get("Content-Type"), "text/html", p)
		require.Contains(t, string(r.Body), `<form method="post" action="/ui/login"`, p)
		require.NotContains(t, string(r.Body), "Blocked lanes</h1>", p)
	}
	for _, p := range []string{"/ui/static/app.css", "/ui/static/app.js"} {
		r := e.get(p)
		require.Equal(t, http.StatusOK, r.Code, p)
	}
	// A stale cookie is no credential: the sign-in page again, not a JSON error.
	r := e.do(http.MethodGet, "/ui/operations", nil, hdr{"Cookie": ui.CookieName + "=" + strings.Repeat("x", 43)})
	require.Equal(t, http.StatusUnauthorized, r.Code)
	require.Contains(t, string(r.Body), `action="/ui/login"`)
	// The API routes still answer JSON 401.
	e.get("/v1/operations").requireError(t, http.StatusUnauthorized, CodeUnauthorized)
}

// TestDashboardNeedsAnUnrestrictedAdmin: an agent token, or an admin limited to some scopes, cannot use the
// dashboard (it shows every scope's operations).
func TestDashboardNeedsAnUnrestrictedAdmin(t *testing.T) {
	t.Parallel()
	e := dashboardEnv(t)
	r := e.do(http.MethodGet, "/ui/operations", nil, authz(agentTok))
	require.Equal(t, http.StatusForbidden, r.Code)
	require.Contains(t, string(r.Body), "admin role")
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/ui/operations", nil, authz(adminTok)).Code)
}
