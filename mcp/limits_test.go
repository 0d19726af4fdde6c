package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/mcp"
)

// principals returns agents named by names, each with its own token.
func principals(t *testing.T, names ...string) []*auth.Principal {
	t.Helper()
	var specs []string
	for i, n := range names {
		specs = append(specs, `{"name":"`+n+`","role":"agent","token":"`+strings.Repeat(string(rune('a'+i)), 32)+`"}`)
	}
	parsed, err := auth.ParseTokens([]byte("[" + strings.Join(specs, ",") + "]"))
	require.NoError(t, err)
	set, err := auth.NewSet(parsed)
	require.NoError(t, err)
	out := make([]*auth.Principal, len(names))
	for i, n := range names {
		out[i], _ = set.ByName(n)
	}
	return out
}

// apiError decodes the API's error shape.
func apiError(t *testing.T, raw []byte) (code, message string) {
	t.Helper()
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &env), string(raw))
	return env.Error.Code, env.Error.Message
}

// sessionAlive reports whether a session still answers (200) rather than 404.
func sessionAlive(t *testing.T, url, sid string) bool {
	t.Helper()
	status, raw := mcpPost(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, status, string(raw))
	return status == http.StatusOK
}

// TestSessionCapIsPerPrincipal (issue 34 item 6): a principal that opens sessions quickly never evicts another
// principal's session. Beyond its own cap, or the total cap, a principal's new session closes its own least
// recently used idle session; a principal with none to give up is refused with 429 too_many_sessions.
func TestSessionCapIsPerPrincipal(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	d := deps(s, zerolog.Nop())
	d.MaxSessions, d.MaxSessionsPerPrincipal = 4, 2
	h := mcp.NewHandler(d, false)
	ps := principals(t, "agent-a", "agent-b", "agent-c")
	srv := map[string]string{}
	for _, p := range ps {
		ts := httptest.NewServer(asPrincipal(h, p))
		t.Cleanup(ts.Close)
		srv[p.Name] = ts.URL
	}
	a, b, c := srv["agent-a"], srv["agent-b"], srv["agent-c"]

	b1, b2 := initSession(t, b), initSession(t, b) // b's sessions are the least recently used of all
	a1, a2 := initSession(t, a), initSession(t, a)
	require.True(t, sessionAlive(t, a, a1)) // a2 is now a's least recently used
	a3 := initSession(t, a)                 // over a's cap (2) and the total (4)
	require.False(t, sessionAlive(t, a, a2), "a's own least recently used session makes room")
	for _, sid := range []string{b1, b2} {
		require.True(t, sessionAlive(t, b, sid), "another principal's session is never evicted")
	}
	require.True(t, sessionAlive(t, a, a1))
	require.True(t, sessionAlive(t, a, a3))

	// c has no session to give up and the total cap is reached: refused, and nobody's session is closed.
	status, raw := mcpPost(t, c, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusTooManyRequests, status, string(raw))
	code, msg := apiError(t, raw)
	require.Equal(t, "too_many_sessions", code)
	require.NotEmpty(t, msg)
	for url, sids := range map[string][]string{a: {a1, a3}, b: {b1, b2}} {
		for _, sid := range sids {
			require.True(t, sessionAlive(t, url, sid))
		}
	}

	// Once b ends a session (DELETE), c gets the room.
	req, err := http.NewRequest(http.MethodDelete, b, nil)
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", b1)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	c1 := initSession(t, c)
	require.True(t, sessionAlive(t, c, c1))
	require.True(t, sessionAlive(t, b, b2))
}

// stream is an open event stream (GET /mcp) whose body is read in the background, so that every read in the test
// has a deadline: a stream that never ends fails the test instead of hanging it.
type stream struct {
	status int
	ctype  string
	body   chan string // the whole body once the server ended it
	cancel context.CancelFunc
}

func openStream(t *testing.T, url, sid, lastEventID string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		got <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("no answer to GET /mcp within 20 s")
	}
	require.NoError(t, a.err)
	s := &stream{status: a.resp.StatusCode, ctype: a.resp.Header.Get("Content-Type"), body: make(chan string, 1), cancel: cancel}
	go func() {
		raw, _ := io.ReadAll(a.resp.Body)
		a.resp.Body.Close()
		s.body <- string(raw)
	}()
	t.Cleanup(cancel) // before the server's Close, which waits for open requests
	return s
}

// ended waits (with a deadline) for the server to end the stream and returns its body.
func (s *stream) ended(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case b := <-s.body:
		return b
	case <-time.After(within):
		t.Fatalf("the event stream was still open after %s", within)
		return ""
	}
}

// close ends the stream from the client side and waits for the read to finish.
func (s *stream) close(t *testing.T) {
	t.Helper()
	s.cancel()
	s.ended(t, 20*time.Second)
}

// TestStreamsAreBoundedPerPrincipalAndInTotal (issue 34 item 3): one principal cannot hold more than its share of
// event streams, nor all principals together more than the total; beyond either the answer is 429
// too_many_streams, and a closed stream frees its slot.
func TestStreamsAreBoundedPerPrincipalAndInTotal(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	d := deps(s, zerolog.Nop())
	d.MaxStreams, d.MaxStreamsPerPrincipal, d.StreamIdle = 3, 2, time.Hour
	h := mcp.NewHandler(d, false)
	ps := principals(t, "agent-a", "agent-b")
	a := httptest.NewServer(asPrincipal(h, ps[0]))
	t.Cleanup(a.Close)
	b := httptest.NewServer(asPrincipal(h, ps[1]))
	t.Cleanup(b.Close)

	refused := func(st *stream) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, st.status)
		code, _ := apiError(t, []byte(st.ended(t, 20*time.Second)))
		require.Equal(t, "too_many_streams", code)
	}
	a1, a2, a3 := initSession(t, a.URL), initSession(t, a.URL), initSession(t, a.URL)
	sa1, sa2 := openStream(t, a.URL, a1, ""), openStream(t, a.URL, a2, "")
	for _, st := range []*stream{sa1, sa2} {
		require.Equal(t, http.StatusOK, st.status)
		require.Equal(t, "text/event-stream", st.ctype)
	}
	refused(openStream(t, a.URL, a3, "")) // a's own cap
	b1, b2 := initSession(t, b.URL), initSession(t, b.URL)
	sb1 := openStream(t, b.URL, b1, "")
	require.Equal(t, http.StatusOK, sb1.status)
	refused(openStream(t, b.URL, b2, "")) // the total cap
	require.True(t, sessionAlive(t, a.URL, a3), "a refused stream leaves the session usable")

	sa1.close(t)
	require.Eventually(t, func() bool {
		st := openStream(t, b.URL, b2, "")
		if st.status == http.StatusOK {
			return true
		}
		st.ended(t, 20*time.Second)
		return false
	}, 20*time.Second, 20*time.Millisecond, "a closed stream frees its slot")
}

// TestStreamsEndWhenIdle (issue 34 item 3): an event stream without events ends after the stream idle limit (not
// at the session's 30 minutes), with a last event carrying an id and a retry delay; reconnecting with that id as
// Last-Event-ID opens a new stream, and the session lives on.
func TestStreamsEndWhenIdle(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	d := deps(s, zerolog.Nop())
	d.StreamIdle = 200 * time.Millisecond
	srv := httptest.NewServer(mcp.NewHandler(d, false))
	t.Cleanup(srv.Close)
	sid := initSession(t, srv.URL)
	st := openStream(t, srv.URL, sid, "")
	require.Equal(t, http.StatusOK, st.status)
	body := st.ended(t, 20*time.Second)
	m := regexp.MustCompile(`(?m)^id: (pc-idle-\d+)\nretry: 1000\n\n\z`).FindStringSubmatch(body)
	require.NotNil(t, m, "the last event names where the stream ended: %q", body)

	again := openStream(t, srv.URL, sid, m[1])
	require.Equal(t, http.StatusOK, again.status, "the idle event's id is accepted as Last-Event-ID")
	again.ended(t, 20*time.Second)
	require.True(t, sessionAlive(t, srv.URL, sid))
}

// TestSDKClientOutlivesIdleStreams: the official Go SDK client reconnects its event stream each time it ends idle
// and keeps working well past its reconnect budget (5 reconnects without progress would fail it).
func TestSDKClientOutlivesIdleStreams(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	d := deps(s, zerolog.Nop())
	d.StreamIdle = 100 * time.Millisecond
	h := mcp.NewHandler(d, false)
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.Eventually(t, func() bool { return gets.Load() >= 8 }, 60*time.Second, 10*time.Millisecond,
		"the client reconnects its stream after each idle end")
	callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(callCtx, &sdk.CallToolParams{Name: "get_memory", Arguments: map[string]any{"scope_id": "team"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
}

// serveApp starts a real single_node server (SQLite, a bearer token) adjusted by adjust, and returns the URL of a
// proxy to its /mcp that adds the token, so the helpers above can talk to it.
func serveApp(t *testing.T, adjust func(*app.Config)) string {
	t.Helper()
	token := strings.Repeat("l", 32)
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "pc.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.AuthToken = token
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.2, 5
	adjust(&cfg)
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, &bytes.Buffer{})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	target := "http://" + rt.Addr() + "/mcp"
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// TestLimitsThroughTheHTTPStack: the settings reach /mcp of a real single_node server (auth, rate limit, body limit
// and request-id middleware in front): with one stream per principal a second stream is 429 too_many_streams; a
// session whose stream is open is not closed to make room for the same principal's new session, an idle one is;
// an idle stream ends with its idle event.
func TestLimitsThroughTheHTTPStack(t *testing.T) {
	url := serveApp(t, func(c *app.Config) {
		c.MCPMaxSessionsPerPrincipal, c.MCPMaxStreamsPerPrincipal, c.MCPStreamIdleSeconds = 2, 1, 3600
	})
	s1, s2 := initSession(t, url), initSession(t, url)
	st1 := openStream(t, url, s1, "")
	require.Equal(t, http.StatusOK, st1.status)
	st2 := openStream(t, url, s2, "")
	require.Equal(t, http.StatusTooManyRequests, st2.status)
	code, _ := apiError(t, []byte(st2.ended(t, 20*time.Second)))
	require.Equal(t, "too_many_streams", code)

	// s1 is the least recently used session but busy with its stream: the principal's third session (over its cap
	// of 2) closes s2 instead.
	require.True(t, sessionAlive(t, url, s2))
	s3 := initSession(t, url)
	require.False(t, sessionAlive(t, url, s2))
	require.True(t, sessionAlive(t, url, s3))
	st1.close(t)

	idle := serveApp(t, func(c *app.Config) { c.MCPStreamIdleSeconds = 0.3 })
	sid := initSession(t, idle)
	st := openStream(t, idle, sid, "")
	require.Equal(t, http.StatusOK, st.status)
	require.Contains(t, st.ended(t, 20*time.Second), "id: pc-idle-", "the stream ends idle through the whole HTTP stack")
	require.True(t, sessionAlive(t, idle, sid))
}
