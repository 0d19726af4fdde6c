package app_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/internal/testutil"
)

// roundTrip sends one GET on conn and reads its answer (the connection stays open).
func roundTrip(t *testing.T, conn net.Conn, br *bufio.Reader, path, token string) int {
	t.Helper()
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	_, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n", path, auth)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = conn.SetReadDeadline(time.Time{})
	return resp.StatusCode
}

// TestPerAddressConnectionCap: one address holding its cap with an idle keep-alive and a slow client (headers
// never finished) gets its next connection closed at once, while a client from another address (127.0.0.2) is
// served; once the address frees a slot it is served again.
func TestPerAddressConnectionCap(t *testing.T) {
	addr, _ := edgeRuntime(t, func(c *app.Config) {
		c.AuthToken = strings.Repeat("p", 32)
		c.HTTPMaxConnections, c.HTTPMaxConnectionsPerAddress = 8, 2
		c.HTTPAnonymousIdleTimeoutSeconds = 600 // the cap, not the idle limit, is under test
		c.HTTPReadHeaderTimeoutSeconds, c.HTTPReadTimeoutSeconds = 600, 600
	})
	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	require.Equal(t, http.StatusOK, roundTrip(t, idle, bufio.NewReader(idle), "/health/live", ""))
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	_, err = fmt.Fprintf(slow, "GET /health/live HTTP/1.1\r\nHost: local")
	require.NoError(t, err)

	over, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer over.Close()
	_, _ = fmt.Fprintf(over, "GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := over.Read(make([]byte, 1))
	require.Zero(t, n, "a connection over the address's cap gets no answer")
	require.Error(t, err)
	var ne net.Error
	require.False(t, errorsAs(err, &ne) && ne.Timeout(), "the connection over the cap is closed, not left waiting")

	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}, Timeout: 10 * time.Second}
	resp, err := other.Get("http://" + addr + "/health/live")
	require.NoError(t, err, "a client from another address is served")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, idle.Close())
	testutil.Eventually(t, 30*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, _ = fmt.Fprintf(c, "GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil {
			return false
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return true
	}, "the freed slot never served the address again")
}

// TestAnonymousIdleConnectionsCloseSooner: with tokens configured, a keep-alive connection no request has
// authenticated on is closed after the anonymous idle timeout, while an authenticated one, idle longer, is kept
// (and still answers).
func TestAnonymousIdleConnectionsCloseSooner(t *testing.T) {
	token := strings.Repeat("a", 32)
	addr, _ := edgeRuntime(t, func(c *app.Config) {
		c.AuthToken = token
		c.HTTPAnonymousIdleTimeoutSeconds = 1
		c.HTTPIdleTimeoutSeconds, c.HTTPReadHeaderTimeoutSeconds, c.HTTPReadTimeoutSeconds = 600, 600, 600
	})
	authed, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer authed.Close()
	abr := bufio.NewReader(authed)
	require.Equal(t, http.StatusOK, roundTrip(t, authed, abr, "/v1/operations", token))

	anon, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer anon.Close()
	require.Equal(t, http.StatusOK, roundTrip(t, anon, bufio.NewReader(anon), "/health/live", ""))
	start := time.Now()
	require.True(t, closedWithin(anon, 30*time.Second), "the idle anonymous connection is still open")
	t.Logf("anonymous idle connection closed after %s", time.Since(start).Round(10*time.Millisecond))

	// The authenticated connection has been idle longer than the anonymous one was and still serves.
	require.Equal(t, http.StatusOK, roundTrip(t, authed, abr, "/v1/operations", token))

	// A connection that never sends a request is anonymous too.
	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	require.True(t, closedWithin(silent, 30*time.Second), "the silent connection is still open")
}

func errorsAs(err error, target *net.Error) bool { return errors.As(err, target) }

// TestConnectionLimitSettings: the new edge settings are validated at start with a one-line reason, and the
// per-address cap defaults to a quarter of the global cap.
func TestConnectionLimitSettings(t *testing.T) {
	for _, tc := range []struct {
		set  func(*app.Config)
		want string
	}{
		{func(c *app.Config) { c.HTTPMaxConnectionsPerAddress = -1 }, "POWERCONTEXT_HTTP_MAX_CONNECTIONS_PER_ADDRESS must be >= 0"},
		{func(c *app.Config) { c.HTTPMaxConnections, c.HTTPMaxConnectionsPerAddress = 10, 11 }, "must be at most POWERCONTEXT_HTTP_MAX_CONNECTIONS (10)"},
		{func(c *app.Config) { c.HTTPAnonymousIdleTimeoutSeconds = 0 }, "POWERCONTEXT_HTTP_ANONYMOUS_IDLE_TIMEOUT_SECONDS must be > 0"},
		{func(c *app.Config) { c.TLSCertFile = "/x.crt" }, "TLS needs both POWERCONTEXT_TLS_CERT_FILE and POWERCONTEXT_TLS_KEY_FILE"},
	} {
		cfg := app.DefaultConfig()
		tc.set(&cfg)
		require.ErrorContains(t, cfg.Validate(), tc.want)
	}
	cfg := app.DefaultConfig()
	require.NoError(t, cfg.Validate())
	require.Equal(t, 256, cfg.MaxConnectionsPerAddress())
	require.Equal(t, 5.0, cfg.HTTPAnonymousIdleTimeoutSeconds)
	cfg.HTTPMaxConnections = 2
	require.Equal(t, 1, cfg.MaxConnectionsPerAddress())
}
