package ui_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/serverkey"
	"github.com/powercontext/powercontext/ui"
)

const (
	adminToken = "admin-token-0123456789abcdef0123456789"
	agentToken = "agent-token-0123456789abcdef0123456789"
)

func tokenSet(t testing.TB, adminTok string) *auth.Set {
	t.Helper()
	s, err := auth.NewSet([]auth.TokenSpec{{Name: "ops", Role: auth.RoleAdmin, Token: adminTok},
		{Name: "bot", Role: auth.RoleAgent, Token: agentToken}})
	require.NoError(t, err)
	return s
}

// sessionFixture is the dashboard over one store with a given token set; several share a store like API replicas
// share their database.
func sessionHandler(f *fixture, set *auth.Set, c ui.SessionConfig) http.Handler {
	c.Store, c.Principals = f.store, set
	return ui.New(ui.Deps{Ledger: f.ledger, Store: f.store, Logger: zerolog.Nop(), Principals: set,
		Sessions: ui.NewSessions(c)})
}

type exchange struct {
	method, target, form, remote string
	headers                      map[string]string
	cookie                       *http.Cookie
	tls                          bool
}

func serveUI(h http.Handler, x exchange) resp {
	var body io.Reader
	if x.form != "" {
		body = strings.NewReader(x.form)
	}
	req := httptest.NewRequest(x.method, x.target, body)
	if x.form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if x.remote != "" {
		req.RemoteAddr = x.remote
	}
	if x.tls {
		req.TLS = &tls.ConnectionState{}
	}
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	if x.cookie != nil {
		req.AddCookie(x.cookie)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

func sessionCookieOf(r resp) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == ui.CookieName {
			return c
		}
	}
	return nil
}

func login(h http.Handler, tok string) resp {
	return serveUI(h, exchange{method: http.MethodPost, target: "/ui/login", form: "token=" + url.QueryEscape(tok)})
}

// digestOf is the stored key of a cookie value: SHA-256 of the decoded session id (the value is the id followed
// by a 16-byte MAC tag).
func digestOf(t testing.TB, value string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(value)
	require.NoError(t, err)
	require.Len(t, b, 32+16, "a 256-bit session id and a 128-bit tag")
	sum := sha256.Sum256(b[:32])
	return hex.EncodeToString(sum[:])
}

// TestLoginCreatesSession: POST /ui/login with an admin token stores a session (its digest, never the id) and sets
// a cookie holding a random id, not the token; the pages accept it; a wrong or agent token opens none; a token in
// the URL is never used.
func TestLoginCreatesSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := sessionHandler(f, tokenSet(t, adminToken), ui.SessionConfig{TTL: 2 * time.Hour})

	r := serveUI(h, exchange{method: http.MethodGet, target: "/ui"})
	require.Equal(t, http.StatusUnauthorized, r.Code)
	require.Contains(t, r.Body, `<form method="post" action="/ui/login"`, "no cookie: the sign-in page, not JSON")
	r = serveUI(h, exchange{method: http.MethodGet, target: "/ui/login?token=" + adminToken})
	require.Equal(t, http.StatusOK, r.Code, "a GET never signs in")
	require.Nil(t, sessionCookieOf(r))
	require.Contains(t, r.Body, "not accepted in the address")

	for _, tok := range []string{"wrong-token-0123456789abcdef0123456789", ""} {
		r = login(h, tok)
		require.Contains(t, []int{http.StatusUnauthorized, http.StatusUnprocessableEntity}, r.Code, "token %q", tok)
		require.Nil(t, sessionCookieOf(r))
	}
	r = login(h, agentToken)
	require.Equal(t, http.StatusForbidden, r.Code)
	require.Nil(t, sessionCookieOf(r))

	r = login(h, adminToken)
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
	require.Equal(t, "/ui/", r.Header.Get("Location"))
	c := sessionCookieOf(r)
	require.NotNil(t, c)
	require.NotContains(t, c.Value, adminToken)
	require.NotContains(t, r.Header.Get("Set-Cookie"), adminToken, "the raw token is never in the cookie")
	require.Len(t, c.Value, 64)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.Equal(t, "/", c.Path)
	require.Equal(t, int((2 * time.Hour).Seconds()), c.MaxAge)
	require.False(t, c.Secure, "plain HTTP from an untrusted peer")

	row, err := f.store.UISessionGetUnexpired(context.Background(), digestOf(t, c.Value))
	require.NoError(t, err)
	require.Equal(t, "ops", row.PrincipalName)
	require.NotContains(t, row.SessionDigest+row.PrincipalBinding, c.Value)
	require.InDelta(t, (2 * time.Hour).Seconds(), row.ExpiresAt.Sub(row.CreatedAt).Seconds(), 0.001, "expiry on the database clock")

	for _, p := range []string{"/ui", "/ui/operations", "/ui/blocked"} {
		r = serveUI(h, exchange{method: http.MethodGet, target: p, cookie: c})
		require.Equal(t, http.StatusOK, r.Code, p)
		require.Contains(t, r.Body, `action="/ui/logout"`, "signed-in pages offer sign-out")
	}
	// A second sign-in is another session.
	c2 := sessionCookieOf(login(h, adminToken))
	require.NotEqual(t, c.Value, c2.Value)
	// A tampered id (same shape) is no session.
	tampered := &http.Cookie{Name: ui.CookieName, Value: strings.Repeat("A", 64)}
	require.Equal(t, http.StatusUnauthorized, serveUI(h, exchange{method: http.MethodGet, target: "/ui/blocked", cookie: tampered}).Code)
	// The raw token as a cookie value is no credential either.
	raw := &http.Cookie{Name: ui.CookieName, Value: adminToken}
	require.Equal(t, http.StatusUnauthorized, serveUI(h, exchange{method: http.MethodGet, target: "/ui/blocked", cookie: raw}).Code)
}

// TestSessionCookieSecure: Secure over native TLS and through a trusted proxy that says https; not over plain
// HTTP, nor when an untrusted peer claims X-Forwarded-Proto.
func TestSessionCookieSecure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := sessionHandler(f, tokenSet(t, adminToken), ui.SessionConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	form := "token=" + adminToken
	for _, tc := range []struct {
		name   string
		x      exchange
		secure bool
	}{
		{"plain", exchange{remote: "10.1.2.3:5000"}, false},
		{"native tls", exchange{tls: true, remote: "192.0.2.1:5000"}, true},
		{"trusted proxy https", exchange{remote: "10.1.2.3:5000", headers: map[string]string{"X-Forwarded-Proto": "https"}}, true},
		{"trusted proxy http", exchange{remote: "10.1.2.3:5000", headers: map[string]string{"X-Forwarded-Proto": "http"}}, false},
		{"untrusted peer claims https", exchange{remote: "192.0.2.1:5000", headers: map[string]string{"X-Forwarded-Proto": "https"}}, false},
	} {
		x := tc.x
		x.method, x.target, x.form = http.MethodPost, "/ui/login", form
		r := serveUI(h, x)
		require.Equal(t, http.StatusSeeOther, r.Code, tc.name)
		c := sessionCookieOf(r)
		require.NotNil(t, c, tc.name)
		require.Equal(t, tc.secure, c.Secure, tc.name)
		// The logout's clearing cookie follows the same rule.
		x.form, x.target, x.cookie = "", "/ui/logout", c
		out := sessionCookieOf(serveUI(h, x))
		require.NotNil(t, out, tc.name)
		require.Equal(t, tc.secure, out.Secure, tc.name)
		require.Equal(t, -1, out.MaxAge, tc.name)
	}
}

// TestSessionReplicasLogoutExpiryAndRevokedTokens: two dashboards on one database (two API replicas) accept each
// other's sessions; a logout on one is refused by both; a session expired on the database clock is refused; and a
// session whose token was removed from (or replaced in) the configuration is refused.
func TestSessionReplicasLogoutExpiryAndRevokedTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := tokenSet(t, adminToken)
	one := sessionHandler(f, set, ui.SessionConfig{})
	two := sessionHandler(f, set, ui.SessionConfig{})
	get := func(h http.Handler, c *http.Cookie) int {
		return serveUI(h, exchange{method: http.MethodGet, target: "/ui/operations", cookie: c}).Code
	}

	c := sessionCookieOf(login(one, adminToken))
	require.NotNil(t, c)
	require.Equal(t, http.StatusOK, get(one, c))
	require.Equal(t, http.StatusOK, get(two, c), "the other replica reads the same session")

	require.Equal(t, http.StatusNotFound, serveUI(one, exchange{method: http.MethodGet, target: "/ui/logout", cookie: c}).Code,
		"logout is POST only: a GET (a link, a prefetch) is just an unknown page")
	require.Equal(t, http.StatusOK, get(two, c))

	r := serveUI(two, exchange{method: http.MethodPost, target: "/ui/logout", cookie: c})
	require.Equal(t, http.StatusSeeOther, r.Code)
	require.Equal(t, "/ui/login", r.Header.Get("Location"))
	_, err := f.store.UISessionGetUnexpired(context.Background(), digestOf(t, c.Value))
	require.ErrorIs(t, err, db.ErrNotFound, "logout deletes the row")
	require.Equal(t, http.StatusUnauthorized, get(one, c), "the old cookie is refused after logout")
	require.Equal(t, http.StatusUnauthorized, get(two, c))

	// Expiry on the database clock: the same row shape, once with expires_at in the past, once in the future.
	p, ok := set.ByName("ops")
	require.True(t, ok)
	now, err := f.store.DBNow(context.Background())
	require.NoError(t, err)
	for _, tc := range []struct {
		expires time.Time
		code    int
	}{{now.Add(-time.Second), http.StatusUnauthorized}, {now.Add(time.Hour), http.StatusOK}} {
		id := make([]byte, 32)
		id[0] = byte(tc.code)
		sum := sha256.Sum256(id)
		require.NoError(t, f.store.UISessionInsert(context.Background(), db.UISession{SessionDigest: hex.EncodeToString(sum[:]),
			PrincipalName: p.Name, PrincipalBinding: p.Binding(), CreatedAt: now.Add(-time.Hour), ExpiresAt: tc.expires}))
		ck := &http.Cookie{Name: ui.CookieName, Value: ui.CookieValue(serverkey.New(set.AdminSecret()), id)}
		require.Equal(t, tc.code, get(one, ck), "expires %v (now %v)", tc.expires, now)
		require.Equal(t, tc.code, get(two, ck))
	}
	// A short lifetime runs out on the database clock.
	short := sessionHandler(f, set, ui.SessionConfig{TTL: 200 * time.Millisecond})
	sc := sessionCookieOf(login(short, adminToken))
	require.Equal(t, http.StatusOK, get(short, sc))
	require.Eventually(t, func() bool { return get(short, sc) == http.StatusUnauthorized }, 10*time.Second, 50*time.Millisecond)

	// The token is removed from the configuration, or replaced under the same name: its sessions end.
	live := sessionCookieOf(login(one, adminToken))
	require.Equal(t, http.StatusOK, get(two, live))
	removed, err := auth.NewSet([]auth.TokenSpec{{Name: "bot", Role: auth.RoleAgent, Token: agentToken}})
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, get(sessionHandler(f, removed, ui.SessionConfig{}), live), "token removed")
	replaced := tokenSet(t, "replaced-admin-token-0123456789abcdef")
	require.Equal(t, http.StatusUnauthorized, get(sessionHandler(f, replaced, ui.SessionConfig{}), live), "token replaced")
	require.Equal(t, http.StatusOK, get(two, live), "the unchanged configuration still accepts it")
}

// TestLoginRefusesCrossSiteForms: a sign-in or sign-out form posted from another site is refused (no session).
func TestLoginRefusesCrossSiteForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := sessionHandler(f, tokenSet(t, adminToken), ui.SessionConfig{})
	for _, hd := range []map[string]string{{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://other.example.com"}} {
		r := serveUI(h, exchange{method: http.MethodPost, target: "/ui/login", form: "token=" + adminToken, headers: hd})
		require.Equal(t, http.StatusForbidden, r.Code, "%v", hd)
		require.Nil(t, sessionCookieOf(r))
	}
	r := serveUI(h, exchange{method: http.MethodPost, target: "/ui/login", form: "token=" + adminToken,
		headers: map[string]string{"Origin": "http://example.com", "Sec-Fetch-Site": "same-origin"}})
	require.Equal(t, http.StatusSeeOther, r.Code, "httptest's Host is example.com: same origin")
	// A browser under Referrer-Policy no-referrer sends "Origin: null" for the dashboard's own form; Sec-Fetch-Site
	// decides (the browser test signs in exactly like this).
	r = serveUI(h, exchange{method: http.MethodPost, target: "/ui/login", form: "token=" + adminToken,
		headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}})
	require.Equal(t, http.StatusSeeOther, r.Code)
	c := sessionCookieOf(r)
	r = serveUI(h, exchange{method: http.MethodPost, target: "/ui/logout", cookie: c, headers: map[string]string{"Origin": "https://evil.example"}})
	require.Equal(t, http.StatusForbidden, r.Code)
	require.Equal(t, http.StatusOK, serveUI(h, exchange{method: http.MethodGet, target: "/ui", cookie: c}).Code, "a forced logout did not happen")
}

// TestLoginWithoutTokens: with no token configured the dashboard is open; the form exists and a post goes straight
// to the overview without a session.
func TestLoginWithoutTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.page("/ui", http.StatusOK)
	f.page("/ui/login", http.StatusOK)
	r := serveUI(f.h, exchange{method: http.MethodPost, target: "/ui/login", form: "token=abc"})
	require.Equal(t, http.StatusSeeOther, r.Code)
	require.Equal(t, "/ui/", r.Header.Get("Location"))
	require.Nil(t, sessionCookieOf(r))
}

// TestSessionCookieTag: the cookie carries the session id with an HMAC tag under a key derived from the server
// secret. A genuine id with a wrong tag, an id alone (the format before tags: sign in again), or a cookie made
// under another secret is refused; replicas sharing POWERCONTEXT_SERVER_SECRET accept each other's cookies.
func TestSessionCookieTag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := tokenSet(t, adminToken)
	secret := serverkey.New([]byte("a server secret of at least 32 characters"))
	one := sessionHandler(f, set, ui.SessionConfig{Keys: secret})
	two := sessionHandler(f, set, ui.SessionConfig{Keys: serverkey.New([]byte("a server secret of at least 32 characters"))})
	other := sessionHandler(f, set, ui.SessionConfig{Keys: serverkey.New([]byte("another secret, also 32 characters long"))})
	get := func(h http.Handler, value string) int {
		return serveUI(h, exchange{method: http.MethodGet, target: "/ui/operations",
			cookie: &http.Cookie{Name: ui.CookieName, Value: value}}).Code
	}
	c := sessionCookieOf(login(one, adminToken))
	require.NotNil(t, c)
	require.Equal(t, http.StatusOK, get(one, c.Value))
	require.Equal(t, http.StatusOK, get(two, c.Value), "same secret, same key")
	require.Equal(t, http.StatusUnauthorized, get(other, c.Value), "another secret")

	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	require.NoError(t, err)
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)-1] ^= 1
	require.Equal(t, http.StatusUnauthorized, get(one, base64.RawURLEncoding.EncodeToString(flipped)), "wrong tag")
	require.Equal(t, http.StatusUnauthorized, get(one, base64.RawURLEncoding.EncodeToString(b[:32])), "id without tag")
	require.Equal(t, http.StatusOK, get(one, ui.CookieValue(secret, b[:32])), "the tag is a function of the id and key")
}
