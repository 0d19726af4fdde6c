package handlers

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/ui"
)

// dashboardEnv is the API with the real dashboard and the test principals.
func dashboardEnv(t *testing.T) *env {
	t.Helper()
	set := principals(t)
	e := newEnv(t, func(d *Deps) { d.Principals = set })
	sessions := ui.NewSessions(ui.SessionConfig{Store: e.store, Principals: set})
	e.deps.UISessions = sessions
	e.deps.UI = ui.New(ui.Deps{Ledger: e.ledger, Store: e.store, Logger: zerolog.Nop(), Principals: set, Sessions: sessions})
	e.e = New(e.deps)
	return e
}

// replica is one API process's HTTP stack with the real dashboard over its own connection pool to store's
// database: two replicas share nothing but the database.
func replica(t *testing.T, store db.Store, set *auth.Set, mutate ...func(*Deps)) http.Handler {
	t.Helper()
	s := enginetest.OpenStore(t, enginetest.URLOf(t, store))
	ledger := coordinator.NewLedger(s)
	sessions := ui.NewSessions(ui.SessionConfig{Store: s, Principals: set})
	d := Deps{Ledger: ledger, Store: s, Principals: set, Role: "api", Logger: zerolog.Nop(), UISessions: sessions,
		UI: ui.New(ui.Deps{Ledger: ledger, Store: s, Logger: zerolog.Nop(), Principals: set, Sessions: sessions})}
	for _, m := range mutate {
		m(&d)
	}
	return New(d)
}

func sessionCookie(t *testing.T, r resp) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == ui.CookieName && c.MaxAge > 0 {
			require.NotContains(t, c.Value, adminTok, "the raw token is never in the cookie")
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("no session cookie in %v", r.Header)
	return ""
}

var formCT = hdr{"Content-Type": "application/x-www-form-urlencoded"}

// TestDashboardSessionAcrossReplicas: a sign-in on one API replica is accepted by another on the same database
// (pages, and the dashboard's own fetches to the Operation API with X-PowerContext-UI: 1 — not without it); a
// logout on the second ends it on both. On every engine.
func TestDashboardSessionAcrossReplicas(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, store db.Store) {
		set := principals(t)
		one, two := replica(t, store, set), replica(t, store, set)
		r := exchange(t, one, http.MethodPost, "/ui/login", strings.NewReader("token="+adminTok), formCT)
		require.Equal(t, http.StatusSeeOther, r.Code, "%s", r.Body)
		cookie := hdr{"Cookie": sessionCookie(t, r)}
		for _, h := range []http.Handler{one, two} {
			require.Equal(t, http.StatusOK, exchange(t, h, http.MethodGet, "/ui/operations", nil, cookie).Code)
			require.Equal(t, http.StatusOK, exchange(t, h, http.MethodGet, "/v1/operations", nil,
				hdr{"Cookie": cookie["Cookie"], ui.HeaderName: "1"}).Code, "the dashboard's fetch")
			exchange(t, h, http.MethodGet, "/v1/operations", nil, cookie).requireError(t, http.StatusUnauthorized, CodeUnauthorized)
		}
		r = exchange(t, two, http.MethodPost, "/ui/logout", nil, cookie)
		require.Equal(t, http.StatusSeeOther, r.Code)
		for _, h := range []http.Handler{one, two} {
			r := exchange(t, h, http.MethodGet, "/ui/operations", nil, cookie)
			require.Equal(t, http.StatusUnauthorized, r.Code, "the old cookie after logout")
			require.Contains(t, string(r.Body), `action="/ui/login"`)
			exchange(t, h, http.MethodGet, "/v1/operations", nil, hdr{"Cookie": cookie["Cookie"], ui.HeaderName: "1"}).
				requireError(t, http.StatusUnauthorized, CodeUnauthorized)
		}
	})
}

// TestDashboardLoginIsRateLimitedPerAddress: wrong tokens posted to the sign-in form open no session and spend the
// client address's budget of unauthenticated requests (429 once spent); another address is unaffected.
func TestDashboardLoginIsRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := dashboardEnv(t)
	e.deps.UnauthenticatedPerMinute = 3
	e.e = New(e.deps)
	wrong := strings.NewReader("token=" + strings.Repeat("w", 32))
	var codes []int
	for range 5 {
		wrong.Reset("token=" + strings.Repeat("w", 32))
		r := e.do(http.MethodPost, "/ui/login", wrong, from("198.51.100.9:1", formCT))
		require.Empty(t, r.Header.Values("Set-Cookie"), "no session for a wrong token")
		codes = append(codes, r.Code)
	}
	require.Equal(t, []int{401, 401, 401, 429, 429}, codes)
	r := e.do(http.MethodPost, "/ui/login", strings.NewReader("token="+adminTok), from("203.0.113.9:1", formCT))
	require.Equal(t, http.StatusSeeOther, r.Code)
	sessionCookie(t, r)
}

// TestDashboardLoginDuringFloodFromSameAddress: the token is checked before the address's budget, so a correct
// admin token signs in from an address whose budget a flood of wrong tokens spent (a NAT shared with an attacker),
// and it spends nothing itself; wrong tokens from that address stay refused with 429.
func TestDashboardLoginDuringFloodFromSameAddress(t *testing.T) {
	t.Parallel()
	e := dashboardEnv(t)
	e.deps.UnauthenticatedPerMinute = 2
	e.e = New(e.deps)
	const addr = "198.51.100.10:1"
	post := func(tok string) resp {
		return e.do(http.MethodPost, "/ui/login", strings.NewReader("token="+tok), from(addr, formCT))
	}
	wrong := strings.Repeat("w", 32)
	require.Equal(t, http.StatusUnauthorized, post(wrong).Code)
	require.Equal(t, http.StatusUnauthorized, post(wrong).Code)
	post(wrong).requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	for range 3 {
		r := post(adminTok)
		require.Equal(t, http.StatusSeeOther, r.Code, "a correct token during the flood: %s", r.Body)
		sessionCookie(t, r)
	}
	post(wrong).requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	// A valid agent token is a credential too: refused by role (403), not by the budget.
	require.Equal(t, http.StatusForbidden, post(agentTok).Code)
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

// countingStore counts the session reads of a real store.
type countingStore struct {
	db.Store
	reads *atomic.Int64
}

func (c countingStore) UISessionGetUnexpired(ctx context.Context, digest string) (db.UISession, error) {
	c.reads.Add(1)
	return c.Store.UISessionGetUnexpired(ctx, digest)
}

// TestDashboardSessionCostsOneRead: a dashboard request reads its session once — signed in (the middleware's read
// serves the page) — and a request without an authentic cookie (missing, malformed, or well-formed with a wrong MAC
// tag) not at all.
func TestDashboardSessionCostsOneRead(t *testing.T) {
	t.Parallel()
	e := dashboardEnv(t)
	reads := &atomic.Int64{}
	counted := countingStore{Store: e.store, reads: reads}
	set := e.deps.Principals
	sessions := ui.NewSessions(ui.SessionConfig{Store: counted, Principals: set})
	e.deps.UISessions = sessions
	e.deps.UI = ui.New(ui.Deps{Ledger: e.ledger, Store: counted, Logger: zerolog.Nop(), Principals: set, Sessions: sessions})
	h := New(e.deps)
	r := exchange(t, h, http.MethodPost, "/ui/login", strings.NewReader("token="+adminTok), formCT)
	require.Equal(t, http.StatusSeeOther, r.Code)
	cookie := hdr{"Cookie": sessionCookie(t, r)}
	for _, tc := range []struct {
		h     hdr
		code  int
		reads int64
	}{
		{cookie, http.StatusOK, 1},
		// Well-formed but made up (the session id's length, or id + tag length): refused by the MAC tag before any
		// read, so a flood of random cookies costs no database work.
		{hdr{"Cookie": ui.CookieName + "=" + strings.Repeat("B", 43)}, http.StatusUnauthorized, 0},
		{hdr{"Cookie": ui.CookieName + "=" + strings.Repeat("B", 64)}, http.StatusUnauthorized, 0},
		{hdr{"Cookie": ui.CookieName + "=short"}, http.StatusUnauthorized, 0},
		{nil, http.StatusUnauthorized, 0},
	} {
		reads.Store(0)
		require.Equal(t, tc.code, exchange(t, h, http.MethodGet, "/ui/operations", nil, tc.h).Code, "%v", tc.h)
		require.Equal(t, tc.reads, reads.Load(), "%v", tc.h)
	}
}
