package app_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
)

// edgeRuntime starts a single_node runtime on a fresh SQLite file with the local provider, returns its address
// and its log.
func edgeRuntime(t *testing.T, adjust ...func(*app.Config)) (addr string, logs *syncWriter) {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "pc.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.2, 5
	for _, f := range adjust {
		f(&cfg)
	}
	require.NoError(t, cfg.Validate())
	logs = &syncWriter{}
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, logs)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return rt.Addr(), logs
}

// closedWithin reports whether the server closes conn (EOF or reset, after any answer) within d.
func closedWithin(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// TestSlowBodyIsCutAtTheReadTimeout: a client that declares a body and trickles it (a byte every 100 ms) no longer
// holds its connection for as long as it likes: the read timeout closes it.
func TestSlowBodyIsCutAtTheReadTimeout(t *testing.T) {
	token := strings.Repeat("k", 32)
	addr, _ := edgeRuntime(t, func(c *app.Config) {
		c.AuthToken = token
		c.HTTPReadTimeoutSeconds = 1
		c.HTTPReadHeaderTimeoutSeconds = 1
	})
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/sources HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	require.NoError(t, err)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	require.True(t, closedWithin(conn, 10*time.Second), "the trickling connection is still open")
	t.Logf("slow-body connection closed after %s", time.Since(start).Round(10*time.Millisecond))
}

// TestIdleKeepAliveIsClosed: a keep-alive connection that sends nothing after its answer is closed after the idle
// timeout.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	addr, _ := edgeRuntime(t, func(c *app.Config) { c.HTTPIdleTimeoutSeconds = 1 })
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the idle connection is still open")
	t.Logf("idle keep-alive closed after %s", time.Since(start).Round(10*time.Millisecond))
}

// TestConnectionCap: with the cap reached, a further connection is not served until one of the open ones ends.
func TestConnectionCap(t *testing.T) {
	addr, _ := edgeRuntime(t, func(c *app.Config) { c.HTTPMaxConnections, c.HTTPMaxConnectionsPerAddress = 2, 2 })
	hold := make([]net.Conn, 2)
	for i := range hold {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		hold[i] = c
	}
	get := func(timeout time.Duration) error {
		cl := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := cl.Get("http://" + addr + "/health/live")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	// Both slots are taken by connections that have sent nothing: a third is not answered.
	require.Error(t, get(500*time.Millisecond), "a third connection was served beyond the cap of 2")
	require.NoError(t, hold[0].Close())
	require.NoError(t, get(5*time.Second), "a slot freed by a closed connection serves the next one")
}

// TestWriteTimeoutFreesANonReadingClient: a client that asks for a large page and never reads it holds the
// response (and the rows behind it) only until the write timeout; then the request ends and is logged.
func TestWriteTimeoutFreesANonReadingClient(t *testing.T) {
	addr, logs := edgeRuntime(t, func(c *app.Config) {
		c.HTTPWriteTimeoutSeconds = 6
		c.FlushMaxWaitSeconds, c.FlushDefaultWaitSeconds = 0.5, 0
		c.HTTPMaxListBytes = 64 << 20 // one page holds everything: larger than any socket buffer
	})
	big := strings.Repeat("w", 60<<10)
	cl := &http.Client{Timeout: 10 * time.Second}
	for i := range 150 {
		resp, err := cl.Post("http://"+addr+"/v1/sources", "application/json",
			strings.NewReader(fmt.Sprintf(`{"scope_id":"big","content":"%d %s"}`, i, big)))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusCreated, resp.StatusCode)
	}
	// A small receive buffer fixed before connecting (no window autotuning): the answer cannot drain into it.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	conn, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /v1/sources?scope_id=big&limit=500 HTTP/1.1\r\nHost: localhost\r\n\r\n")
	require.NoError(t, err)
	start := time.Now()
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"route":"/v1/sources","method":"GET"`)
	}, 20*time.Second, 50*time.Millisecond, "the unread response still holds its handler")
	t.Logf("non-reading client released after %s", time.Since(start).Round(10*time.Millisecond))
}

// TestFailedStartReleasesTheDatabase: a start that fails after it took the single-node lease and wrote its member
// row (here: the listen address is taken) gives both back, so the next start on the same database succeeds at once
// instead of being refused as "another single-node runtime" until the lease's time to live runs out.
func TestFailedStartReleasesTheDatabase(t *testing.T) {
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer squatter.Close()
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "pc.db")
	cfg.Listen = squatter.Addr().String()
	cfg.MemberTTLSeconds = 600 // long: only a release lets the second start in
	require.NoError(t, cfg.Validate())
	_, err = app.Start(context.Background(), cfg, io.Discard)
	require.ErrorContains(t, err, "cannot listen")

	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, io.Discard)
	require.NoError(t, err, "the failed start must not hold the database")
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	cancel()
	require.NoError(t, <-done)
}

// TestDashboardSessionWiring: the running server signs in through the form into a database session whose cookie
// carries the configured lifetime and is Secure behind the configured trusted proxy; the session serves the pages
// and the dashboard's fetches, and a logout ends it.
func TestDashboardSessionWiring(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("t", 40)
	addr, _ := edgeRuntime(t, func(c *app.Config) {
		c.AuthToken, c.UISessionTTLSeconds, c.TrustedProxies = token, 3600, "127.0.0.1"
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, form string, h map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(form))
		require.NoError(t, err)
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		require.NoError(t, res.Body.Close())
		return res
	}
	require.Equal(t, http.StatusUnauthorized, do(http.MethodGet, "/ui", "", nil).StatusCode)
	res := do(http.MethodPost, "/ui/login", "token="+token, map[string]string{"X-Forwarded-Proto": "https"})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	var session *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "pc_ui_session" {
			session = c
		}
	}
	require.NotNil(t, session)
	require.True(t, session.Secure, "https through the trusted proxy")
	require.Equal(t, 3600, session.MaxAge)
	require.NotContains(t, session.Value, token)
	cookie := map[string]string{"Cookie": session.Name + "=" + session.Value}
	require.Equal(t, http.StatusOK, do(http.MethodGet, "/ui/operations", "", cookie).StatusCode)
	require.Equal(t, http.StatusOK, do(http.MethodGet, "/v1/operations", "",
		map[string]string{"Cookie": cookie["Cookie"], "X-PowerContext-UI": "1"}).StatusCode)
	require.Equal(t, http.StatusSeeOther, do(http.MethodPost, "/ui/logout", "", cookie).StatusCode)
	require.Equal(t, http.StatusUnauthorized, do(http.MethodGet, "/ui/operations", "", cookie).StatusCode)
}
