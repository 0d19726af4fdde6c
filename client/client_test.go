package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/client"
)

// fakeClock advances only when the client sleeps, so deadline tests are exact and never sleep.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
	return ctx.Err()
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)} }

// opAPI imitates the flush and operation routes: POST /v1/memory/flush answers 202 for operation "op-1", and
// each GET /v1/operations/op-1 answers the next record of script (the last one repeats).
type opAPI struct {
	mu       sync.Mutex
	script   []func(w http.ResponseWriter)
	polls    int
	requests []*http.Request
}

func (a *opAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/memory/flush", func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		w.Header().Set("Location", "/v1/operations/op-1")
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusAccepted, map[string]any{"operation_id": "op-1", "status": "queued",
			"status_url": "/v1/operations/op-1"})
	})
	mux.HandleFunc("GET /v1/operations/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		if r.PathValue("id") != "op-1" {
			writeError(w, http.StatusNotFound, "operation_not_found", "operation not found", nil)
			return
		}
		a.mu.Lock()
		step := a.script[min(a.polls, len(a.script)-1)]
		a.polls++
		a.mu.Unlock()
		step(w)
	})
	return mux
}

func (a *opAPI) record(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r)
}

func (a *opAPI) pollCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.polls
}

func record(status string, attempt int, errCode string, result any) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		rec := map[string]any{"operation_id": "op-1", "kind": "memory_flush", "scope_id": "s", "status": status,
			"attempt_count": attempt, "state_version": attempt + 1, "created_at": "2026-12-02T13:00:00.000000Z",
			"updated_at": "2026-12-02T13:00:01.000000Z", "completed_at": nil,
			"available_at": "2026-12-02T13:00:00.000000Z", "result": result, "error": nil}
		if errCode != "" {
			rec["error"] = map[string]string{"category": "provider", "code": errCode}
		}
		writeJSON(w, http.StatusOK, rec)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-ID", "req-fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg, "details": details}})
}

// replicas starts two servers over the same handler and a transport that sends requests to them in turn, like a
// round-robin load balancer without session affinity. hits counts the requests each replica answered.
func replicas(t *testing.T, h http.Handler) (baseURL string, hc *http.Client, hits *[2]atomic.Int64) {
	t.Helper()
	hits = new([2]atomic.Int64)
	var urls [2]*url.URL
	for i := range urls {
		i := i
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		u, err := url.Parse(srv.URL)
		require.NoError(t, err)
		urls[i] = u
	}
	var next atomic.Int64
	hc = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		u := urls[next.Add(1)%2]
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
	return "http://powercontext.invalid", hc, hits
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestFlushMemoryDeadlineReturnsPendingAndEveryPollIsIndependent(t *testing.T) {
	api := &opAPI{script: []func(http.ResponseWriter){record("running", 2, "", nil)}}
	base, hc, hits := replicas(t, api.handler())
	clock := newFakeClock()
	c := client.New(base, client.WithHTTPClient(hc), client.WithOperationDeadline(time.Second),
		client.WithPollInterval(200*time.Millisecond), client.WithClock(clock.now, clock.sleep))

	var seen []string
	_, err := c.FlushMemoryWith(context.Background(), "s", func(r client.OperationRecord) {
		seen = append(seen, fmt.Sprintf("%s/%d", r.Status, r.AttemptCount))
	})
	var pending *client.OperationPendingError
	require.ErrorAs(t, err, &pending)
	require.Equal(t, "op-1", pending.OperationID)
	require.Equal(t, "running", pending.Status)
	require.Contains(t, err.Error(), "op-1")

	// 1 s deadline / 200 ms interval: exactly five polls, each its own request, spread over both replicas.
	require.Equal(t, 5, api.pollCount())
	require.Len(t, api.requests, 6)
	require.Equal(t, int64(3), hits[0].Load())
	require.Equal(t, int64(3), hits[1].Load())
	for _, r := range api.requests {
		require.Empty(t, r.Header.Get("Mcp-Session-Id"))
		require.Empty(t, r.Header.Get("Cookie"))
	}
	require.Equal(t, "respond-async", api.requests[0].Header.Get("Prefer"))
	require.Equal(t, []string{"queued/0", "running/2", "running/2", "running/2", "running/2", "running/2"}, seen)
}

func TestFlushMemoryDeadlineRealClock(t *testing.T) {
	api := &opAPI{script: []func(http.ResponseWriter){record("running", 1, "", nil)}}
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, client.WithOperationDeadline(150*time.Millisecond), client.WithPollInterval(20*time.Millisecond))
	// The operation stays running forever: returning pending at all shows the deadline ended the wait.
	_, err := c.FlushMemory(context.Background(), "s")
	var pending *client.OperationPendingError
	require.ErrorAs(t, err, &pending)
	require.Equal(t, "op-1", pending.OperationID)
	require.GreaterOrEqual(t, api.pollCount(), 2)
}

func TestFlushMemoryTerminalMapping(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   []func(http.ResponseWriter)
		wantCode string
		wantRev  int64
	}{
		{name: "succeeded", script: []func(http.ResponseWriter){record("running", 1, "", nil),
			record("succeeded", 1, "", map[string]any{"type": "memory_flush", "previous_cursor": 0, "current_cursor": 3,
				"high_watermark": 3, "processed_source_count": 3, "memory": map[string]any{"revision": 7}})}, wantRev: 7},
		{name: "failed", script: []func(http.ResponseWriter){record("retry_wait", 1, "", nil),
			record("failed", 2, "provider_timeout", nil)}, wantCode: "provider_timeout"},
		{name: "cancelled", script: []func(http.ResponseWriter){record("cancelling", 1, "", nil),
			record("cancelled", 1, "", nil)}, wantCode: "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := &opAPI{script: tc.script}
			base, hc, _ := replicas(t, api.handler())
			clock := newFakeClock()
			c := client.New(base, client.WithHTTPClient(hc), client.WithClock(clock.now, clock.sleep))
			res, err := c.FlushMemory(context.Background(), "s")
			require.Equal(t, 2, api.pollCount())
			if tc.wantCode != "" {
				var failed *client.OperationFailedError
				require.ErrorAs(t, err, &failed)
				require.Equal(t, "op-1", failed.OperationID)
				require.Equal(t, tc.wantCode, failed.Code)
				require.False(t, failed.Blocked)
				return
			}
			require.NoError(t, err)
			require.Equal(t, client.FlushProcessed, res.Status)
			require.Equal(t, int64(3), res.CurrentCursor)
			require.Equal(t, int64(3), res.ProcessedSourceCount)
			require.NotNil(t, res.Memory)
			require.Equal(t, tc.wantRev, res.Memory.Revision)
			require.Equal(t, "op-1", *res.OperationID)
		})
	}
}

func TestFlushMemoryTransientPollFailuresAreRetried(t *testing.T) {
	unavailable := func(w http.ResponseWriter) {
		writeError(w, http.StatusServiceUnavailable, "runtime_not_ready", "not ready", nil)
	}
	api := &opAPI{script: []func(http.ResponseWriter){unavailable, unavailable,
		record("succeeded", 1, "", map[string]any{"type": "memory_flush", "current_cursor": 1, "memory": nil})}}
	srv := httptest.NewServer(api.handler())
	t.Cleanup(srv.Close)
	clock := newFakeClock()
	c := client.New(srv.URL, client.WithClock(clock.now, clock.sleep))
	res, err := c.FlushMemory(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, int64(1), res.CurrentCursor)
	require.Nil(t, res.Memory)
	require.Equal(t, 3, api.pollCount())
}

func TestFlushMemoryImmediateAnswer(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		require.Equal(t, "respond-async", r.Header.Get("Prefer"))
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		require.Equal(t, map[string]any{"scope_id": "s"}, body)
		writeJSON(w, http.StatusOK, map[string]any{"status": "idle", "previous_cursor": 4, "current_cursor": 4,
			"high_watermark": 4, "processed_source_count": 0, "memory": map[string]any{"revision": 2}, "operation_id": nil})
	}))
	t.Cleanup(srv.Close)
	res, err := client.New(srv.URL).FlushMemory(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, client.FlushIdle, res.Status)
	require.Equal(t, int64(4), res.CurrentCursor)
	require.Nil(t, res.OperationID)
	require.Equal(t, int64(1), n.Load())
}

func TestFlushMemoryConflicts(t *testing.T) {
	for _, tc := range []struct {
		code, wantCode string
		blocked        bool
	}{
		{code: "operation_blocked", wantCode: "provider_invalid_output", blocked: true},
		{code: "operation_failed", wantCode: "provider_invalid_output"},
		{code: "operation_cancelled", wantCode: "cancelled"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("POST /v1/memory/flush", func(w http.ResponseWriter, r *http.Request) {
				writeError(w, http.StatusConflict, tc.code, "held by a failed operation", map[string]any{"operation_id": "op-1"})
			})
			mux.HandleFunc("GET /v1/operations/op-1", func(w http.ResponseWriter, r *http.Request) {
				record("failed", 5, "provider_invalid_output", nil)(w)
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			_, err := client.New(srv.URL).FlushMemory(context.Background(), "s")
			var failed *client.OperationFailedError
			require.ErrorAs(t, err, &failed)
			require.Equal(t, "op-1", failed.OperationID)
			require.Equal(t, tc.wantCode, failed.Code)
			require.Equal(t, tc.blocked, failed.Blocked)
		})
	}
}

func TestAPIErrorDecoding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/sources":
			w.Header().Set("X-Request-ID", "req-42")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"error":{"code":"invalid_request","message":"must be 1..65536 bytes","details":{"field":"content"}}}`))
		case "/v1/operations/op-9/cancel":
			w.Header().Set("X-Request-ID", "req-43")
			writeErrorNoID(w, http.StatusConflict, `{"error":{"code":"operation_conflict","message":"the operation is in another state or version","details":{"operation_id":"op-9","status":"succeeded","actual_version":4}}}`)
		case "/v1/memory":
			w.Header().Set("Retry-After", "3")
			writeErrorNoID(w, http.StatusTooManyRequests, `{"error":{"code":"rate_limited","message":"slow down","details":null}}`)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL)
	ctx := context.Background()

	_, err := c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "s"})
	var ae *client.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnprocessableEntity, ae.Status)
	require.Equal(t, "invalid_request", ae.Code)
	require.Equal(t, "must be 1..65536 bytes", ae.Message)
	require.Equal(t, "content", ae.Field())
	require.Equal(t, "req-42", ae.RequestID)
	require.Equal(t, "invalid_request: must be 1..65536 bytes (field content, request id req-42)", ae.Error())

	_, err = c.CancelOperation(ctx, "op-9", 3)
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "operation_conflict", ae.Code)
	require.Equal(t, "req-43", ae.RequestID)
	require.Equal(t, map[string]any{"operation_id": "op-9", "status": "succeeded", "actual_version": float64(4)}, ae.Details)

	_, err = c.GetMemory(ctx, "s")
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "rate_limited", ae.Code)
	require.Equal(t, 3*time.Second, ae.RetryAfter)
	require.True(t, ae.Temporary())

	_, err = c.ListOperations(ctx, client.ListOperationsParams{})
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusBadGateway, ae.Status)
	require.Equal(t, client.CodeUnexpectedResponse, ae.Code)
}

func writeErrorNoID(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func TestTokenAndRequestShape(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		bodies = append(bodies, string(b))
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/sources":
			if r.Method == http.MethodPost {
				writeJSON(w, http.StatusCreated, map[string]any{"scope_id": "s", "source_id": "src-1", "journal_position": 1, "created": true})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"items": []any{}, "next_after": nil})
		case "/v1/memory/search":
			writeJSON(w, http.StatusOK, map[string]any{"scope_id": "s", "revision": 3, "created_at": "2026-12-02T13:00:00.123456Z",
				"evicted": map[string]any{"count": 2, "entry_ids": []int{4, 9}},
				"entries": []any{map[string]any{"entry_no": 1, "entry_id": 17, "content": "fact", "source_positions": []int{1, 2}}}})
		case "/v1/operations":
			writeJSON(w, http.StatusOK, map[string]any{"items": []any{}, "next_cursor": "abc"})
		default:
			writeJSON(w, http.StatusOK, map[string]any{})
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c := client.New(srv.URL+"/", client.WithToken("s3cret"))

	res, err := c.CaptureSource(ctx, client.CaptureSourceRequest{ScopeID: "s", Content: "hello",
		Metadata: json.RawMessage(`{"kind":"note"}`)})
	require.NoError(t, err)
	require.Equal(t, client.CaptureSourceResult{ScopeID: "s", SourceID: "src-1", JournalPosition: 1, Created: true}, res)
	_, err = c.ListSources(ctx, client.ListSourcesParams{ScopeID: "s", After: 5, Limit: 10})
	require.NoError(t, err)
	m, err := c.SearchMemoryWith(ctx, client.SearchParams{ScopeID: "s", Q: "a b&c", Limit: 5, Mode: client.ModeSemantic})
	require.NoError(t, err)
	require.Equal(t, int64(3), *m.Revision)
	require.Equal(t, 123456000, m.CreatedAt.Nanosecond())
	require.Equal(t, []int64{1, 2}, m.Entries[0].SourcePositions)
	require.Equal(t, int64(17), *m.Entries[0].EntryID)
	require.Equal(t, &client.Eviction{Count: 2, EntryIDs: []int64{4, 9}}, m.Evicted)
	ops, err := c.ListOperations(ctx, client.ListOperationsParams{Kind: "memory_flush", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, "abc", *ops.NextCursor)
	_, err = c.RetryOperation(ctx, "op/1", 4)
	require.NoError(t, err)

	require.Len(t, got, 5)
	for _, r := range got {
		require.Equal(t, "Bearer s3cret", r.Header.Get("Authorization"))
	}
	require.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
	require.JSONEq(t, `{"scope_id":"s","content":"hello","metadata":{"kind":"note"}}`, bodies[0])
	require.Equal(t, url.Values{"scope_id": {"s"}, "after": {"5"}, "limit": {"10"}}, got[1].URL.Query())
	require.Equal(t, url.Values{"scope_id": {"s"}, "q": {"a b&c"}, "limit": {"5"}, "mode": {"semantic"}}, got[2].URL.Query())
	require.Equal(t, url.Values{"kind": {"memory_flush"}, "limit": {"2"}}, got[3].URL.Query())
	require.Equal(t, "/v1/operations/op%2F1/retry", got[4].URL.EscapedPath())
	require.JSONEq(t, `{"expected_version":4}`, bodies[4])

	// Without a token no Authorization header is sent.
	_, err = client.New(srv.URL).GetMemory(ctx, "s")
	require.NoError(t, err)
	require.Empty(t, got[5].Header.Get("Authorization"))
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	c := client.New("http://" + addr)
	_, err = c.GetOperation(context.Background(), "op-1")
	var ce *client.ConnectionError
	require.ErrorAs(t, err, &ce)
	require.False(t, ce.Timeout)
	require.True(t, strings.HasPrefix(err.Error(), "cannot reach powercontext at http://"+addr+": "), err.Error())

	// The caller's own cancellation is not reported as an unreachable server.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.GetOperation(ctx, "op-1")
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.As(err, &ce))
}

func TestPerRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	_, err := client.New(srv.URL, client.WithTimeout(50*time.Millisecond)).GetMemory(context.Background(), "s")
	var ce *client.ConnectionError
	require.ErrorAs(t, err, &ce)
	require.True(t, ce.Timeout)
}

func TestReady(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/health/ready", r.URL.Path)
		name := "ready"
		if status != http.StatusOK {
			name = "not_ready"
		}
		writeJSON(w, status, map[string]any{"status": name, "checks": map[string]any{"database": "ok"}})
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL)
	h, err := c.Ready(context.Background())
	require.NoError(t, err)
	require.Equal(t, "ready", h.Status)
	status = http.StatusServiceUnavailable
	h, err = c.Ready(context.Background())
	var ae *client.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusServiceUnavailable, ae.Status)
	require.Equal(t, "not_ready", h.Status)
}
