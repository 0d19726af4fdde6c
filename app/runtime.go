package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/internal/buildinfo"
	"github.com/powercontext/powercontext/lifecycle"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
	"github.com/powercontext/powercontext/telemetry"
	"github.com/powercontext/powercontext/ui"
)

// BuildVersion is this build's version as members, metrics and MCP announce it (internal/buildinfo: stamped by
// make build, else the module version, else "dev").
var BuildVersion = buildinfo.Version()

// BehaviorRevision names the protocol behaviour this binary implements (ledger-2: rate limits snooze,
// docs/protocol.md#snooze). Members with different revisions work together while their version ranges overlap
// (readiness degraded); a change no older binary may run beside must also change the schema range.
const BehaviorRevision = "ledger-2"

// Payload versions this binary reads and writes.
const (
	PayloadMin = 1
	PayloadMax = 1
)

// Runtime is one running process: the roles its configuration selects, on one store.
type Runtime struct {
	cfg      Config
	log      zerolog.Logger
	store    db.Store
	ledger   *coordinator.Ledger
	memberID string

	worker     *coordinator.Worker
	scheduler  *coordinator.Scheduler
	membership *coordinator.Membership
	http       *http.Server
	listener   net.Listener
	certs      *certReloader // TLS served when set
	single     *coordinator.LeaseToken
	tel        *telemetry.Telemetry
	stopping   atomic.Bool // Run began to shut down (readiness says so)

	schemaDB    *sql.DB      // distributed: the pool the membership beat reads the schema revision with
	schemaState atomic.Value // string: the migrate.Compatibility of the last schema check
}

// Option adjusts Start beyond the configuration (tests).
type Option func(*startOptions)

type startOptions struct {
	spanExporter sdktrace.SpanExporter
}

// WithSpanExporter sends every span synchronously to exp (for example tracetest.NewInMemoryExporter()), whatever
// the OTEL_* environment says.
func WithSpanExporter(exp sdktrace.SpanExporter) Option {
	return func(o *startOptions) { o.spanExporter = exp }
}

// NewMemberID returns a boot-unique member id (also the process's lease owner id).
func NewMemberID(role string) string {
	host, _ := os.Hostname()
	if len(host) > 48 {
		host = host[:48]
	}
	return fmt.Sprintf("%s/%s/%d/%s", role, host, os.Getpid(), uuid.NewString()[:8])
}

// Start opens the database, migrates (single_node) or verifies (distributed) the schema, registers the member and
// starts every part the role runs. It returns after the HTTP listener is bound.
func Start(ctx context.Context, cfg Config, logOut io.Writer, opts ...Option) (*Runtime, error) {
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	log := NewLogger(cfg.LogFormat, cfg.LogLevel, logOut)
	u, err := dburl.Parse(cfg.DatabaseURL)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	r := &Runtime{cfg: cfg, log: log, memberID: NewMemberID(cfg.Role)}
	log = log.With().Str("member_id", r.memberID).Str("role", cfg.Role).Logger()
	r.log = log

	sqlDB, err := OpenSQLDB(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("cannot open the database %s: %w", u.Redacted, err)
	}
	keepSQLDB := false // distributed processes keep it to re-read the schema revision at every membership beat
	defer func() {
		if !keepSQLDB {
			_ = sqlDB.Close()
		}
	}()
	store, err := OpenStore(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("cannot open the database %s: %w", u.Redacted, err)
	}
	r.store = store
	r.ledger = coordinator.NewLedger(store)
	r.ledger.SetNotify(cfg.notifies(u.Engine))
	ok := false
	defer func() {
		if !ok {
			r.undoStart()
			r.closeAll()
		}
	}()
	// Telemetry first: every later part reports through it. Tracing is off unless OTEL_* turns it on.
	r.tel, err = telemetry.New(ctx, telemetry.Config{ServiceVersion: BuildVersion, InstanceID: r.memberID, Logger: log, Kinds: WorkKinds(),
		PublicationStates: skills.States, SpanExporter: o.spanExporter})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	r.ledger.SetHooks(r.tel.LedgerHooks())

	if cfg.Mode == ModeSingleNode {
		if _, err := migrate.Apply(ctx, u.Engine, sqlDB, store, r.memberID); err != nil {
			return nil, fmt.Errorf("migrating the embedded database: %w", err)
		}
		tok, err := r.ledger.AcquireSingleNode(ctx, r.memberID, Seconds(cfg.MemberTTLSeconds))
		if err != nil {
			return nil, err
		}
		r.single = &tok
	} else if err := migrate.Verify(ctx, u.Engine, sqlDB); err != nil {
		return nil, err
	}
	schema, err := migrate.Status(ctx, u.Engine, sqlDB)
	if err != nil {
		return nil, err
	}
	schemaMin, schemaMax := schema.SchemaRange()
	r.schemaState.Store(string(schema.Compatibility()))

	r.membership = coordinator.NewMembership(store, db.RuntimeMember{MemberID: r.memberID, Role: cfg.Role, BuildVersion: BuildVersion,
		SchemaMin: schemaMin, SchemaMax: schemaMax, PayloadMin: PayloadMin, PayloadMax: PayloadMax, BehaviorRevision: BehaviorRevision},
		Seconds(cfg.MemberHeartbeatSeconds), Seconds(cfg.MemberTTLSeconds), log)
	if cfg.Mode == ModeDistributed {
		// The database can be migrated while the fleet runs (an expand migration before a rolling upgrade, a
		// contract after it): every beat re-reads the revision, so the advertised range follows it and readiness
		// reports a database this binary can no longer run against (README.md#rolling-upgrades).
		keepSQLDB = true
		r.schemaDB = sqlDB
		engine := u.Engine
		r.membership.SetRefresh(func(ctx context.Context, self *db.RuntimeMember) {
			rep, err := migrate.Status(ctx, engine, sqlDB)
			if err != nil {
				log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("schema revision check failed")
				return
			}
			r.schemaState.Store(string(rep.Compatibility()))
			self.SchemaMin, self.SchemaMax = rep.SchemaRange()
		})
	}
	if err := r.membership.Beat(ctx); err != nil {
		return nil, err
	}
	r.refreshMembers(ctx)

	prov, err := r.provider()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	emb, err := r.embedder()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	maxAttempts := int32(cfg.WorkerMaxAttempts)
	memConsumer, expConsumer := memory.Consumer(maxAttempts), experience.Consumer(maxAttempts)

	if cfg.RunsWorker() {
		r.worker, err = coordinator.NewWorker(r.ledger, coordinator.WorkerConfig{
			Owner: r.memberID, Concurrency: cfg.WorkerConcurrency, Lease: Seconds(cfg.WorkerLeaseSeconds),
			Heartbeat: Seconds(cfg.WorkerHeartbeatSeconds), Poll: Seconds(cfg.WorkerPollSeconds),
			ShutdownGrace: Seconds(cfg.WorkerShutdownGraceSeconds), RetryBase: Seconds(cfg.WorkerRetryBaseSeconds),
			RetryMax: Seconds(cfg.WorkerRetryMaxSeconds), Logger: log, Hooks: r.tel.WorkerHooks(),
			MaxSnoozes: maxSnoozes(cfg.WorkerMaxSnoozes), CompleteBatch: cfg.WorkerCompleteBatch,
			CompleteDelay: Seconds(cfg.WorkerCompleteDelaySeconds),
		},
			&memory.Handler{Store: store, Provider: prov, MaxRequestBytes: cfg.ProviderMaxRequestBytes, Embedder: emb},
			&memory.EmbedHandler{Ledger: r.ledger, Embedder: emb},
			&experience.Handler{Store: store, Provider: prov, MaxRequestBytes: cfg.ProviderMaxRequestBytes},
			coordinator.MaintenanceHandler{Ledger: r.ledger, Tasks: lifecycle.Retention{Store: store,
				SourceContentAfter: Days(cfg.RetentionSourceContentDays), MemoryRevisions: cfg.RetentionMemoryRevisions}.Tasks()},
			&lifecycle.RedactHandler{Ledger: r.ledger},
			&lifecycle.EraseHandler{Ledger: r.ledger},
			portability.RecordHandler{RecordKind: portability.KindExport}, portability.RecordHandler{RecordKind: portability.KindImport},
			&skills.Handler{Store: store},
		)
		if err != nil {
			return nil, err
		}
	}
	if cfg.RunsScheduler() {
		discoverers := []coordinator.Discoverer{coordinator.MaintenanceDiscoverer{Every: Seconds(cfg.MaintenanceSeconds)}}
		if cfg.ScheduleSeconds > 0 {
			discoverers = append(discoverers, sources.Discoverer{Consumer: memConsumer, Store: store, Every: Seconds(cfg.ScheduleSeconds), Label: "memory"})
		}
		if cfg.ExperienceScheduleSeconds > 0 {
			discoverers = append(discoverers, sources.Discoverer{Consumer: expConsumer, Store: store, Every: Seconds(cfg.ExperienceScheduleSeconds), Label: "experience"})
		}
		if emb != nil && cfg.EmbeddingsScanSeconds > 0 {
			discoverers = append(discoverers, memory.EmbedDiscoverer{Store: store, Model: emb.Model(),
				Every: Seconds(cfg.EmbeddingsScanSeconds), MaxAttempts: maxAttempts})
		}
		if cfg.SkillsScanSeconds > 0 {
			discoverers = append(discoverers, skills.Discoverer{Store: store, Every: Seconds(cfg.SkillsScanSeconds), MaxAttempts: maxAttempts})
		}
		r.scheduler, err = coordinator.NewScheduler(r.ledger, coordinator.SchedulerConfig{Owner: r.memberID,
			Lease: Seconds(cfg.SchedulerLeaseSeconds), Renew: Seconds(cfg.SchedulerRenewSeconds), Logger: log,
			Hooks: r.tel.SchedulerHooks(r.ledger)}, discoverers...)
		if err != nil {
			return nil, err
		}
	}

	packager := &skills.Packager{Ledger: r.ledger, MaxAttempts: maxAttempts, Failed: func(err error) {
		log.Warn().Str("error_type", fmt.Sprintf("%T", err)).Msg("skill packaging not enqueued after an approval")
	}}
	deps := handlers.Deps{
		Journal:          sources.NewJournal(store),
		Flusher:          &memory.Flusher{Ledger: r.ledger, Consumer: memConsumer},
		Memory:           r.memoryReader(emb),
		Experience:       experience.Reviews{Store: store, OnApproved: packager.Approved},
		Incubator:        &experience.Incubator{Ledger: r.ledger, Consumer: expConsumer},
		Ledger:           r.ledger,
		Store:            store,
		FlushDefaultWait: Seconds(cfg.FlushDefaultWaitSeconds),
		FlushMaxWait:     Seconds(cfg.FlushMaxWaitSeconds),
		Readiness:        r.Readiness,
		Role:             cfg.Role,
		Logger:           log,
		Metrics:          r.tel.MetricsHandler(),
	}
	deps.Forgetter = &lifecycle.Forgetter{Ledger: r.ledger, MaxAttempts: maxAttempts}
	deps.Eraser = &lifecycle.Eraser{Ledger: r.ledger, MaxAttempts: maxAttempts}
	deps.Portability = &portability.Service{Store: store, Ledger: r.ledger, MaxAttempts: maxAttempts,
		Schema: portability.SchemaRange{Min: schemaMin, Max: schemaMax}}
	deps.Skills = &skills.Service{Store: store}
	if r.worker != nil {
		deps.Flusher.Wake, deps.Incubator.Wake = r.worker.Wake, r.worker.Wake
		deps.Forgetter.Wake, deps.Eraser.Wake = r.worker.Wake, r.worker.Wake
		deps.Portability.Wake = r.worker.Wake
		packager.Wake = r.worker.Wake
	}
	if cfg.RunsAPI() {
		// MCP is stateless in distributed mode: any API replica answers any request, no session affinity.
		deps.MCP = mcp.NewHandler(mcp.Deps{Journal: deps.Journal, Memory: deps.Memory, Experience: deps.Experience,
			Flusher: deps.Flusher, Incubator: deps.Incubator, Ledger: deps.Ledger, Skills: deps.Skills, FlushDefaultWait: Seconds(cfg.FlushDefaultWaitSeconds),
			FlushMaxWait: Seconds(cfg.FlushMaxWaitSeconds), Logger: log, Version: BuildVersion, MaxSessions: cfg.MCPMaxSessions,
			SessionIdle: Seconds(cfg.MCPSessionIdleSeconds), MaxSessionsPerPrincipal: cfg.MCPMaxSessionsPerPrincipal,
			MaxStreams: cfg.MCPMaxStreams, MaxStreamsPerPrincipal: cfg.MCPMaxStreamsPerPrincipal, StreamIdle: Seconds(cfg.MCPStreamIdleSeconds)}, cfg.Mode == ModeDistributed)
	}
	if err := applyEdge(cfg, &deps); err != nil {
		return nil, &ConfigError{Err: err}
	}
	if cfg.RunsAPI() {
		// Sessions live in the database: every API replica accepts a sign-in made on any other.
		sessions := ui.NewSessions(ui.SessionConfig{Store: store, Principals: deps.Principals,
			TTL: Seconds(cfg.UISessionTTLSeconds), TrustedProxies: deps.TrustedProxies, Keys: deps.ServerKeys})
		deps.UISessions = sessions
		deps.UI = ui.New(ui.Deps{Ledger: r.ledger, Store: store, Logger: log, Principals: deps.Principals,
			Sessions: sessions, OnApproved: packager.Approved, Skills: deps.Skills, Portability: deps.Portability})
	}
	if cfg.TLSEnabled() {
		if r.certs, err = newCertReloader(cfg.TLSCertFile, cfg.TLSKeyFile, log); err != nil {
			return nil, &ConfigError{Err: err}
		}
	}
	r.listener, err = listen(cfg, deps.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", cfg.Listen, err)
	}
	e := handlers.New(deps)
	e.Pre(r.tel.HTTPMiddleware(e)) // outermost: request metrics and server spans by route template
	r.http = newHTTPServer(cfg, e, log)
	if !deps.Principals.Empty() {
		trackConnections(cfg, r.http)
	}
	if r.certs != nil {
		r.http.TLSConfig = serverTLSConfig(r.certs)
	}
	ok = true
	return r, nil
}

// maxSnoozes maps the setting (0 = off) to coordinator.WorkerConfig.MaxSnoozes (negative = off).
func maxSnoozes(n int) int32 {
	if n == 0 {
		return -1
	}
	return int32(min(n, 1<<30))
}

func (r *Runtime) provider() (provider.Provider, error) {
	var p provider.Provider
	switch r.cfg.ProviderKind {
	case "", "local":
		p = provider.NewLocal()
	case "openai":
		o, err := provider.NewOpenAI(provider.OpenAIConfig{BaseURL: r.cfg.ProviderBaseURL, Model: r.cfg.ProviderModel,
			APIKey: r.cfg.ProviderAPIKey, Timeout: Seconds(r.cfg.ProviderTimeout)})
		if err != nil {
			return nil, err
		}
		p = o
	default:
		return nil, errors.New("unknown provider kind")
	}
	// Observe real calls only: a call the shared limiter refuses never reaches the provider.
	p = r.tel.WrapProvider(p)
	if r.cfg.RateLimitEnabled {
		limiter := coordinator.NewRateLimiter(r.store)
		limit, window := r.cfg.RateLimitRequests, Seconds(r.cfg.RateLimitWindowSeconds)
		p = provider.WithRateLimit(p, func(ctx context.Context) (bool, time.Duration, error) {
			d, err := limiter.Allow(ctx, "provider:"+p.Name(), "provider", limit, window)
			return d.Allowed, d.RetryAfter, err
		})
	}
	return p, nil
}

// Addr is the bound HTTP address.
func (r *Runtime) Addr() string { return r.listener.Addr().String() }

// MemberID is this process's member and lease owner id.
func (r *Runtime) MemberID() string { return r.memberID }

// keepSingleNode renews the single-node-runtime lease; losing it stops the process.
func (r *Runtime) keepSingleNode(ctx context.Context) error {
	t := time.NewTicker(Seconds(r.cfg.MemberHeartbeatSeconds))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		tok, err := r.ledger.AcquireSingleNode(ctx, r.memberID, Seconds(r.cfg.MemberTTLSeconds))
		if err != nil {
			var held *coordinator.ErrRuntimeAlreadyRunning
			if errors.As(err, &held) {
				return err
			}
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("single-node lease renewal failed")
			continue
		}
		r.single = &tok
	}
}

// observeMembers refreshes the role-member gauges from live membership every member heartbeat.
func (r *Runtime) observeMembers(ctx context.Context) error {
	t := time.NewTicker(Seconds(r.cfg.MemberHeartbeatSeconds))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			r.refreshMembers(ctx)
		}
	}
}

func (r *Runtime) refreshMembers(ctx context.Context) {
	members, err := coordinator.LiveMembers(ctx, r.store)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("live members read failed")
		}
		return
	}
	r.tel.SetMembers(members)
}

// Telemetry is the process's metrics registry and tracer.
func (r *Runtime) Telemetry() *telemetry.Telemetry { return r.tel }
