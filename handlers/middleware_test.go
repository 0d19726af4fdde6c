package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

func TestRequestID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(http.MethodGet, "/health/live", nil, hdr{HeaderRequestID: "client-id_1.2:3"})
	require.Equal(t, "client-id_1.2:3", r.Header.Get(HeaderRequestID))

	for _, bad := range []string{"", strings.Repeat("a", 129), "has space", "semi;colon", "ünï"} {
		r = e.do(http.MethodGet, "/health/live", nil, hdr{HeaderRequestID: bad})
		got := r.Header.Get(HeaderRequestID)
		require.NotEmpty(t, got)
		require.NotEqual(t, bad, got)
		require.True(t, saneRequestID(got))
	}
	// Errors carry it too.
	r = e.get("/nope")
	require.NotEmpty(t, r.Header.Get(HeaderRequestID))
	r = e.do(http.MethodGet, "/v1/memory", nil, hdr{HeaderRequestID: "abc"})
	require.Equal(t, "abc", r.Header.Get(HeaderRequestID))
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.get("/v2/nothing").requireError(t, http.StatusNotFound, CodeNotFound)
	e.get("/").requireError(t, http.StatusNotFound, CodeNotFound)
	r := e.do(http.MethodDelete, "/v1/sources", nil, nil)
	r.requireError(t, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	require.Contains(t, r.Header.Get("Allow"), http.MethodPost)
	e.do(http.MethodPut, "/v1/operations/x", nil, nil).requireError(t, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	e.get("/v1/memory/flush").requireError(t, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	// /metrics without a handler is a 404; /mcp is absent without a handler.
	e.get("/metrics").requireError(t, http.StatusNotFound, CodeNotFound)
	e.post("/mcp", `{}`).requireError(t, http.StatusNotFound, CodeNotFound)
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/v1/sources", "/v1/memory/flush", "/v1/operations/00000000-0000-4000-8000-000000000000/cancel"} {
		// 415: missing or non-JSON content type.
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "garbage/"} {
			h := hdr{}
			if ct != "" {
				h["Content-Type"] = ct
			}
			e.do(http.MethodPost, path, strings.NewReader(`{"scope_id":"s","content":"x"}`), h).
				requireError(t, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
		}
		// 400: not one JSON object of valid UTF-8.
		for _, body := range []string{"", "   ", "{", `{"scope_id":}`, `[1,2]`, `"s"`, `null`, `{"scope_id":"s"} {}`, `{"scope_id":"s"}x`,
			"{\"scope_id\":\"\xff\xfe\"}", "\xef\xbb\xbf{}"} {
			e.post(path, body).requireError(t, http.StatusBadRequest, CodeInvalidJSON)
		}
		// 413: declared or streamed beyond the limit.
		huge := bytes.Repeat([]byte("x"), int(DefaultBodyLimit)+1)
		e.do(http.MethodPost, path, bytes.NewReader(huge), jsonCT).requireError(t, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
		req := httptest.NewRequest(http.MethodPost, path, io.MultiReader(strings.NewReader(`{"content":"`), bytes.NewReader(huge), strings.NewReader(`"}`)))
		req.ContentLength = -1
		req.Host = "localhost:8080"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.e.ServeHTTP(rec, req)
		resp{Code: rec.Code, Body: rec.Body.Bytes()}.requireError(t, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
	}
	// Accepted content types.
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", "application/merge-patch+json"} {
		r := e.do(http.MethodPost, "/v1/sources", strings.NewReader(`{"scope_id":"s","content":"x"}`), hdr{"Content-Type": ct})
		require.Less(t, r.Code, 300, "%s: %s", ct, r.Body)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	e := newEnv(t, func(d *Deps) {
		d.AuthToken = token
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = io.WriteString(w, "up 1\n")
		})
		d.MCP = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	})
	body := `{"scope_id":"s","content":"x"}`
	for _, h := range []hdr{{}, {"Authorization": "Bearer wrong"}, {"Authorization": token}, {"Authorization": "Basic " + token},
		{"Authorization": "Bearer " + token + "x"}, {"Authorization": "Bearer "}} {
		h["Content-Type"] = "application/json"
		r := e.do(http.MethodPost, "/v1/sources", strings.NewReader(body), h)
		r.requireError(t, http.StatusUnauthorized, CodeUnauthorized)
		require.NotContains(t, string(r.Body), token)
		require.NotEmpty(t, r.Header.Get("WWW-Authenticate"))
	}
	for _, scheme := range []string{"Bearer ", "bearer "} {
		r := e.do(http.MethodPost, "/v1/sources", strings.NewReader(body), hdr{"Content-Type": "application/json", "Authorization": scheme + token})
		require.Less(t, r.Code, 300, "body: %s", r.Body)
	}
	// Unknown routes are 401 too (no route discovery without the token).
	e.get("/v1/secret").requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	// Health and metrics are exempt.
	require.Equal(t, http.StatusOK, e.get("/health/live").Code)
	require.NotEqual(t, http.StatusUnauthorized, e.get("/health/ready").Code)
	r := e.get("/metrics")
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, "up 1\n", string(r.Body))
	// MCP sits behind auth.
	e.post("/mcp", `{}`).requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	// The MCP handler here is a stub answering 204, not the documented transport: no contract check.
	r = serve(e.e, http.MethodPost, "/mcp", strings.NewReader(`{}`), hdr{"Content-Type": "application/json", "Authorization": "Bearer " + token})
	require.Equal(t, http.StatusNoContent, r.Code)
	r = serve(e.e, http.MethodGet, "/mcp", nil, hdr{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusNoContent, r.Code)
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.RateLimit = RateLimit{Enabled: true, Requests: 2, Window: time.Hour}
	})
	// The limiter needs the store newEnv opened: rebuild the server with it.
	e.deps.RateLimiter = coordinator.NewRateLimiter(e.store)
	e.e = New(e.deps)
	for range 2 {
		require.Equal(t, http.StatusOK, e.get("/v1/memory?scope_id=s").Code)
	}
	r := e.get("/v1/memory?scope_id=s")
	r.requireError(t, http.StatusTooManyRequests, CodeRateLimited)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	// Health and metrics are exempt.
	for range 3 {
		require.Equal(t, http.StatusOK, e.get("/health/live").Code)
	}
	// Another principal (remote address) has its own window.
	req := httptest.NewRequest(http.MethodGet, "/v1/memory?scope_id=s", nil)
	req.RemoteAddr = "198.51.100.7:1"
	req.Host = "localhost:8080"
	rec := httptest.NewRecorder()
	e.e.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestPanicAndInternalErrorsHideText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.MCP = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret panic text") })
	})
	r := e.post("/mcp", `{}`)
	r.requireError(t, http.StatusInternalServerError, CodeInternal)
	require.NotContains(t, string(r.Body), "secret")
	require.Contains(t, e.logs.String(), "request panicked")

	// A database failure is a generic 500; the text goes to the log with the request id only.
	require.NoError(t, e.store.Close())
	r = e.do(http.MethodGet, "/v1/memory?scope_id=s", nil, hdr{HeaderRequestID: "req-500"})
	r.requireError(t, http.StatusInternalServerError, CodeInternal)
	require.NotContains(t, strings.ToLower(string(r.Body)), "sql")
	require.NotContains(t, strings.ToLower(string(r.Body)), "closed")
	require.Contains(t, e.logs.String(), `"request_id":"req-500"`)
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("secret-scope", "secret content", nil)
	e.get("/v1/sources?scope_id=secret-scope&limit=5")
	e.get("/v1/operations/" + "3f0c6a7e-0000-4000-8000-00000000abcd")
	e.get("/v1/unknown/secret-path")
	logs := e.logs.String()
	require.NotContains(t, logs, "secret")
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if m["message"] == "http request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 4)
	require.Equal(t, "/v1/sources", lines[0]["route"])
	require.Equal(t, "POST", lines[0]["method"])
	require.Equal(t, float64(201), lines[0]["status"])
	require.NotEmpty(t, lines[0]["request_id"])
	require.Contains(t, lines[0], "latency_ms")
	require.Equal(t, "/v1/operations/:operation_id", lines[2]["route"])
	require.Equal(t, "unmatched", lines[3]["route"])
	require.Equal(t, "warn", lines[3]["level"])
}

func TestRolesAndRuntime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.Role = "worker"
		d.AuthToken = "tok"
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = io.WriteString(w, "m 1\n")
		})
		d.MCP = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	})
	auth := hdr{"Authorization": "Bearer tok"}
	require.Equal(t, http.StatusOK, e.get("/health/live").Code)
	require.Equal(t, http.StatusOK, e.get("/metrics").Code)
	for _, p := range []string{"/v1/sources?scope_id=s", "/v1/operations", "/v1/runtime/members", "/mcp"} {
		e.do(http.MethodGet, p, nil, auth).requireError(t, http.StatusNotFound, CodeNotFound)
	}
	// Default readiness: no live member is not_ready (503); a live member of the same role makes it ready.
	r := e.get("/health/ready")
	require.Equal(t, http.StatusServiceUnavailable, r.Code)
	require.Equal(t, "not_ready", r.json(t)["status"])
	now, err := e.store.DBNow(context.Background())
	require.NoError(t, err)
	require.NoError(t, e.store.RuntimeMemberUpsert(context.Background(), db.RuntimeMember{MemberID: "m-1", Role: "worker",
		BuildVersion: "v1.2.3", SchemaMin: 1, SchemaMax: 1, PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "r1",
		StartedAt: now, HeartbeatAt: now, ExpiresAt: now.Add(time.Minute)}))
	r = e.get("/health/ready")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "ready", r.json(t)["status"])

	// Injected readiness decides the status code.
	for status, code := range map[string]int{"ready": 200, "degraded": 200, "not_ready": 503, "misconfigured": 503} {
		ee := newEnv(t, func(d *Deps) {
			d.Readiness = func(context.Context) (string, map[string]any) { return status, map[string]any{"x": "y"} }
		})
		r := ee.get("/health/ready")
		require.Equal(t, code, r.Code, status)
		require.Equal(t, map[string]any{"status": status, "checks": map[string]any{"x": "y"}}, r.json(t))
	}

	// Members on an api process: role, build, versions, heartbeat; no secrets.
	api := newEnv(t, func(d *Deps) { d.Role = "api"; d.AuthToken = "tok" })
	require.NoError(t, api.store.RuntimeMemberUpsert(context.Background(), db.RuntimeMember{MemberID: "m-2", Role: "api",
		BuildVersion: "v9", SchemaMin: 1, SchemaMax: 2, PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "r1",
		StartedAt: now, HeartbeatAt: now, ExpiresAt: now.Add(time.Hour)}))
	r = api.do(http.MethodGet, "/v1/runtime/members", nil, auth)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	items := r.json(t)["items"].([]any)
	require.Len(t, items, 1)
	m := items[0].(map[string]any)
	require.Equal(t, "api", m["role"])
	require.Equal(t, "v9", m["build_version"])
	require.Equal(t, map[string]any{"min": float64(1), "max": float64(2)}, m["schema_versions"])
	require.Regexp(t, timeRE, m["heartbeat_at"])
	require.NotContains(t, string(r.Body), "tok\"")
}

func TestMissingDependenciesAreNotReady(t *testing.T) {
	t.Parallel()
	e := &env{t: t, e: New(Deps{}), logs: &syncBuffer{}}
	e.post("/v1/sources", `{"scope_id":"s","content":"x"}`).requireError(t, http.StatusServiceUnavailable, CodeRuntimeNotReady)
	e.post("/v1/memory/flush", `{"scope_id":"s"}`).requireError(t, http.StatusServiceUnavailable, CodeRuntimeNotReady)
	e.get("/v1/operations").requireError(t, http.StatusServiceUnavailable, CodeRuntimeNotReady)
	e.get("/v1/memory?scope_id=s").requireError(t, http.StatusServiceUnavailable, CodeRuntimeNotReady)
	require.Equal(t, http.StatusServiceUnavailable, e.get("/health/ready").Code)
}

func TestClientCancelIsNotAServerError(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodPost, "/v1/memory/flush", strings.NewReader(`{"scope_id":"gone"}`)).WithContext(ctx)
	req.Host = "localhost:8080"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	require.Equal(t, 499, rec.Code)
	require.NotContains(t, env.logs.String(), `"level":"error"`)
}
