package handlers

import (
	"container/list"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/internal/connstate"
)

// DefaultUnauthenticatedPerMinute is the default budget of requests without valid credentials per client address
// (docs/security.md#rate-limits).
const DefaultUnauthenticatedPerMinute = 60

// maxTrackedAddresses bounds the per-address limiter's memory; beyond it the least recently seen address is
// forgotten (and starts again with a full budget).
const maxTrackedAddresses = 10000

const ctxPrincipal = "powercontext.principal"

// principalOf returns the authenticated principal of c (nil without auth or before the middleware ran).
func principalOf(c echo.Context) *auth.Principal {
	p, _ := c.Get(ctxPrincipal).(*auth.Principal)
	return p
}

// adminOnly are the routes an agent may not use: operator actions and runtime membership. The dashboard checks
// the role itself (it renders a page rather than a JSON error).
var adminOnly = map[string]bool{
	"/v1/operations/:operation_id/cancel": true,
	"/v1/operations/:operation_id/retry":  true,
	"/v1/operations/:operation_id/skip":   true,
	"/v1/runtime/members":                 true,
	// Skill targets: registering agent installations, revoking them and publishing to them is an operator's.
	"/v1/skill-targets":                                     true,
	"/v1/skill-targets/:target_id/revoke":                   true,
	"/v1/skill-targets/:target_id/publications":             true,
	"/v1/skill-targets/:target_id/publications/:skill_name": true,
}

// authMiddleware resolves the request's principal (docs/security.md#principals). Health and metrics need nothing.
// A request with a valid token (bearer header) or dashboard session (its cookie) carries its principal on. A request
// with a wrong bearer token, or with no credential at all, first spends its client address's budget (429 once
// spent) and is then refused with 401 — except on the dashboard's paths, which answer anonymous requests themselves
// (the sign-in page for pages, the assets that page needs); there a stale cookie counts as none. A sign-in form post
// with a configured token spends nothing: only failed sign-ins count against the address.
func (s *server) authMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		path := req.URL.Path
		if s.principals.Empty() || exempt(path) || strings.HasPrefix(path, agentPrefix) {
			return next(c) // an agent's skill routes check its skill credential themselves (docs/skills.md)
		}
		tok, isBearer := bearer(req.Header.Get(echo.HeaderAuthorization))
		p, valid := s.principals.Authenticate(tok)
		if !isBearer && s.d.UISessions != nil {
			// Browsers: the dashboard's session, on /ui pages and on its same-origin fetches (X-PowerContext-UI: 1);
			// one primary-key read (docs/security.md#dashboard-sessions).
			sp, err := s.d.UISessions.Principal(req)
			if err != nil {
				return err
			}
			if p, valid = sp, sp != nil; !valid {
				req = req.WithContext(s.d.UISessions.Checked(req.Context()))
				c.SetRequest(req)
			}
		}
		if valid {
			connstate.MarkAuthenticated(req.Context()) // the connection keeps the ordinary idle timeout
			c.Set(ctxPrincipal, p)
			c.SetRequest(req.WithContext(auth.WithPrincipal(req.Context(), p)))
			return next(c)
		}
		if !isBearer && s.loginWithValidToken(req) {
			// A sign-in with a configured token is checked before the budget, so it succeeds during a flood of
			// wrong tokens from the same address or NAT; only failed sign-ins spend it. The dashboard checks the
			// token (and the role) again and opens the session.
			return next(c)
		}
		if err := s.spendUnauthenticated(c); err != nil {
			return err
		}
		if !isBearer && dashboardPath(path) {
			return next(c)
		}
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="powercontext"`)
		return apiErr(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid bearer token", nil)
	}
}

// loginWithValidToken reports whether req is a sign-in form post (POST /ui/login) whose token is configured. The
// check is one SHA-256 of the submitted token and a map lookup by digest (no comparison of token bytes, so its
// time says nothing about a stored token) and no database work; the body is already capped by bodyLimitMiddleware.
func (s *server) loginWithValidToken(req *http.Request) bool {
	if req.Method != http.MethodPost || req.URL.Path != DashboardLoginPath {
		return false
	}
	if req.ParseForm() != nil {
		return false
	}
	_, ok := s.principals.Authenticate(req.PostForm.Get("token"))
	return ok
}

// roleMiddleware refuses an agent on the admin-only routes with 403 forbidden.
func (s *server) roleMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := principalOf(c); p != nil && !p.Admin() && adminOnly[c.Path()] {
			return apiErr(http.StatusForbidden, CodeForbidden, "this route needs a token with the admin role",
				map[string]any{"required_role": auth.RoleAdmin})
		}
		return next(c)
	}
}

// scopeQueryMiddleware refuses a scope_id query parameter outside the principal's allowed prefixes with 403 (the
// body's scope_id is checked by decodeJSON).
func (s *server) scopeQueryMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := principalOf(c); p.Restricted() {
			for _, scope := range c.QueryParams()["scope_id"] {
				if err := scopeAllowed(p, scope); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

// scopeAllowed is 403 forbidden naming the scope when p may not use it.
func scopeAllowed(p *auth.Principal, scope string) error {
	if p.AllowsScope(scope) {
		return nil
	}
	return apiErr(http.StatusForbidden, CodeForbidden, "this token may not use that scope",
		map[string]any{"scope_id": scope})
}

func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}

// clientAddress is the request's client: the direct peer, or, from a trusted proxy, the nearest untrusted hop of
// X-Forwarded-For (echo's IPExtractor, configured in New). IPv6 clients are grouped by /64, which one host
// usually controls whole.
func clientAddress(c echo.Context) string {
	ip := c.RealIP()
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

// ipExtractor believes X-Forwarded-For only from the trusted proxies (never loopback, link-local or private
// networks by default).
func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		_, n, err := net.ParseCIDR(p.Masked().String())
		if err == nil {
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// spendUnauthenticated takes one request from the client address's budget: 429 rate_limited once it is spent.
func (s *server) spendUnauthenticated(c echo.Context) error {
	if s.anon == nil {
		return nil
	}
	if wait, ok := s.anon.allow(clientAddress(c)); !ok {
		return rateLimited(c, wait)
	}
	return nil
}

func rateLimited(c echo.Context, wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
	return apiErr(http.StatusTooManyRequests, CodeRateLimited, "rate limit exceeded; retry later",
		map[string]any{"retry_after_seconds": secs})
}

// addressLimiter is a token bucket per client address, in this process's memory: requests without valid
// credentials never reach the database's limiter, so a flood of them costs no database work (with N API replicas an
// address gets N budgets). It remembers at most maxTrackedAddresses addresses.
type addressLimiter struct {
	perSecond rate.Limit
	burst     int

	mu     sync.Mutex
	order  *list.List // of *addressBucket, most recent first
	byAddr map[string]*list.Element
}

type addressBucket struct {
	addr string
	lim  *rate.Limiter
}

func newAddressLimiter(perMinute int) *addressLimiter {
	return &addressLimiter{perSecond: rate.Limit(float64(perMinute) / 60), burst: perMinute, order: list.New(),
		byAddr: map[string]*list.Element{}}
}

// allow spends one request of addr; when none is left it returns how long until one is.
func (l *addressLimiter) allow(addr string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.byAddr[addr]
	if ok {
		l.order.MoveToFront(el)
	} else {
		el = l.order.PushFront(&addressBucket{addr: addr, lim: rate.NewLimiter(l.perSecond, l.burst)})
		l.byAddr[addr] = el
		for l.order.Len() > maxTrackedAddresses {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.byAddr, old.Value.(*addressBucket).addr)
		}
	}
	lim := el.Value.(*addressBucket).lim
	now := time.Now() // clock:process golang.org/x/time/rate measures the time between its own readings
	if lim.AllowN(now, 1) {
		return 0, true
	}
	missing := 1 - lim.TokensAt(now)
	return time.Duration(missing / float64(l.perSecond) * float64(time.Second)), false
}
