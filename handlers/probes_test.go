package handlers

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMetricsSnapshotIsCached: many /metrics requests within one interval, in sequence and at once, compute the
// snapshot once and all get its body.
func TestMetricsSnapshotIsCached(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, func(d *Deps) {
		d.MetricsCacheInterval = time.Hour
		d.ProbesPerMinute = -1
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			calls.Add(1)
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte("up 1\n"))
		})
	})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r := e.get("/metrics")
			require.Equal(t, http.StatusOK, r.Code)
			require.Equal(t, "up 1\n", string(r.Body))
			require.Equal(t, "text/plain; version=0.0.4", r.Header.Get("Content-Type"))
		})
	}
	wg.Wait()
	for range 50 {
		require.Equal(t, http.StatusOK, e.get("/metrics").Code)
	}
	require.Equal(t, int64(1), calls.Load(), "one snapshot per interval")

	// A negative interval computes every request (tests that read a counter right after an action).
	var each atomic.Int64
	live := newEnv(t, func(d *Deps) {
		d.MetricsCacheInterval = -1
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			each.Add(1)
			promText(w, r)
		})
	})
	live.get("/metrics")
	live.get("/metrics")
	require.Equal(t, int64(2), each.Load())
}

// TestProbesAreRateLimitedPerAddress: /metrics and /health/ready spend a per-address budget (429 rate_limited with
// Retry-After once spent); another address and loopback keep being served.
func TestProbesAreRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.ProbesPerMinute = 3
		d.Metrics = http.HandlerFunc(promText)
	})
	flood := hdr{"RemoteAddr": "198.51.100.20:1"}
	for _, p := range []string{"/metrics", "/health/ready", "/metrics"} {
		require.NotEqual(t, http.StatusTooManyRequests, e.do(http.MethodGet, p, nil, flood).Code, p)
	}
	for _, p := range []string{"/metrics", "/health/ready"} {
		r := e.do(http.MethodGet, p, nil, flood)
		r.requireError(t, http.StatusTooManyRequests, CodeRateLimited)
		require.NotEmpty(t, r.Header.Get("Retry-After"), p)
	}
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/metrics", nil, hdr{"RemoteAddr": "203.0.113.20:1"}).Code)
	for range 10 {
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/metrics", nil, hdr{"RemoteAddr": "127.0.0.1:1"}).Code)
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/metrics", nil, hdr{"RemoteAddr": "[::1]:1"}).Code)
	}
}

// TestMetricsToken: with a metrics token set, /metrics needs it as a bearer (401 otherwise, API tokens included).
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	tok := strings.Repeat("m", 32)
	e := newEnv(t, func(d *Deps) {
		d.MetricsToken = tok
		d.Metrics = http.HandlerFunc(promText)
	})
	e.get("/metrics").requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	e.do(http.MethodGet, "/metrics", nil, hdr{"Authorization": "Bearer " + strings.Repeat("x", 32)}).
		requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	r := e.do(http.MethodGet, "/metrics", nil, hdr{"Authorization": "Bearer " + tok})
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, "up 1\n", string(r.Body))
}

func promText(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte("up 1\n"))
}
