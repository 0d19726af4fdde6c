package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

const testOwner = "handlers-test-worker"

var timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// syncBuffer is a log sink safe for the flush waiters' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is one server over a fresh migrated SQLite store.
type env struct {
	t         testing.TB
	store     db.Store
	ledger    *coordinator.Ledger
	flusher   *memory.Flusher
	incubator *experience.Incubator
	deps      Deps
	e         *echo.Echo
	logs      *syncBuffer
}

func newEnv(t testing.TB, mutate ...func(*Deps)) *env {
	t.Helper()
	return newEnvOn(t, enginetest.Open(t, db.EngineSQLite), mutate...)
}

// newEnvOn is newEnv on a store of the caller's engine.
func newEnvOn(t testing.TB, store db.Store, mutate ...func(*Deps)) *env {
	t.Helper()
	ledger := coordinator.NewLedger(store)
	flusher := &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(3), Poll: 5 * time.Millisecond}
	incubator := &experience.Incubator{Ledger: ledger, Consumer: experience.Consumer(3), Poll: 5 * time.Millisecond}
	logs := &syncBuffer{}
	d := Deps{
		Journal:          sources.NewJournal(store),
		Flusher:          flusher,
		Memory:           memory.Reader{Store: store},
		Experience:       experience.Reviews{Store: store},
		Incubator:        incubator,
		Ledger:           ledger,
		Forgetter:        &lifecycle.Forgetter{Ledger: ledger, MaxAttempts: 3},
		Eraser:           &lifecycle.Eraser{Ledger: ledger, MaxAttempts: 3},
		Store:            store,
		FlushDefaultWait: 2 * time.Second,
		FlushMaxWait:     5 * time.Second,
		Role:             "all",
		Logger:           zerolog.New(logs),
	}
	for _, m := range mutate {
		m(&d)
	}
	return &env{t: t, store: store, ledger: ledger, flusher: flusher, incubator: incubator, deps: d, e: New(d), logs: logs}
}

type resp struct {
	Code   int
	Header http.Header
	Body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// errCode asserts the error envelope and returns (code, details).
func (r resp) errCode(t testing.TB) (string, map[string]any) {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "error envelope missing: %s", r.Body)
	require.Contains(t, e, "details")
	require.NotEmpty(t, e["message"])
	code, _ := e["code"].(string)
	details, _ := e["details"].(map[string]any)
	return code, details
}

func (r resp) requireError(t testing.TB, status int, code string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.Code, "body: %s", r.Body)
	got, details := r.errCode(t)
	require.Equal(t, code, got)
	return details
}

type hdr map[string]string

var jsonCT = hdr{"Content-Type": "application/json"}

// do serves one request and checks the exchange against api/openapi.yaml (checkContract): every handler test is
// also a contract test.
func (e *env) do(method, target string, body io.Reader, h hdr) resp {
	e.t.Helper()
	return exchange(e.t, e.e, method, target, body, h)
}

// exchange serves one request through h and checks it against api/openapi.yaml.
func exchange(t testing.TB, h http.Handler, method, target string, body io.Reader, headers hdr) resp {
	t.Helper()
	var reqBody []byte
	if body != nil {
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		reqBody, body = b, bytes.NewReader(b)
	}
	req := newRequest(method, target, body, headers)
	r := serveRequest(h, req)
	checkContract(t, req, reqBody, r)
	return r
}

// serve runs one request through h (no testing.TB: usable inside a fuzz target).
func serve(h http.Handler, method, target string, body io.Reader, headers hdr) resp {
	return serveRequest(h, newRequest(method, target, body, headers))
}

func newRequest(method, target string, body io.Reader, headers hdr) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.RemoteAddr = "192.0.2.10:4242"
	req.Host = "127.0.0.1:8080" // the default listen address; a test may set "Host"
	for k, v := range headers {
		switch k {
		case "Host":
			req.Host = v
			continue
		case "RemoteAddr":
			req.RemoteAddr = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

func serveRequest(h http.Handler, req *http.Request) resp {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

func (e *env) get(target string) resp { return e.do(http.MethodGet, target, nil, nil) }

func (e *env) post(target, body string, extra ...hdr) resp {
	h := hdr{"Content-Type": "application/json"}
	for _, x := range extra {
		for k, v := range x {
			h[k] = v
		}
	}
	return e.do(http.MethodPost, target, strings.NewReader(body), h)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (e *env) capture(scope, content string, metadata map[string]any) int64 {
	e.t.Helper()
	body := map[string]any{"scope_id": scope, "content": content}
	if metadata != nil {
		body["metadata"] = metadata
	}
	r := e.post("/v1/sources", mustJSON(body))
	require.Equal(e.t, http.StatusCreated, r.Code, "body: %s", r.Body)
	return int64(r.json(e.t)["journal_position"].(float64))
}

// step claims every due head this test worker supports and completes each with its handler, or fails it with
// fail (non-retryable) when fail is set.
func (e *env) step(fail *coordinator.Failure) int {
	e.t.Helper()
	hs := map[string]coordinator.Handler{
		memory.Kind:          &memory.Handler{Store: e.store, Provider: provider.NewLocal(), Embedder: provider.NewLocalEmbedder()},
		memory.KindEmbed:     &memory.EmbedHandler{Ledger: e.ledger, Embedder: provider.NewLocalEmbedder()},
		experience.Kind:      &experience.Handler{Store: e.store, Provider: provider.NewLocal()},
		lifecycle.KindRedact: &lifecycle.RedactHandler{Ledger: e.ledger},
		lifecycle.KindErase:  &lifecycle.EraseHandler{Ledger: e.ledger},
	}
	sup := coordinator.Supported{}
	for k, h := range hs {
		sup[k] = h.PayloadVersions()
	}
	ctx := context.Background()
	res, err := e.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: testOwner, Supported: sup, Slots: 8, Lease: time.Minute})
	if err != nil {
		e.t.Errorf("claim: %v", err)
		return 0
	}
	for _, c := range res.Claims {
		if fail != nil {
			if _, err := e.ledger.Fail(ctx, c, *fail, 0); err != nil {
				e.t.Errorf("fail: %v", err)
			}
			continue
		}
		p, err := hs[c.Item.Kind].Prepare(ctx, c.Item)
		if err != nil {
			e.t.Errorf("prepare: %v", err)
			continue
		}
		if _, err := e.ledger.Complete(ctx, c, p.Result, p.Commit); err != nil {
			e.t.Errorf("complete: %v", err)
		}
	}
	return len(res.Claims)
}

var poison = &coordinator.Failure{Category: coordinator.CategoryPayload, Code: coordinator.CodeInvalidPayload}

// enqueueMemory enqueues the scope's next memory window through the ledger (no HTTP).
func (e *env) enqueueMemory(scope string) db.WorkItem {
	e.t.Helper()
	res, err := e.ledger.Enqueue(context.Background(), memory.Consumer(3).EnqueueRequest(scope))
	require.NoError(e.t, err)
	require.False(e.t, res.Idle)
	return res.Item
}

func (e *env) enqueueExperience(scope string) db.WorkItem {
	e.t.Helper()
	res, err := e.ledger.Enqueue(context.Background(), experience.Consumer(3).EnqueueRequest(scope))
	require.NoError(e.t, err)
	require.False(e.t, res.Idle)
	return res.Item
}

func (e *env) enqueueMaintenance() db.WorkItem {
	e.t.Helper()
	res, err := e.ledger.Enqueue(context.Background(), coordinator.MaintenanceRequest())
	require.NoError(e.t, err)
	return res.Item
}

func (e *env) item(id string) db.WorkItem {
	e.t.Helper()
	w, err := e.ledger.Get(context.Background(), id)
	require.NoError(e.t, err)
	return w
}
