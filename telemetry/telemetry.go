package telemetry

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
)

// Config configures New.
type Config struct {
	ServiceVersion string // build version (resource service.version)
	InstanceID     string // member id (resource service.instance.id)
	Logger         zerolog.Logger
	// SpanExporter, when set, receives every span synchronously and tracing is on whatever the environment says
	// (tests pass tracetest.NewInMemoryExporter()). Otherwise the OTEL_* environment decides (see the package doc).
	SpanExporter sdktrace.SpanExporter
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Kinds are the work kinds the kind label names; every other kind is reported as "other". app passes the kinds
	// the domain packages declare (memory.WorkKinds, experience.WorkKinds, …), so this package imports none of them.
	Kinds []string
	// PublicationStates are the states of a skill publication the state label names (skills.States, which app
	// passes so that this package imports no domain package): exactly the values pc_skill_publications allows.
	// The scheduler leader reports each of them, 0 when no publication is in it; without them the gauge is not
	// reported.
	PublicationStates []string
}

// Telemetry owns one process's metric registry and tracer provider.
type Telemetry struct {
	reg     *prometheus.Registry
	m       *metrics
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	tracing bool
	log     zerolog.Logger
	kinds   []string // KindLabels(Config.Kinds)
	states  []string // Config.PublicationStates

	leader        atomic.Bool
	providerState atomic.Value // string: last provider call outcome, "unknown" before the first call
}

// New builds the registry and the tracer provider. Tracing is off unless the environment (or cfg.SpanExporter)
// turns it on; metrics are always on.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	t := &Telemetry{reg: prometheus.NewRegistry(), prop: propagation.TraceContext{},
		log: cfg.Logger.With().Str("component", "telemetry").Logger(), kinds: KindLabels(cfg.Kinds),
		states: slices.Clone(cfg.PublicationStates)}
	t.providerState.Store("unknown")
	t.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.m = newMetrics(t.reg)
	tp, on, err := newTracerProvider(ctx, cfg, t.log)
	if err != nil {
		return nil, err
	}
	t.tp, t.tracing = tp, on
	t.tracer = tp.Tracer("github.com/powercontext/powercontext")
	return t, nil
}

// Registry is the process's Prometheus registry.
func (t *Telemetry) Registry() *prometheus.Registry { return t.reg }

// MetricsHandler serves the registry in the Prometheus text format (GET /metrics).
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{})
}

// TracingEnabled reports whether spans are sampled and exported.
func (t *Telemetry) TracingEnabled() bool { return t.tracing }

// Tracer is the process's tracer.
func (t *Telemetry) Tracer() trace.Tracer { return t.tracer }

// Shutdown flushes and stops the span exporter. Spans started later are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// ProviderState is the outcome of the last provider call ("unknown" before the first), for readiness.
func (t *Telemetry) ProviderState() string { return t.providerState.Load().(string) }

// SetMembers sets the role-member gauges from the live members (every role is reported, 0 when absent).
func (t *Telemetry) SetMembers(members []db.RuntimeMember) {
	counts := map[string]float64{}
	for _, r := range Roles {
		if r != Other {
			counts[r] = 0
		}
	}
	for _, m := range members {
		counts[roleLabel(m.Role)]++
	}
	for r, n := range counts {
		t.m.members.WithLabelValues(r).Set(n)
	}
}

// SetQueue sets the queue depth and oldest-age gauges from the ledger's statistics. Every (known kind, reported
// status) pair is set, 0 when empty, so a drained queue reads 0 rather than its last value.
func (t *Telemetry) SetQueue(stats []coordinator.QueueStat) {
	type key struct{ kind, status string }
	depth, oldest := map[key]float64{}, map[key]float64{}
	for _, k := range t.kinds {
		for _, s := range QueueStatuses {
			if k != Other && s != Other {
				depth[key{k, s}], oldest[key{k, s}] = 0, 0
			}
		}
	}
	for _, s := range stats {
		k := key{t.kindLabel(s.Kind), statusLabel(s.Status)}
		depth[k] += float64(s.Count)
		oldest[k] = max(oldest[k], s.OldestAge.Seconds())
	}
	for k, v := range depth {
		t.m.queueDepth.WithLabelValues(k.kind, k.status).Set(v)
		t.m.queueOldest.WithLabelValues(k.kind, k.status).Set(oldest[k])
	}
}

// RefreshQueue reads the ledger's queue statistics and sets the gauges.
func (t *Telemetry) RefreshQueue(ctx context.Context, ledger *coordinator.Ledger) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stats, err := ledger.QueueStatistics(ctx)
	if err != nil {
		return err
	}
	t.SetQueue(stats)
	return nil
}

// SetSkillPublications sets the skill-publication gauge from counts by state: every configured state
// (Config.PublicationStates) is set, 0 when counts has none, so a state that empties reads 0 rather than its last
// value. A state outside the configured set (a newer release's) is not reported: the label set stays bounded.
func (t *Telemetry) SetSkillPublications(counts map[string]int64) {
	for _, s := range t.states {
		t.m.skillPubs.WithLabelValues(s).Set(float64(counts[s]))
	}
}

// RefreshSkillPublications counts the skill publications by state and sets the gauge (nothing without
// Config.PublicationStates).
func (t *Telemetry) RefreshSkillPublications(ctx context.Context, store db.SkillPublicationQueries) error {
	if len(t.states) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := store.SkillPublicationCountByState(ctx)
	if err != nil {
		return err
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.State] += r.Count
	}
	t.SetSkillPublications(counts)
	return nil
}

// clearQueue drops the gauges the scheduler leader reports (a process that is not the leader does not report them):
// the queue gauges and the skill-publication gauge.
func (t *Telemetry) clearQueue() {
	t.m.queueDepth.Reset()
	t.m.queueOldest.Reset()
	t.m.skillPubs.Reset()
}
