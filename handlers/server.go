package handlers

import (
	"cmp"
	"context"
	"crypto/sha256"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/api"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/serverkey"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

// Defaults applied by New to zero Deps values.
const (
	DefaultBodyLimit        int64 = 1 << 20 // 1 MiB; Source content is at most 64 KiB
	DefaultFlushWait              = 10 * time.Second
	DefaultFlushMaxWait           = 30 * time.Second
	DefaultRateLimitRequest       = 120
	DefaultRateLimitWindow        = 60 * time.Second
	// RetryAfterSeconds is the Retry-After of a 202 flush answer.
	RetryAfterSeconds = 2
)

// RateLimit configures the optional shared per-principal limit (docs/protocol.md#rate-limit).
type RateLimit struct {
	Enabled  bool
	Requests int           // per window; default 120
	Window   time.Duration // default 60 s
}

// Deps is everything the HTTP layer calls. The app wires it per role; nil domain dependencies on an api role make
// their routes answer 503 runtime_not_ready.
type Deps struct {
	Journal    *sources.Journal
	Flusher    *memory.Flusher
	Memory     memory.Reader
	Experience experience.Reviews
	Incubator  *experience.Incubator // POST /v1/experience/incubate; nil answers 503
	Ledger     *coordinator.Ledger
	// Forgetter and Eraser serve DELETE /v1/sources/{id} and DELETE /v1/scopes/{id}
	// (docs/protocol.md#forgetting-and-erasing).
	Forgetter *lifecycle.Forgetter
	Eraser    *lifecycle.Eraser
	// Portability serves GET /v1/scopes/{id}/export and POST /v1/scopes/{id}/import (docs/portability.md).
	Portability *portability.Service
	// Skills serves /v1/skills, /v1/skill-targets and the agents' /v1/skill-agent/ (docs/skills.md); nil answers 503.
	Skills *skills.Service
	// Store serves GET /v1/runtime/members (live membership on database time).
	Store db.Store

	// AuthToken, when non-empty, is required as "Authorization: Bearer <token>" on every route except /health/*
	// and /metrics.
	AuthToken string
	// Principals are the named tokens with roles and allowed scopes (docs/security.md#principals); when set, they
	// replace AuthToken. Empty (and no AuthToken): no auth, loopback Host names only.
	Principals  *auth.Set
	RateLimiter *coordinator.RateLimiter
	RateLimit   RateLimit
	// UnauthenticatedPerMinute limits requests without valid credentials (anonymous pages, wrong tokens) per client
	// address, in memory, before authentication (default DefaultUnauthenticatedPerMinute; < 0 turns it off).
	UnauthenticatedPerMinute int
	// TrustedProxies are the peers whose X-Forwarded-For and X-Forwarded-Proto are believed (default none).
	TrustedProxies []netip.Prefix
	// ServerKeys derive the operation cursors' key (POWERCONTEXT_SERVER_SECRET; nil: from the principals' (or
	// AuthToken's) admin tokens, else random per process).
	ServerKeys *serverkey.Keys

	FlushDefaultWait time.Duration // default 10 s
	FlushMaxWait     time.Duration // default 30 s

	// Readiness reports the process readiness for GET /health/ready: 200 for ready|degraded, 503 for
	// not_ready|misconfigured. When nil, readiness is computed from Store (database reachable and
	// coordinator.MembershipCheck).
	Readiness func(ctx context.Context) (status string, checks map[string]any)

	// Role is all, api, scheduler or worker ("" means all). scheduler and worker serve only /health/live,
	// /health/ready and /metrics.
	Role   string
	Logger zerolog.Logger
	// BodyLimit caps request bodies (default 1 MiB).
	BodyLimit int64
	// ImportBodyLimit caps the body of POST /v1/scopes/{id}/import instead (default DefaultImportBodyLimit).
	ImportBodyLimit int64
	// ImportsAtOnce bounds the imports this process runs at once (default DefaultImportsAtOnce); another is 429
	// too_many_imports before its body is read.
	ImportsAtOnce int
	// MaxListBytes caps the encoded items of one list page (default 1 MiB); a page that would exceed it ends early
	// and its cursor continues after the last item it holds. One item larger than the cap still comes alone.
	MaxListBytes int

	// Metrics, when non-nil, serves GET /metrics (Prometheus text); otherwise /metrics is 404. It is called at most
	// once per MetricsCacheInterval (default DefaultMetricsCacheInterval; < 0 calls it on every request); the
	// requests in between get the same snapshot.
	Metrics              http.Handler
	MetricsCacheInterval time.Duration
	// MetricsToken, when set, is required on /metrics as "Authorization: Bearer <token>" (no principal token
	// replaces it).
	MetricsToken string
	// ProbesPerMinute limits /metrics and /health/ready per client address, in memory (default
	// DefaultProbesPerMinute; < 0 turns it off). Loopback clients are exempt.
	ProbesPerMinute int
	// MCP, when non-nil, is mounted at /mcp (all methods, roles all and api) behind auth, rate limit and body limit.
	MCP http.Handler
	// UISessions are the dashboard's sign-ins (ui.NewSessions, the same value as the dashboard's Deps.Sessions):
	// the auth middleware accepts a valid session cookie on /ui paths and on the dashboard's fetches. nil: none.
	UISessions DashboardSessions
	// UI, when non-nil, is the operations dashboard (ui.New), mounted at /ui and /ui/* (roles all and api) behind
	// auth, rate limit and body limit.
	UI http.Handler
	// ObserveRequest, when non-nil, is called once per request with bounded labels (route template or
	// "unmatched", method, status) for the HTTP request metric.
	ObserveRequest func(route, method string, status int, latency time.Duration)
}

// DashboardSessions is what the auth middleware uses of the dashboard's sign-ins. It is declared here, and app/
// hands in ui's implementation, so that this package does not import the dashboard (the dashboard sits on top of
// the HTTP edge, not below it).
type DashboardSessions interface {
	// Principal resolves the request's session: nil without error when it has none that is valid.
	Principal(r *http.Request) (*auth.Principal, error)
	// Checked marks ctx as resolved without a valid session, so the dashboard does not read the same row again.
	Checked(ctx context.Context) context.Context
}

// Where Deps.UI is mounted and its sign-in form (ui.Prefix and ui.LoginPath; app's tests check they agree).
const (
	DashboardPrefix    = "/ui"
	DashboardLoginPath = DashboardPrefix + "/login"
)

// dashboardPath reports whether path is the dashboard's: it checks its own credentials (a page without them
// redirects to the sign-in form), so the auth middleware lets it through.
func dashboardPath(path string) bool {
	return path == DashboardPrefix || strings.HasPrefix(path, DashboardPrefix+"/")
}

type server struct {
	d           Deps
	log         zerolog.Logger
	routes      map[string]bool
	principals  *auth.Set
	anon        *addressLimiter
	probes      *addressLimiter
	metricsSnap *metricsCache
	// metricsDigest is the SHA-256 of Deps.MetricsToken (nil: /metrics needs no token).
	metricsDigest []byte
	limiter       *coordinator.RateLimiter
	rateEnabled   bool
	rateRequests  int
	rateWindow    time.Duration
	bodyLimit     int64
	importLimit   int64
	imports       chan struct{} // one token per import running (ImportsAtOnce)
	maxListBytes  int
	opCursors     opCursors
	defaultWait   time.Duration
	maxWait       time.Duration
	observe       func(route, method string, status int, latency time.Duration)
}

// New builds the HTTP server for d.Role.
func New(d Deps) *echo.Echo {
	s := &server{d: d, log: d.Logger.With().Str("component", "http").Logger(), routes: map[string]bool{},
		bodyLimit: d.BodyLimit, defaultWait: d.FlushDefaultWait, maxWait: d.FlushMaxWait, observe: d.ObserveRequest}
	if s.bodyLimit <= 0 {
		s.bodyLimit = DefaultBodyLimit
	}
	if s.importLimit = d.ImportBodyLimit; s.importLimit <= 0 {
		s.importLimit = DefaultImportBodyLimit
	}
	s.imports = make(chan struct{}, cmp.Or(max(d.ImportsAtOnce, 0), DefaultImportsAtOnce))
	if s.maxListBytes = d.MaxListBytes; s.maxListBytes <= 0 {
		s.maxListBytes = DefaultMaxListBytes
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultFlushMaxWait
	}
	if s.defaultWait <= 0 {
		s.defaultWait = DefaultFlushWait
	}
	s.defaultWait = min(s.defaultWait, s.maxWait)
	s.principals = d.Principals
	if s.principals.Empty() {
		s.principals = auth.AdminToken(d.AuthToken)
	}
	keys := d.ServerKeys
	if keys == nil { // as the application derives them without a server secret: replicas alike agree
		keys = serverkey.New(s.principals.AdminSecret())
	}
	s.opCursors = newOpCursors(keys)
	switch n := d.UnauthenticatedPerMinute; {
	case n == 0:
		s.anon = newAddressLimiter(DefaultUnauthenticatedPerMinute)
	case n > 0:
		s.anon = newAddressLimiter(n)
	}
	switch n := d.ProbesPerMinute; {
	case n == 0:
		s.probes = newAddressLimiter(DefaultProbesPerMinute)
	case n > 0:
		s.probes = newAddressLimiter(n)
	}
	if d.Metrics != nil {
		s.metricsSnap = &metricsCache{h: d.Metrics, interval: d.MetricsCacheInterval}
		if s.metricsSnap.interval == 0 {
			s.metricsSnap.interval = DefaultMetricsCacheInterval
		}
	}
	if d.MetricsToken != "" {
		sum := sha256.Sum256([]byte(d.MetricsToken))
		s.metricsDigest = sum[:]
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = ipExtractor(d.TrustedProxies)
	e.HTTPErrorHandler = errorHandler(s)

	e.Use(s.requestIDMiddleware, s.headersMiddleware, s.logMiddleware, s.recoverMiddleware)
	if s.principals.Empty() {
		e.Use(s.hostMiddleware)
	}
	s.limiter = d.RateLimiter
	s.rateEnabled = d.RateLimit.Enabled
	if s.rateRequests, s.rateWindow = d.RateLimit.Requests, d.RateLimit.Window; s.rateRequests <= 0 {
		s.rateRequests = DefaultRateLimitRequest
	}
	if s.rateWindow <= 0 {
		s.rateWindow = DefaultRateLimitWindow
	}
	e.Use(s.bodyLimitMiddleware, s.authMiddleware, s.roleMiddleware, s.rateLimitMiddleware, s.strictQueryMiddleware,
		s.scopeQueryMiddleware)

	s.add(e, http.MethodGet, "/health/live", s.live)
	s.add(e, http.MethodHead, "/health/live", s.live)
	s.add(e, http.MethodGet, "/health/ready", s.ready)
	s.add(e, http.MethodHead, "/health/ready", s.ready)
	s.add(e, http.MethodGet, "/metrics", s.metrics)
	if !servesAPI(d.Role) {
		return e
	}
	s.add(e, http.MethodPost, "/v1/sources", s.captureSource)
	s.add(e, http.MethodGet, "/v1/sources", s.listSources)
	s.add(e, http.MethodPost, "/v1/memory/flush", s.flushMemory)
	s.add(e, http.MethodGet, "/v1/memory", s.getMemory)
	s.add(e, http.MethodGet, "/v1/memory/search", s.searchMemory)
	s.add(e, http.MethodGet, "/v1/memory/revisions", s.listMemoryRevisions)
	s.add(e, http.MethodGet, "/v1/memory/diff", s.diffMemory)
	s.add(e, http.MethodGet, "/v1/context", s.getContext)
	s.add(e, http.MethodPost, "/v1/experience/incubate", s.incubateExperience)
	s.add(e, http.MethodGet, "/v1/experience/candidates", s.listCandidates)
	s.add(e, http.MethodPost, "/v1/experience/candidates/:candidate_id/approve", s.approveCandidate)
	s.add(e, http.MethodPost, "/v1/experience/candidates/:candidate_id/reject", s.rejectCandidate)
	s.add(e, http.MethodGet, "/v1/operations", s.listOperations)
	s.add(e, http.MethodGet, "/v1/operations/:operation_id", s.getOperation)
	s.add(e, http.MethodPost, "/v1/operations/:operation_id/cancel", s.cancelOperation)
	s.add(e, http.MethodPost, "/v1/operations/:operation_id/retry", s.retryOperation)
	s.addLifecycle(e)
	s.addPortability(e)
	s.addSkills(e)
	s.add(e, http.MethodGet, "/v1/runtime/members", s.listMembers)
	_, _ = api.JSON() // convert the embedded document once, at start
	s.add(e, http.MethodGet, "/openapi.json", s.openAPI)
	if d.UI != nil {
		e.Any("/ui", echo.WrapHandler(d.UI))
		e.Any("/ui/*", echo.WrapHandler(d.UI))
		s.routes["/ui"], s.routes["/ui/*"] = true, true
	}
	if d.MCP != nil {
		e.Any("/mcp", echo.WrapHandler(d.MCP))
		s.routes["/mcp"] = true
	}
	return e
}

func servesAPI(role string) bool { return role == "" || role == "all" || role == "api" }

func (s *server) add(e *echo.Echo, method, path string, h echo.HandlerFunc) {
	e.Add(method, path, h)
	s.routes[path] = true
}

// openAPI serves the OpenAPI 3.1 document of this build (api/openapi.yaml, converted to JSON once).
func (s *server) openAPI(c echo.Context) error {
	b, err := api.JSON()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}
