package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/internal/serverkey"
)

// DefaultSessionTTL is a dashboard sign-in's lifetime when none is configured (POWERCONTEXT_UI_SESSION_TTL_SECONDS).
const DefaultSessionTTL = 12 * time.Hour

// sessionIDBytes is the length of a session id: 256 random bits (crypto/rand).
const sessionIDBytes = 32

// sessionTagBytes is the length of the cookie's MAC tag: the first 128 bits of HMAC-SHA256 over the id. The cookie
// value is base64url(id || tag); a cookie whose tag does not verify is refused before any database read.
const sessionTagBytes = 16

// Sessions are the dashboard's sign-ins (docs/security.md#dashboard-sessions). Signing in exchanges a token for a
// random session id; the browser keeps the id in the cookie pc_ui_session, the database keeps only its SHA-256 in
// pc_ui_sessions with the principal's name, a binding to the token (auth.Principal.Binding) and an expiry on the
// database clock. Every API replica on the same database therefore accepts every session, and a logout on one ends
// it on all. A session is refused once it expired, was deleted, or its principal's token is no longer configured
// (removed or replaced: the binding no longer matches). The cookie carries the id with an HMAC tag under a key
// derived from the server secret, so a made-up cookie is refused at the cost of one HMAC; resolving a genuine one
// costs one primary-key read.
type Sessions struct {
	store      db.Store
	principals *auth.Set
	ttl        time.Duration
	proxies    []netip.Prefix
	macKey     []byte
}

// SessionConfig configures NewSessions.
type SessionConfig struct {
	Store      db.Store
	Principals *auth.Set
	// TTL is a session's lifetime (default DefaultSessionTTL).
	TTL time.Duration
	// TrustedProxies are the peers whose X-Forwarded-Proto is believed when deciding the cookie's Secure flag
	// (POWERCONTEXT_HTTP_TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// Keys derive the cookie's MAC key (POWERCONTEXT_SERVER_SECRET; default: from the admin tokens, else random
	// per process).
	Keys *serverkey.Keys
}

// NewSessions returns the session store over c.Store.
func NewSessions(c SessionConfig) *Sessions {
	if c.TTL <= 0 {
		c.TTL = DefaultSessionTTL
	}
	if c.Keys == nil {
		c.Keys = serverkey.New(c.Principals.AdminSecret())
	}
	return &Sessions{store: c.Store, principals: c.Principals, ttl: c.TTL, proxies: c.TrustedProxies,
		macKey: c.Keys.Derive(serverkey.PurposeSessionCookie, 32)}
}

// sessionDigest is the stored key of a session id: SHA-256, hex.
func sessionDigest(id []byte) string {
	sum := sha256.Sum256(id)
	return hex.EncodeToString(sum[:])
}

// tag is the MAC of a session id.
func (s *Sessions) tag(id []byte) []byte {
	m := hmac.New(sha256.New, s.macKey)
	m.Write([]byte("pc_ui_session:"))
	m.Write(id)
	return m.Sum(nil)[:sessionTagBytes]
}

// cookieValue is base64url(id || tag).
func (s *Sessions) cookieValue(id []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(append([]byte(nil), id...), s.tag(id)...))
}

// parseSessionID decodes a cookie value; false unless it is exactly base64url(32-byte id || 16-byte tag) and the
// tag verifies (compared in constant time). No database work.
func (s *Sessions) parseSessionID(v string) ([]byte, bool) {
	if len(v) != base64.RawURLEncoding.EncodedLen(sessionIDBytes+sessionTagBytes) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) != sessionIDBytes+sessionTagBytes {
		return nil, false
	}
	id, tag := b[:sessionIDBytes], b[sessionIDBytes:]
	return id, hmac.Equal(tag, s.tag(id))
}

// sessionCookie returns the request's authentic session id, if any.
func (s *Sessions) sessionCookie(r *http.Request) ([]byte, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil, false
	}
	return s.parseSessionID(c.Value)
}

// create opens a session for p and returns the cookie value (the session id and its tag, base64url).
func (s *Sessions) create(ctx context.Context, p *auth.Principal) (string, error) {
	id := make([]byte, sessionIDBytes)
	if _, err := rand.Read(id); err != nil {
		return "", err
	}
	now, err := s.store.DBNow(ctx)
	if err != nil {
		return "", err
	}
	err = s.store.UISessionInsert(ctx, db.UISession{SessionDigest: sessionDigest(id), PrincipalName: p.Name,
		PrincipalBinding: p.Binding(), CreatedAt: now, ExpiresAt: now.Add(s.ttl)})
	if err != nil {
		return "", err
	}
	return s.cookieValue(id), nil
}

type checkedKey struct{}

// Checked marks ctx as a request whose session cookie the server's auth middleware already resolved without
// finding a valid session, so the dashboard does not read the same row again: one lookup per request.
func Checked(ctx context.Context) context.Context { return context.WithValue(ctx, checkedKey{}, true) }

// Checked is the package's Checked, as a method so that Sessions satisfies handlers.DashboardSessions (the HTTP
// server reaches the dashboard's sessions through that interface and does not import this package).
func (*Sessions) Checked(ctx context.Context) context.Context { return Checked(ctx) }

// Principal resolves the request's dashboard session. It considers the cookie only on /ui paths and on requests
// carrying "X-PowerContext-UI: 1" (the dashboard's same-origin fetches; a cross-site page cannot add that header
// without a CORS preflight this server never grants). It returns nil without error when there is no such cookie,
// when it is malformed, unknown or expired, or when the principal's token is no longer configured; an error only
// when the database cannot be read.
func (s *Sessions) Principal(r *http.Request) (*auth.Principal, error) {
	if s == nil || s.store == nil || (!isUIPath(r.URL.Path) && r.Header.Get(HeaderName) != "1") {
		return nil, nil
	}
	if checked, _ := r.Context().Value(checkedKey{}).(bool); checked {
		return nil, nil
	}
	id, ok := s.sessionCookie(r)
	if !ok {
		return nil, nil
	}
	row, err := s.store.UISessionGetUnexpired(r.Context(), sessionDigest(id))
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, ok := s.principals.ByName(row.PrincipalName)
	if !ok || p.Binding() != row.PrincipalBinding {
		return nil, nil // the token was removed or replaced: its sessions end with it
	}
	return p, nil
}

// revoke deletes the request's session, if it carries one.
func (s *Sessions) revoke(r *http.Request) error {
	if s == nil || s.store == nil {
		return nil
	}
	id, ok := s.sessionCookie(r)
	if !ok {
		return nil
	}
	_, err := s.store.UISessionDelete(r.Context(), sessionDigest(id))
	return err
}

// secure reports whether the request reached the server over TLS: natively, or through a trusted proxy that says
// so in X-Forwarded-Proto.
func (s *Sessions) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if s == nil || len(s.proxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	peer = peer.Unmap()
	trusted := false
	for _, p := range s.proxies {
		if p.Contains(peer) {
			trusted = true
			break
		}
	}
	if !trusted {
		return false
	}
	for _, v := range r.Header.Values("X-Forwarded-Proto") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "https") {
				return true
			}
		}
	}
	return false
}

// setCookie writes the session cookie (value "" with maxAge < 0 clears it).
func (s *Sessions) setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, //nolint:gosec // Secure follows the request's transport
		SameSite: http.SameSiteStrictMode, Secure: s.secure(r)})
}
