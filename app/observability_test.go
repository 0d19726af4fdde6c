package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/telemetry"
)

// Markers the fake model reacts to (they travel inside Source content, which the provider sends in the prompt).
const (
	markerHang = "hang-until-cancelled"
	markerFail = "fail-while-asked"
	markerHold = "hold-until-released"
)

// fakeModel is an OpenAI-compatible chat-completions server. It answers an empty memory, except: the first call
// whose prompt carries failOnce fails with an error message carrying errorCanary; a prompt with markerFail fails
// while failing is set; a prompt with markerHang blocks until the caller goes away; a prompt with markerHold blocks
// until release is closed (then answers) or the caller goes away.
type fakeModel struct {
	apiKey, failOnce, errorCanary string
	failedOnce                    atomic.Bool
	failing                       atomic.Bool
	hanging                       chan struct{} // receives once per hanging or held call
	release                       chan struct{} // closed to let held calls answer
	calls                         atomic.Int32
	badAuth                       atomic.Int32
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+f.apiKey {
		f.badAuth.Add(1)
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	fail := func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"upstream exploded: %s","type":"server_error"}}`, f.errorCanary)
	}
	switch {
	case bytes.Contains(body, []byte(markerHang)):
		select {
		case f.hanging <- struct{}{}:
		default:
		}
		<-r.Context().Done()
		return
	case bytes.Contains(body, []byte(markerHold)):
		select {
		case f.hanging <- struct{}{}:
		default:
		}
		select {
		case <-f.release:
		case <-r.Context().Done():
			return
		}
	case bytes.Contains(body, []byte(markerFail)) && f.failing.Load():
		fail()
		return
	case f.failOnce != "" && bytes.Contains(body, []byte(f.failOnce)) && f.failedOnce.CompareAndSwap(false, true):
		fail()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"{\"operations\":[]}"}}]}`)
}

// keptSpans is an in-memory exporter whose spans survive the runtime's shutdown (tracetest's Shutdown clears them).
type keptSpans struct{ *tracetest.InMemoryExporter }

func (keptSpans) Shutdown(context.Context) error { return nil }

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

// obsEnv is one real single_node runtime (API, scheduler and worker) on a fresh database, driven over HTTP.
type obsEnv struct {
	base    string
	member  string // the runtime's member id
	logs    *syncBuffer
	spans   keptSpans
	model   *fakeModel
	url     dburl.URL
	cancel  func()        // begins the shutdown (what SIGTERM does)
	stopped chan struct{} // closed when Run has returned
	runErr  error         // Run's result, once stopped is closed
	stop    func()        // cancel, then require Run to return nil
}

// startRuntime starts a single_node runtime with short timings on a fresh database of engine; adjust changes the
// configuration first.
func startRuntime(t *testing.T, engine db.Engine, model *fakeModel, adjust ...func(*app.Config)) *obsEnv {
	t.Helper()
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	raw := enginetest.NewDatabase(t, engine)
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = raw
	cfg.Listen = "127.0.0.1:0"
	cfg.ProviderKind, cfg.ProviderBaseURL, cfg.ProviderModel, cfg.ProviderAPIKey = "openai", srv.URL+"/v1", "test-model", model.apiKey
	cfg.ProviderTimeout = 10
	cfg.WorkerPollSeconds, cfg.WorkerRetryBaseSeconds, cfg.WorkerRetryMaxSeconds = 0.02, 0.01, 0.02
	cfg.WorkerLeaseSeconds, cfg.WorkerHeartbeatSeconds, cfg.WorkerShutdownGraceSeconds = 3, 0.1, 2
	cfg.WorkerMaxAttempts = 2
	cfg.SchedulerLeaseSeconds, cfg.SchedulerRenewSeconds = 1.5, 0.2
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.2, 5
	cfg.LogLevel = "debug"      // capture every line a component writes
	cfg.MetricsCacheSeconds = 0 // every /metrics read sees the counters of the actions before it
	for _, f := range adjust {
		f(&cfg)
	}
	require.NoError(t, cfg.Validate())

	env := &obsEnv{logs: &syncBuffer{}, spans: keptSpans{tracetest.NewInMemoryExporter()}, model: model,
		url: enginetest.ParseURL(t, raw)}
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, env.logs, app.WithSpanExporter(env.spans))
	require.NoError(t, err)
	env.base, env.member, env.cancel = "http://"+rt.Addr(), rt.MemberID(), cancel
	env.stopped = make(chan struct{})
	go func() {
		env.runErr = rt.Run(ctx)
		close(env.stopped)
	}()
	env.stop = func() {
		cancel()
		<-env.stopped
		require.NoError(t, env.runErr)
	}
	t.Cleanup(env.stop)
	return env
}

type response struct {
	status int
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal(r.body, &out), string(r.body))
	return out
}

func (e *obsEnv) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, body: b}
}

func (e *obsEnv) capture(t *testing.T, scope, content string) {
	t.Helper()
	r := e.do(t, http.MethodPost, "/v1/sources", map[string]any{"scope_id": scope, "content": content})
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
}

func (e *obsEnv) operation(t *testing.T, id string) map[string]any {
	t.Helper()
	r := e.do(t, http.MethodGet, "/v1/operations/"+id, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	return r.json(t)
}

func (e *obsEnv) waitStatus(t *testing.T, id string, statuses ...string) map[string]any {
	t.Helper()
	var op map[string]any
	require.Eventually(t, func() bool {
		op = e.operation(t, id)
		return slices.Contains(statuses, op["status"].(string))
	}, 20*time.Second, 20*time.Millisecond, "operation %s never reached %v", id, statuses)
	return op
}

func (e *obsEnv) metrics(t *testing.T) string {
	t.Helper()
	r := e.do(t, http.MethodGet, "/metrics", nil)
	require.Equal(t, http.StatusOK, r.status)
	return string(r.body)
}

// rows renders every row of table as text.
func rows(t *testing.T, sqlDB *sql.DB, table string) string {
	t.Helper()
	rs, err := sqlDB.Query("SELECT * FROM " + table)
	require.NoError(t, err)
	defer rs.Close()
	cols, err := rs.Columns()
	require.NoError(t, err)
	var sb strings.Builder
	n := 0
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rs.Scan(ptrs...))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			fmt.Fprintf(&sb, "%s=%v ", cols[i], v)
		}
		sb.WriteString("\n")
		n++
	}
	require.NoError(t, rs.Err())
	require.NotZero(t, n, "table %s has rows", table)
	return sb.String()
}

// spanText renders everything a span exports: names, attributes, events, status, links and resource.
func spanText(spans tracetest.SpanStubs) string {
	var sb strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&sb, "%s %s %s %v %s\n", s.Name, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Status.Code, s.Status.Description)
		for _, a := range s.Attributes {
			fmt.Fprintf(&sb, "  attr %s=%s\n", a.Key, a.Value.String())
		}
		for _, ev := range s.Events {
			fmt.Fprintf(&sb, "  event %s\n", ev.Name)
			for _, a := range ev.Attributes {
				fmt.Fprintf(&sb, "    attr %s=%s\n", a.Key, a.Value.String())
			}
		}
		for _, l := range s.Links {
			fmt.Fprintf(&sb, "  link %s %s\n", l.SpanContext.TraceID(), l.SpanContext.SpanID())
			for _, a := range l.Attributes {
				fmt.Fprintf(&sb, "    attr %s=%s\n", a.Key, a.Value.String())
			}
		}
		if s.Resource != nil {
			for _, a := range s.Resource.Attributes() {
				fmt.Fprintf(&sb, "  resource %s=%s\n", a.Key, a.Value.String())
			}
		}
	}
	return sb.String()
}

// The canary test (issue 8): a Source's content, a provider error message and the provider API key are unique
// canaries; a flush that fails once and then succeeds runs through a real runtime; none of the canaries appears in
// the logs, /metrics, the exported spans, pc_work_items or pc_work_attempts. The same run proves the retry's
// work.execute links to the first attempt's span, whose ids are the ones stored on the attempt rows.
func TestCanariesNeverLeak(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		canarySource := "canary-source-" + uuid.NewString()
		canaryError := "canary-error-" + uuid.NewString()
		canaryKey := "canary-key-" + uuid.NewString()
		model := &fakeModel{apiKey: canaryKey, failOnce: canarySource, errorCanary: canaryError, hanging: make(chan struct{}, 1)}
		env := startRuntime(t, engine, model)

		env.capture(t, "scope-canary", "the user said: "+canarySource)
		r := env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-canary"}, "Prefer", "wait=20")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		flushed := r.json(t)
		require.Equal(t, "processed", flushed["status"])
		require.True(t, model.failedOnce.Load(), "the provider failed once")
		require.Zero(t, model.badAuth.Load(), "the API key was sent")
		opID := flushed["operation_id"].(string)
		op := env.operation(t, opID)
		require.EqualValues(t, 2, op["attempt_count"])

		ready := env.do(t, http.MethodGet, "/health/ready", nil)
		require.Equal(t, http.StatusOK, ready.status, string(ready.body))
		checks := ready.json(t)["checks"].(map[string]any)
		for _, name := range []string{"database", "membership", "scheduler", "worker", "provider"} {
			require.Contains(t, checks, name)
		}
		require.Equal(t, "ok", checks["provider"], "the last provider call succeeded")
		metricsText := env.metrics(t)
		env.stop() // every span has ended and every log line is written

		sqlDB := enginetest.OpenSQLDB(t, env.url)
		items, attemptRows := rows(t, sqlDB, "pc_work_items"), rows(t, sqlDB, "pc_work_attempts")
		spans := env.spans.GetSpans()
		require.NotEmpty(t, spans)
		exported := spanText(spans)
		for _, canary := range []string{canarySource, canaryError, canaryKey} {
			require.NotContains(t, env.logs.String(), canary, "logs")
			require.NotContains(t, metricsText, canary, "/metrics")
			require.NotContains(t, exported, canary, "spans")
			require.NotContains(t, items, canary, "pc_work_items")
			require.NotContains(t, attemptRows, canary, "pc_work_attempts")
		}
		require.Contains(t, env.logs.String(), `"message":"http request"`, "the request log is captured")

		// Two attempts: each stored (trace, span) id pair is an exported work.execute root span, and the retry's span
		// links to the first attempt's. (Matched by the stored ids, so spans of other work cannot confuse it.)
		bySpan := map[string]tracetest.SpanStub{}
		for _, s := range spans {
			if s.Name == "work.execute" && slices.Contains(s.Attributes, attribute.String("work.kind", memory.Kind)) {
				bySpan[s.SpanContext.TraceID().String()+"/"+s.SpanContext.SpanID().String()] = s
			}
		}
		sqlRows, err := sqlDB.Query("SELECT attempt_no, trace_id, span_id FROM pc_work_attempts WHERE work_id = ? ORDER BY attempt_no", opID)
		if engine == db.EnginePostgres {
			sqlRows, err = sqlDB.Query("SELECT attempt_no, trace_id, span_id FROM pc_work_attempts WHERE work_id = $1 ORDER BY attempt_no", opID)
		}
		require.NoError(t, err)
		defer sqlRows.Close()
		var execs tracetest.SpanStubs
		for sqlRows.Next() {
			var no int
			var traceID, spanID string
			require.NoError(t, sqlRows.Scan(&no, &traceID, &spanID))
			s, ok := bySpan[traceID+"/"+spanID]
			require.True(t, ok, "attempt %d: no work.execute span with the stored ids %s/%s", no, traceID, spanID)
			require.False(t, s.Parent.IsValid(), "attempt %d: work.execute is a new root", no)
			execs = append(execs, s)
		}
		require.NoError(t, sqlRows.Err())
		require.Len(t, execs, 2)
		require.Len(t, execs[1].Links, 1)
		require.Equal(t, execs[0].SpanContext.TraceID(), execs[1].Links[0].SpanContext.TraceID())
		require.Equal(t, execs[0].SpanContext.SpanID(), execs[1].Links[0].SpanContext.SpanID())
	})
}

// documented label sets of /metrics (telemetry's doc); route is a registered template or "unmatched".
var labelSets = map[string][]string{
	"kind": telemetry.KindLabels(app.WorkKinds()), "error_category": telemetry.ErrorCategories, "status": telemetry.QueueStatuses,
	"role": telemetry.Roles, "method": telemetry.Methods, "status_class": telemetry.StatusClasses,
	"provider": telemetry.ProviderNames, "state": skills.States,
	"route": {"/health/live", "/health/ready", "/metrics", "/v1/sources", "/v1/memory/flush", "/v1/memory",
		"/v1/memory/search", "/v1/experience/candidates", "/v1/experience/candidates/:candidate_id/approve",
		"/v1/experience/candidates/:candidate_id/reject", "/v1/operations", "/v1/operations/:operation_id",
		"/v1/operations/:operation_id/cancel", "/v1/operations/:operation_id/retry", "/v1/runtime/members", "/mcp",
		telemetry.RouteUnmatched},
}

var outcomeSets = map[string][]string{
	"powercontext_work_enqueues_total":                telemetry.EnqueueOutcomes,
	"powercontext_work_attempts_total":                telemetry.AttemptOutcomes,
	"powercontext_work_attempt_duration_seconds":      telemetry.AttemptOutcomes,
	"powercontext_work_lease_expirations_total":       telemetry.LeaseOutcomes,
	"powercontext_scheduler_leadership_changes_total": telemetry.LeadershipOutcomes,
	"powercontext_provider_calls_total":               telemetry.ProviderOutcomes,
	"powercontext_provider_call_duration_seconds":     telemetry.ProviderOutcomes,
}

// After a full flush / retry / cancel scenario, every label value on /metrics belongs to its documented set.
func TestMetricLabelsStayBounded(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		model := &fakeModel{apiKey: "key", failOnce: "first-try-fails", hanging: make(chan struct{}, 1)}
		env := startRuntime(t, engine, model)

		// flush with one retryable failure
		env.capture(t, "scope-flush", "first-try-fails: decided to use postgres")
		r := env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-flush"}, "Prefer", "wait=20")
		require.Equal(t, http.StatusOK, r.status, string(r.body))

		// budget spent → failed → operator retry → succeeded
		model.failing.Store(true)
		env.capture(t, "scope-retry", markerFail+": a window that fails")
		r = env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-retry"}, "Prefer", "wait=20")
		require.Equal(t, http.StatusConflict, r.status, string(r.body))
		failedID := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["operation_id"].(string)
		op := env.waitStatus(t, failedID, db.StatusFailed)
		model.failing.Store(false)
		r = env.do(t, http.MethodPost, "/v1/operations/"+failedID+"/retry", map[string]any{"expected_version": op["state_version"]})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		env.waitStatus(t, failedID, db.StatusSucceeded)

		// a running attempt cancelled by the operator (the model call hangs until the worker gives up)
		env.capture(t, "scope-cancel", markerHang+": a slow window")
		r = env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-cancel"}, "Prefer", "respond-async")
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		cancelID := r.json(t)["operation_id"].(string)
		<-model.hanging
		joined := env.do(t, http.MethodPost, "/v1/memory/flush", map[string]any{"scope_id": "scope-cancel"}, "Prefer", "respond-async")
		require.Equal(t, http.StatusAccepted, joined.status, "a second flush joins the running operation")
		op = env.waitStatus(t, cancelID, db.StatusRunning)
		r = env.do(t, http.MethodPost, "/v1/operations/"+cancelID+"/cancel", map[string]any{"expected_version": op["state_version"]})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		env.waitStatus(t, cancelID, db.StatusCancelled)

		// requests with ids and unknown paths
		require.Equal(t, http.StatusNotFound, env.do(t, http.MethodGet, "/v1/operations/"+uuid.NewString(), nil).status)
		require.Equal(t, http.StatusNotFound, env.do(t, http.MethodGet, "/private/"+uuid.NewString(), nil).status)
		env.do(t, "PROPFIND", "/v1/sources", nil)
		env.do(t, http.MethodGet, "/health/ready", nil)

		// wait for the leader's queue gauges and the member gauges to reflect the run, and for the cancelled
		// attempt's count: the worker records it after its confirming transaction, which the status poll can beat
		var families map[string]*familyView
		sawCancelled := func() bool {
			if f := families["powercontext_work_attempts_total"]; f != nil {
				for _, labels := range f.series {
					if labels["outcome"] == "cancelled" {
						return true
					}
				}
			}
			return false
		}
		require.Eventually(t, func() bool {
			families = parseMetrics(t, env.metrics(t))
			return families["powercontext_work_queue_depth"] != nil && families["powercontext_runtime_members"] != nil &&
				families["powercontext_skill_publications"] != nil && sawCancelled()
		}, 10*time.Second, 50*time.Millisecond)

		seen := map[string]map[string]bool{}
		for name, f := range families {
			if !strings.HasPrefix(name, "powercontext_") {
				continue
			}
			for _, labels := range f.series {
				for k, v := range labels {
					if k == "le" {
						continue
					}
					set, ok := labelSets[k]
					if k == "outcome" {
						set, ok = outcomeSets[name]
					}
					require.True(t, ok, "%s has an undocumented label %s", name, k)
					require.Contains(t, set, v, "%s{%s=%q} is outside its documented set", name, k, v)
					if seen[name+"/"+k] == nil {
						seen[name+"/"+k] = map[string]bool{}
					}
					seen[name+"/"+k][v] = true
				}
			}
		}
		// The scenario really exercised the sets.
		for key, want := range map[string][]string{
			"powercontext_work_attempts_total/outcome":                {"succeeded", "retry_wait", "failed", "cancelled"},
			"powercontext_work_attempts_total/error_category":         {"none", "provider", "cancellation"},
			"powercontext_work_enqueues_total/outcome":                {"created", "joined"},
			"powercontext_http_requests_total/route":                  {"/v1/sources", "/v1/memory/flush", "/v1/operations/:operation_id", "/v1/operations/:operation_id/retry", "/v1/operations/:operation_id/cancel", "unmatched"},
			"powercontext_http_requests_total/method":                 {"GET", "POST", "other"},
			"powercontext_http_requests_total/status_class":           {"2xx", "4xx"},
			"powercontext_provider_calls_total/outcome":               {"ok", "unavailable", "canceled"},
			"powercontext_scheduler_leadership_changes_total/outcome": {"acquired"},
			"powercontext_work_queue_depth/status":                    {"queued", "failed"},
			"powercontext_runtime_members/role":                       {"all"},
			"powercontext_skill_publications/state":                   skills.States, // the leader reports every state, 0 when empty
		} {
			for _, v := range want {
				require.True(t, seen[key][v], "%s never saw %q (saw %v)", key, v, seen[key])
			}
		}
		require.Equal(t, 1.0, families["powercontext_scheduler_leader"].value(nil))
		require.Equal(t, 1.0, families["powercontext_runtime_members"].value(map[string]string{"role": "all"}))
	})
}

type familyView struct {
	series []map[string]string
	values []float64
}

func (f *familyView) value(labels map[string]string) float64 {
	for i, s := range f.series {
		if len(s) == len(labels) {
			match := true
			for k, v := range labels {
				match = match && s[k] == v
			}
			if match {
				return f.values[i]
			}
		}
	}
	return -1
}

func parseMetrics(t *testing.T, text string) map[string]*familyView {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	out := map[string]*familyView{}
	for name, mf := range mfs {
		f := &familyView{}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			v := 0.0
			switch {
			case m.Counter != nil:
				v = m.Counter.GetValue()
			case m.Gauge != nil:
				v = m.Gauge.GetValue()
			case m.Histogram != nil:
				v = float64(m.Histogram.GetSampleCount())
			}
			f.series = append(f.series, labels)
			f.values = append(f.values, v)
		}
		out[name] = f
	}
	return out
}
