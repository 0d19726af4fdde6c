package ui

import (
	"context"
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
)

// DefaultSessionTTL is a dashboard sign-in's lifetime when none is configured (POWERCONTEXT_UI_SESSION_TTL_SECONDS).
const DefaultSessionTTL = 12 * time.Hour

// sessionIDBytes is the length of a session id: 256 random bits (crypto/rand), base64url in the cookie.
const sessionIDBytes = 32

// Sessions are the dashboard's sign-ins (docs/security.md#dashboard-sessions). Signing in exchanges a token for a
// random session id; the browser keeps the id in the cookie pc_ui_session, the database keeps only its SHA-256 in
// pc_ui_sessions with the principal's name, a binding to the token (auth.Principal.Binding) and an expiry on the
// database clock. Every API replica on the same database therefore accepts every session, and a logout on one ends
// it on all. A session is refused once it expired, was deleted, or its principal's token is no longer configured
// (removed or replaced: the binding no longer matches). Resolving one costs one primary-key read.
type Sessions struct {
	store      db.Store
	principals *auth.Set
	ttl        time.Duration
	proxies    []netip.Prefix
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
}

// NewSessions returns the session store over c.Store.
func NewSessions(c SessionConfig) *Sessions {
	if c.TTL <= 0 {
		c.TTL = DefaultSessionTTL
	}
	return &Sessions{store: c.Store, principals: c.Principals, ttl: c.TTL, proxies: c.TrustedProxies}
}

// sessionDigest is the stored key of a session id: SHA-256, hex.
func sessionDigest(id []byte) string {
	sum := sha256.Sum256(id)
	return hex.EncodeToString(sum[:])
}

// parseSessionID decodes a cookie value; false unless it is exactly a base64url-encoded 32-byte id.
func parseSessionID(v string) ([]byte, bool) {
	if len(v) != base64.RawURLEncoding.EncodedLen(sessionIDBytes) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	return b, err == nil && len(b) == sessionIDBytes
}

// sessionCookie returns the request's well-formed session id, if any.
func sessionCookie(r *http.Request) ([]byte, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil, false
	}
	return parseSessionID(c.Value)
}

// create opens a session for p and returns the cookie value (the session id, base64url).
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
	return base64.RawURLEncoding.EncodeToString(id), nil
}

type checkedKey struct{}

// Checked marks ctx as a request whose session cookie the server's auth middleware already resolved without
// finding a valid session, so the dashboard does not read the same row again: one lookup per request.
func Checked(ctx context.Context) context.Context { return context.WithValue(ctx, checkedKey{}, true) }

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
	id, ok := sessionCookie(r)
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
	id, ok := sessionCookie(r)
	if !ok || s == nil || s.store == nil {
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
