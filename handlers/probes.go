package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Probe defaults (docs/security.md#limits).
const (
	// DefaultMetricsCacheInterval is how long one /metrics snapshot is served (POWERCONTEXT_METRICS_CACHE_SECONDS).
	DefaultMetricsCacheInterval = 5 * time.Second
	// DefaultProbesPerMinute is the per-address budget of /metrics and /health/ready
	// (POWERCONTEXT_HTTP_PROBES_PER_MINUTE).
	DefaultProbesPerMinute = 120
)

// spendProbe takes one request of the client address's probe budget (/metrics, /health/ready): 429 rate_limited
// once spent. Loopback clients are exempt, so a probe on the same machine (a sidecar, `server health`) always
// answers; with trusted proxies the client is the forwarded address, not the proxy.
func (s *server) spendProbe(c echo.Context) error {
	if s.probes == nil {
		return nil
	}
	if ip, err := netip.ParseAddr(c.RealIP()); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	if wait, ok := s.probes.allow(clientAddress(c)); !ok {
		return rateLimited(c, wait)
	}
	return nil
}

// metricsAuthorized checks the metrics token when one is configured: "Authorization: Bearer <token>", compared as
// SHA-256 digests in constant time.
func (s *server) metricsAuthorized(c echo.Context) error {
	if s.metricsDigest == nil {
		return nil
	}
	tok, _ := bearer(c.Request().Header.Get(echo.HeaderAuthorization))
	sum := sha256.Sum256([]byte(tok))
	if tok != "" && subtle.ConstantTimeCompare(sum[:], s.metricsDigest) == 1 {
		return nil
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="powercontext-metrics"`)
	return apiErr(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid metrics token", nil)
}

func (s *server) metrics(c echo.Context) error {
	if s.d.Metrics == nil {
		return echo.ErrNotFound
	}
	if err := s.spendProbe(c); err != nil {
		return err
	}
	if err := s.metricsAuthorized(c); err != nil {
		return err
	}
	snap := s.metricsSnap.get(c.Request().Context())
	h := c.Response().Header()
	if snap.contentType != "" {
		h.Set(echo.HeaderContentType, snap.contentType)
	}
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(snap.body)))
	c.Response().WriteHeader(snap.status)
	_, err := c.Response().Write(snap.body)
	return err
}

// metricsCache serves one snapshot of the metrics handler for at most interval, however many requests arrive: the
// first request after it expires computes the next one while concurrent requests wait for it (one computation at
// a time). The snapshot is always the Prometheus text format, uncompressed. interval <= 0 computes every request.
type metricsCache struct {
	h        http.Handler
	interval time.Duration

	mu   sync.Mutex
	at   time.Time
	snap *metricsSnapshot
}

type metricsSnapshot struct {
	status      int
	contentType string
	body        []byte
}

func (m *metricsCache) get(ctx context.Context) *metricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now() // clock:process the snapshot's age is measured within this process
	if m.snap != nil && m.interval > 0 && now.Sub(m.at) < m.interval {
		return m.snap
	}
	// Detached from the caller: a client that hangs up must not leave a truncated snapshot for everyone else.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, "/metrics", nil)
	if err != nil {
		return &metricsSnapshot{status: http.StatusInternalServerError}
	}
	rec := &snapshotWriter{header: http.Header{}, status: http.StatusOK}
	m.h.ServeHTTP(rec, req)
	m.snap = &metricsSnapshot{status: rec.status, contentType: rec.header.Get("Content-Type"), body: rec.body.Bytes()}
	m.at = time.Now() // clock:process see above
	return m.snap
}

// snapshotWriter records what the metrics handler writes.
type snapshotWriter struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (w *snapshotWriter) Header() http.Header { return w.header }

func (w *snapshotWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
}

func (w *snapshotWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.body.Write(b)
}
