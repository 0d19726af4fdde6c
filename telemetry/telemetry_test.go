package telemetry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/telemetry"
)

// The work kinds the tests' telemetry is built with: the kind label names them, and every other kind is "other".
const (
	testKind   = "test.telemetry.kind"
	secondKind = "test.telemetry.second"
)

// The publication states the tests' telemetry is built with (app passes skills.States, which this package may not
// import).
var testStates = []string{"pending", "current", "drifted"}

func newTelemetry(t *testing.T) (*telemetry.Telemetry, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceVersion: "test", InstanceID: "test-member",
		Logger: zerolog.Nop(), SpanExporter: exp, Kinds: []string{testKind, secondKind},
		PublicationStates: testStates})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel, exp
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func enqueue(t *testing.T, l *coordinator.Ledger, lane string) coordinator.EnqueueResult {
	t.Helper()
	res, err := l.Enqueue(context.Background(), coordinator.EnqueueRequest{LaneKey: hash(lane),
		Spec: func(context.Context, db.Queries) (*coordinator.EnqueueSpec, error) {
			return &coordinator.EnqueueSpec{Kind: testKind, PayloadVersion: 1, ScopeID: lane, LogicalKey: hash(lane + "/w"),
				Payload: map[string]any{}, MaxAttempts: 5}, nil
		}})
	require.NoError(t, err)
	return res
}

// flakyHandler fails its first `fails` prepares with a retryable provider error, then succeeds.
type flakyHandler struct {
	fails int32
	calls atomic.Int32
}

func (h *flakyHandler) Kind() string { return testKind }
func (h *flakyHandler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: 1, Max: 1}
}
func (h *flakyHandler) Prepare(context.Context, db.WorkItem) (coordinator.Prepared, error) {
	if h.calls.Add(1) <= h.fails {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeUnavailable, true)
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "processed"}}, nil
}

// workUntilSucceeded runs a worker with tel's hooks until the item succeeds, then stops it (every attempt has ended).
func workUntilSucceeded(t *testing.T, l *coordinator.Ledger, tel *telemetry.Telemetry, h coordinator.Handler, workID string) {
	t.Helper()
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "telemetry-test-worker", Poll: 10 * time.Millisecond,
		RetryBase: time.Millisecond, RetryMax: time.Millisecond, Logger: zerolog.Nop(), Hooks: tel.WorkerHooks()}, h)
	require.NoError(t, err)
	stop := testutil.RunWorker(t, w)
	testutil.Eventually(t, 30*time.Second, func() bool {
		item, err := l.Get(context.Background(), workID)
		return err == nil && item.Status == db.StatusSucceeded
	}, "item %s did not succeed", workID)
	stop()
}

func spansNamed(exp *tracetest.InMemoryExporter, name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func intAttr(attrs []attribute.KeyValue, key string) int64 {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.AsInt64()
		}
	}
	return -1
}

// metricValue returns the value of the series of name with exactly labels (-1 when absent).
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue series
				}
			}
			return value(m)
		}
	}
	return -1
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

// Two attempts of one item: each work.execute is a new root whose ids are exactly the ones stored on its attempt
// row, and the second links to the first.
func TestRetriedAttemptSpanLinksToPreviousAttempt(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		tel, exp := newTelemetry(t)
		l := coordinator.NewLedger(s)
		l.SetHooks(tel.LedgerHooks())
		res := enqueue(t, l, "scope-link")
		workUntilSucceeded(t, l, tel, &flakyHandler{fails: 1}, res.Item.WorkID)

		attempts, err := l.Attempts(context.Background(), res.Item.WorkID)
		require.NoError(t, err)
		require.Len(t, attempts, 2)
		execs := spansNamed(exp, "work.execute")
		require.Len(t, execs, 2)
		sort.Slice(execs, func(i, j int) bool {
			return intAttr(execs[i].Attributes, "work.attempt") < intAttr(execs[j].Attributes, "work.attempt")
		})
		for i, a := range attempts {
			require.Equal(t, a.TraceID, execs[i].SpanContext.TraceID().String(), "attempt %d trace id", a.AttemptNo)
			require.Equal(t, a.SpanID, execs[i].SpanContext.SpanID().String(), "attempt %d span id", a.AttemptNo)
			require.False(t, execs[i].Parent.IsValid(), "work.execute is a new root")
			require.Equal(t, int64(a.AttemptNo), intAttr(execs[i].Attributes, "work.attempt"))
		}
		require.NotEqual(t, execs[0].SpanContext.TraceID(), execs[1].SpanContext.TraceID(), "retries are linked, not one trace")
		require.Empty(t, execs[0].Links)
		require.Len(t, execs[1].Links, 1)
		require.Equal(t, execs[0].SpanContext.TraceID(), execs[1].Links[0].SpanContext.TraceID())
		require.Equal(t, execs[0].SpanContext.SpanID(), execs[1].Links[0].SpanContext.SpanID())

		commits := spansNamed(exp, "work.commit")
		require.Len(t, commits, 1)
		require.Equal(t, execs[1].SpanContext.SpanID(), commits[0].Parent.SpanID(), "work.commit is a child of the attempt")
		require.Len(t, spansNamed(exp, "work.enqueue"), 1)
		claims := spansNamed(exp, "work.claim")
		require.NotEmpty(t, claims)
		var claimLinks []trace.SpanID
		for _, c := range claims {
			for _, ln := range c.Links {
				claimLinks = append(claimLinks, ln.SpanContext.SpanID())
			}
		}
		require.ElementsMatch(t, []trace.SpanID{execs[0].SpanContext.SpanID(), execs[1].SpanContext.SpanID()}, claimLinks)

		reg := tel.Registry()
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_work_enqueues_total", map[string]string{"kind": testKind, "outcome": "created"}))
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_work_attempts_total",
			map[string]string{"kind": testKind, "outcome": "retry_wait", "error_category": "provider"}))
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_work_attempts_total",
			map[string]string{"kind": testKind, "outcome": "succeeded", "error_category": "none"}))
		require.Equal(t, 2.0, metricValue(t, reg, "powercontext_work_claim_latency_seconds", map[string]string{"kind": testKind}))
	})
}

// A claim pass that recovers an expired lease counts it, and the next attempt links to the dead attempt's ids.
func TestLeaseExpirationCountedAndLinked(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		tel, exp := newTelemetry(t)
		l := coordinator.NewLedger(s)
		res := enqueue(t, l, "scope-expiry")
		dead, err := l.Claim(context.Background(), coordinator.ClaimRequest{Owner: "crashed-worker",
			Supported: coordinator.Supported{testKind: {Min: 1, Max: 1}}, Slots: 1, Lease: 200 * time.Millisecond,
			NewTrace: telemetry.NewTrace})
		require.NoError(t, err)
		require.Len(t, dead.Claims, 1)
		workUntilSucceeded(t, l, tel, &flakyHandler{}, res.Item.WorkID)

		require.Equal(t, 1.0, metricValue(t, tel.Registry(), "powercontext_work_lease_expirations_total",
			map[string]string{"kind": testKind, "outcome": db.OutcomeLeaseExpiredRetry}))
		execs := spansNamed(exp, "work.execute")
		require.Len(t, execs, 1)
		require.Len(t, execs[0].Links, 1)
		require.Equal(t, dead.Claims[0].TraceID, execs[0].Links[0].SpanContext.TraceID().String())
		require.Equal(t, dead.Claims[0].SpanID, execs[0].Links[0].SpanContext.SpanID().String())
	})
}

// The leader refreshes the queue gauges from the database each tick; losing the lease clears them.
func TestSchedulerLeadershipAndQueueGauges(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		tel, exp := newTelemetry(t)
		l := coordinator.NewLedger(s)
		enqueue(t, l, "scope-queue")
		now := time.Now().UTC().Truncate(time.Microsecond)
		require.NoError(t, s.SkillPublicationInsert(context.Background(), db.SkillPublication{TargetID: uuid.NewString(),
			SkillName: "a", ScopeID: "scope-queue", DesiredState: "published", DesiredRevision: 1, State: "pending",
			Generation: 1, CreatedAt: now, UpdatedAt: now}))
		sched, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "sched", Logger: zerolog.Nop(),
			Hooks: tel.SchedulerHooks(l)})
		require.NoError(t, err)
		require.NoError(t, sched.Tick(context.Background()))

		reg := tel.Registry()
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_scheduler_leader", map[string]string{}))
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_scheduler_leadership_changes_total", map[string]string{"outcome": "acquired"}))
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": testKind, "status": "queued"}))
		require.Equal(t, 0.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": testKind, "status": "running"}))
		require.GreaterOrEqual(t, metricValue(t, reg, "powercontext_work_queue_oldest_age_seconds", map[string]string{"kind": testKind, "status": "queued"}), 0.0)
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "pending"}))
		require.Equal(t, 0.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "current"}))
		ticks := spansNamed(exp, "scheduler.tick")
		require.Len(t, ticks, 1)
		require.Contains(t, ticks[0].Attributes, attribute.Bool("scheduler.leader", true))

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.NoError(t, sched.Run(ctx)) // one tick, then release: leadership lost
		require.Equal(t, 0.0, metricValue(t, reg, "powercontext_scheduler_leader", map[string]string{}))
		require.Equal(t, 1.0, metricValue(t, reg, "powercontext_scheduler_leadership_changes_total", map[string]string{"outcome": "lost"}))
		require.Equal(t, -1.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": testKind, "status": "queued"}),
			"a process that does not lead reports no queue gauges")
		require.Equal(t, -1.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "pending"}),
			"nor the skill-publication gauge")
	})
}

func TestSetQueueAndMembersBoundLabels(t *testing.T) {
	tel, _ := newTelemetry(t)
	tel.SetQueue([]coordinator.QueueStat{
		{Kind: "tenant-supplied.kind", Status: db.StatusQueued, Count: 2, OldestAge: 3 * time.Second},
		{Kind: "another.kind", Status: db.StatusQueued, Count: 1, OldestAge: 5 * time.Second},
		{Kind: testKind, Status: db.StatusRetryWait, Count: 4, OldestAge: time.Second},
	})
	reg := tel.Registry()
	require.Equal(t, 3.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": "other", "status": "queued"}))
	require.Equal(t, 5.0, metricValue(t, reg, "powercontext_work_queue_oldest_age_seconds", map[string]string{"kind": "other", "status": "queued"}))
	require.Equal(t, 4.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": testKind, "status": "retry_wait"}))
	require.Equal(t, 0.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": secondKind, "status": "failed"}))

	tel.SetMembers([]db.RuntimeMember{{Role: "api"}, {Role: "api"}, {Role: "worker"}, {Role: "weird"}})
	require.Equal(t, 2.0, metricValue(t, reg, "powercontext_runtime_members", map[string]string{"role": "api"}))
	require.Equal(t, 0.0, metricValue(t, reg, "powercontext_runtime_members", map[string]string{"role": "scheduler"}))
	require.Equal(t, 1.0, metricValue(t, reg, "powercontext_runtime_members", map[string]string{"role": "other"}))
}

// The skill-publication gauge names exactly the configured states: each is set, 0 when it has no publication; a state
// outside the set is not reported.
func TestSetSkillPublicationsBoundsStates(t *testing.T) {
	tel, _ := newTelemetry(t)
	reg := tel.Registry()
	tel.SetSkillPublications(map[string]int64{"pending": 4, "drifted": 1, "from-a-newer-release": 7})
	require.Equal(t, 4.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "pending"}))
	require.Equal(t, 0.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "current"}))
	require.Equal(t, 1.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "drifted"}))
	require.Equal(t, -1.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "from-a-newer-release"}))
	tel.SetSkillPublications(nil)
	require.Equal(t, 0.0, metricValue(t, reg, "powercontext_skill_publications", map[string]string{"state": "pending"}),
		"a state that empties reads 0, not its last value")
}

// The HTTP middleware labels requests by route template (never the raw path) and a bounded method.
func TestHTTPMiddlewareUsesRouteTemplates(t *testing.T) {
	tel, exp := newTelemetry(t)
	e := echo.New()
	e.GET("/v1/operations/:operation_id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET("/health/live", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.GET("/boom", func(c echo.Context) error { return errors.New("secret failure text") })
	e.Pre(tel.HTTPMiddleware(e))

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/v1/operations/private-work-id-123"},
		{http.MethodGet, "/no/such/private-path"},
		{"BREW", "/v1/operations/x"},
		{http.MethodGet, "/health/live"},
		{http.MethodGet, "/boom"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(r.method, r.path, nil)
		req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		e.ServeHTTP(rec, req)
	}
	reg := tel.Registry()
	count := func(route, method, class string) float64 {
		return metricValue(t, reg, "powercontext_http_requests_total", map[string]string{"route": route, "method": method, "status_class": class})
	}
	require.Equal(t, 1.0, count("/v1/operations/:operation_id", "GET", "2xx"))
	require.Equal(t, 1.0, count("unmatched", "GET", "4xx"))
	require.Equal(t, 1.0, count("/health/live", "GET", "2xx"))
	require.Equal(t, 1.0, count("/boom", "GET", "5xx"))
	require.Equal(t, 1.0, count("/v1/operations/:operation_id", "other", "4xx"), "an unknown method is 'other' (405)")

	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
		require.Equal(t, "0af7651916cd43dd8448eb211c80319c", s.SpanContext.TraceID().String(), "the caller's trace context is continued")
		require.Equal(t, trace.SpanKindServer, s.SpanKind)
	}
	require.ElementsMatch(t, []string{"GET /v1/operations/:operation_id", "GET unmatched", "other /v1/operations/:operation_id", "GET /boom"}, names,
		"health checks are not traced")
}

type stubProvider struct{ err error }

func (p stubProvider) Name() string { return "openai" }
func (p stubProvider) ExtractMemory(context.Context, provider.ExtractMemoryRequest) (provider.ExtractMemoryResponse, error) {
	return provider.ExtractMemoryResponse{}, p.err
}
func (p stubProvider) IncubateExperience(context.Context, provider.IncubateRequest) (provider.IncubateResponse, error) {
	return provider.IncubateResponse{}, p.err
}

func TestProviderWrapperOutcomes(t *testing.T) {
	tel, exp := newTelemetry(t)
	require.Equal(t, "unknown", tel.ProviderState())
	cases := []struct {
		err     error
		outcome string
	}{
		{nil, "ok"},
		{coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRateLimited, true), "rate_limited"},
		{&provider.RetryAfterError{Err: coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRateLimited, true), RetryAfter: time.Second}, "rate_limited"},
		{coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, true), "invalid_output"},
		{coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeRequestRejected, false), "request_rejected"},
		{errors.New("upstream said: private text"), "error"},
		{context.Canceled, "canceled"},
		{coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeUnavailable, true), "unavailable"},
	}
	want := map[string]float64{}
	for _, c := range cases {
		want[c.outcome]++
		p := tel.WrapProvider(stubProvider{err: c.err})
		require.Equal(t, "openai", p.Name())
		_, err := p.ExtractMemory(context.Background(), provider.ExtractMemoryRequest{})
		require.Equal(t, c.err, err, "errors pass through unchanged")
		require.Equal(t, want[c.outcome], metricValue(t, tel.Registry(), "powercontext_provider_calls_total", map[string]string{"provider": "openai", "outcome": c.outcome}))
	}
	require.Equal(t, "unavailable", tel.ProviderState())
	for _, s := range exp.GetSpans() {
		require.Equal(t, "provider.extract_memory", s.Name)
		require.NotContains(t, s.Status.Description, "private")
	}
}

func TestTracingOffByDefault(t *testing.T) {
	for _, c := range []struct {
		env map[string]string
		on  bool
		err bool
	}{
		{env: map[string]string{}, on: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, on: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: true},
	} {
		tel, err := telemetry.New(context.Background(), telemetry.Config{Logger: zerolog.Nop(),
			Getenv: func(k string) string { return c.env[k] }})
		if c.err {
			require.ErrorIs(t, err, telemetry.ErrUnsupportedOTLPProtocol)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.on, tel.TracingEnabled(), "%v", c.env)
		if !c.on {
			// Off: spans still carry valid ids (attempt rows and logs correlate) but are never sampled.
			_, span := tel.Tracer().Start(context.Background(), "x")
			require.True(t, span.SpanContext().IsValid())
			require.False(t, span.SpanContext().IsSampled())
			span.End()
		}
		require.NoError(t, tel.Shutdown(context.Background()))
	}
}

func TestNewTraceIDsAreValidAndDistinct(t *testing.T) {
	seen := sync.Map{}
	for range 1000 {
		tid, sid := telemetry.NewTrace()
		require.Len(t, tid, 32)
		require.Len(t, sid, 16)
		_, dup := seen.LoadOrStore(tid, true)
		require.False(t, dup)
	}
}

func TestMetricFamiliesListsEveryMetric(t *testing.T) {
	f := telemetry.MetricFamilies()
	require.Len(t, f, 16)
	require.Equal(t, []string{"state"}, f["powercontext_skill_publications"])
	require.Equal(t, []string{"kind", "status"}, f["powercontext_work_queue_depth"])
	require.Equal(t, []string(nil), f["powercontext_scheduler_leader"])
	require.Equal(t, []string{"method", "route", "status_class"}, f["powercontext_http_requests_total"])
}

// The kind label names exactly the kinds the process was built with, each once, then "other".
func TestKindLabelsAreTheConfiguredKinds(t *testing.T) {
	require.Equal(t, []string{"a", "b", telemetry.Other}, telemetry.KindLabels([]string{"a", "", "b", "a", telemetry.Other}))
	require.Equal(t, []string{telemetry.Other}, telemetry.KindLabels(nil))
	require.Equal(t, []string{testKind, telemetry.Other}, telemetry.LabelValues([]string{testKind}, nil)["kind"])
	require.Equal(t, testStates, telemetry.LabelValues(nil, testStates)["state"])

	tel, err := telemetry.New(context.Background(), telemetry.Config{Logger: zerolog.Nop(), Kinds: []string{secondKind}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tel.SetQueue([]coordinator.QueueStat{{Kind: testKind, Status: db.StatusQueued, Count: 2}})
	reg := tel.Registry()
	require.Equal(t, 2.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": "other", "status": "queued"}),
		"a kind the process was not built with is other")
	require.Equal(t, 0.0, metricValue(t, reg, "powercontext_work_queue_depth", map[string]string{"kind": secondKind, "status": "queued"}))
}

// telemetry is handed its kinds (app.WorkKinds): it imports no domain package, not even in its tests (also a depguard
// rule of .golangci.yml).
func TestTelemetryImportsNoDomainPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, spec := range parsed.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			for _, domain := range []string{"sources", "memory", "experience", "lifecycle"} {
				require.NotEqual(t, "github.com/powercontext/powercontext/"+domain, p, "%s imports a domain package", f)
			}
		}
	}
}
