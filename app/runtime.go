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
	"golang.org/x/sync/errgroup"

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
		SpanExporter: o.spanExporter})
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
			Sessions: sessions, OnApproved: packager.Approved})
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

// Run serves until ctx is done or a part fails, then shuts down in this order (docs/architecture.md#shutdown):
//
//  1. stop claiming and discovery: readiness turns not_ready (check process=stopping), the worker stops claiming,
//     and the scheduler stops ticking and releases the work-discovery lease at once (a standby need not wait for
//     it to expire);
//  2. drain: attempts in flight keep their heartbeats and finish (prepare, then commit) for up to the worker's
//     shutdown grace; the rest are abandoned without a write, so their leases expire and another worker recovers
//     them (docs/protocol.md#lease-expiry);
//  3. deregister: the membership heartbeat stops and the member row is deleted;
//  4. close HTTP: stop accepting, let requests in flight finish (at most httpShutdownTimeout);
//  5. release the single-node lease (renewed until here), close the database, flush telemetry.
//
// HTTP, membership and the database stay up through steps 1 and 2, so a request waiting on work that is draining
// (a flush) gets its answer, and the process stays visible to other members while it still holds work.
func (r *Runtime) Run(ctx context.Context) error {
	defer r.closeAll()
	scheme := "http"
	if r.certs != nil {
		scheme = "https"
		stopHUP := r.reloadOnSIGHUP()
		defer stopHUP()
	}
	r.log.Info().Str("listen", r.Addr()).Str("scheme", scheme).Str("mode", r.cfg.Mode).Msg("powercontext started")
	// A part that fails starts the same shutdown; Run returns its error.
	failed, fail := context.WithCancelCause(context.Background())
	defer fail(nil)
	base := context.WithoutCancel(ctx)

	var serving errgroup.Group
	serving.Go(func() error {
		serve := r.http.Serve
		if r.certs != nil {
			// ServeTLS (not a tls.Listener) so HTTP/2 is offered; a cleartext request on this port gets net/http's
			// 400 "Client sent an HTTP request to an HTTPS server" and never reaches a handler.
			serve = func(ln net.Listener) error { return r.http.ServeTLS(ln, "", "") }
		}
		if err := serve(r.listener); !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("http server: %w", err))
			return err
		}
		return nil
	})
	var lease, presence, roles *stage
	if r.single != nil {
		lease = r.startStage(base, fail, r.keepSingleNode)
	}
	presenceParts := []func(context.Context) error{r.membership.Run, r.observeMembers}
	if r.cfg.notifies(r.store.Engine()) && (r.cfg.RunsAPI() || r.cfg.RunsWorker()) {
		presenceParts = append(presenceParts, r.listenWakeups)
	}
	presence = r.startStage(base, fail, presenceParts...)
	var roleRuns []func(context.Context) error
	if r.scheduler != nil {
		roleRuns = append(roleRuns, r.scheduler.Run)
	}
	if r.worker != nil {
		roleRuns = append(roleRuns, r.worker.Run)
	}
	if r.cfg.SkillsLocalTargetDir != "" && r.cfg.Mode == ModeSingleNode {
		roleRuns = append(roleRuns, r.keepLocalSkills)
	}
	roles = r.startStage(base, fail, roleRuns...)

	select {
	case <-ctx.Done():
	case <-failed.Done():
	}
	r.stopping.Store(true)
	r.log.Info().Msg("powercontext stopping")
	roles.stop(r.log, "roles")         // 1, 2: discovery stopped and its lease released; the worker drained
	presence.stop(r.log, "membership") // 3: deregistered
	sctx, scancel := context.WithTimeout(base, httpShutdownTimeout)
	if err := r.http.Shutdown(sctx); err != nil {
		r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("http shutdown timed out, closing connections")
		_ = r.http.Close()
	}
	scancel()
	_ = serving.Wait()
	r.log.Info().Str("step", "http").Msg("shutdown step done") // 4
	if lease != nil {                                          // 5
		lease.stop(r.log, "single_node_lease")
		rctx, rcancel := context.WithTimeout(base, 5*time.Second)
		if err := r.ledger.ReleaseLease(rctx, *r.single); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("single-node lease release failed")
		}
		rcancel()
	}
	r.log.Info().Msg("powercontext stopped")
	return context.Cause(failed)
}

// httpShutdownTimeout bounds how long closing HTTP waits for requests in flight (a flush waits at most
// flush_max_wait_seconds on its own, and its operation has drained by then).
const httpShutdownTimeout = 10 * time.Second

// stage is a set of parts that start together and stop together (one errgroup under one context).
type stage struct {
	cancel context.CancelFunc
	group  errgroup.Group
}

// startStage runs each part under a context of its own stage; a part that returns an error before its stage is
// stopped calls fail.
func (r *Runtime) startStage(base context.Context, fail context.CancelCauseFunc, parts ...func(context.Context) error) *stage {
	ctx, cancel := context.WithCancel(base)
	st := &stage{cancel: cancel}
	for _, part := range parts {
		st.group.Go(func() error {
			err := part(ctx)
			if err != nil && ctx.Err() == nil {
				fail(err)
			}
			return err
		})
	}
	return st
}

// stop cancels the stage, waits for every part to return and logs the step (an error of a part is a warning).
func (st *stage) stop(log zerolog.Logger, step string) {
	st.cancel()
	if err := st.group.Wait(); err != nil {
		log.Warn().Str("step", step).Str("error_class", coordinator.ErrorClass(err)).Msg("shutdown step failed")
		return
	}
	log.Info().Str("step", step).Msg("shutdown step done")
}

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

// undoStart takes back what a failed Start already claimed in the database (its member row, the single-node
// lease), so a start that fails late (say, its listen address is taken) does not lock the next start out until
// the lease's time to live runs out.
func (r *Runtime) undoStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r.membership != nil {
		if _, err := r.store.RuntimeMemberDelete(ctx, r.memberID); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("member row delete after a failed start failed")
		}
	}
	if r.single != nil {
		if err := r.ledger.ReleaseLease(ctx, *r.single); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("single-node lease release after a failed start failed")
		}
	}
}

func (r *Runtime) closeAll() {
	if r.listener != nil {
		_ = r.listener.Close()
	}
	if r.store != nil {
		_ = r.store.Close()
	}
	if r.schemaDB != nil {
		_ = r.schemaDB.Close()
	}
	if r.tel != nil { // last, so spans ended during the shutdown are still exported
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.tel.Shutdown(ctx); err != nil {
			r.log.Warn().Str("error_class", coordinator.ErrorClass(err)).Msg("telemetry shutdown failed")
		}
		cancel()
	}
}

// Telemetry is the process's metrics registry and tracer.
func (r *Runtime) Telemetry() *telemetry.Telemetry { return r.tel }

// schemaCheck is the readiness value of the last schema check: ok (exact), ahead_expand_only, behind_contract_only
// or incompatible (migrate.Compatibility).
func schemaCheck(v any) string {
	s, _ := v.(string)
	switch s {
	case "", string(migrate.CompatExact):
		return checkOK
	}
	return s
}

func hasMember(members []db.RuntimeMember, id string) bool {
	for _, m := range members {
		if m.MemberID == id {
			return true
		}
	}
	return false
}

// Readiness states of the individual checks.
const (
	checkOK      = "ok"
	checkUnknown = "unknown"     // not evaluated (the database is unavailable)
	checkNotRun  = "not_run"     // this role does not run the part
	checkDown    = "unavailable" // the check's query failed
)

// Readiness reports the process's status and every check by name — database, membership, scheduler, worker
// (its handlers against the lane heads) and provider — each with a bounded state:
//
//	database    ok | unavailable
//	membership  ok | missing | no_live_members | version_range_mismatch | schema_refresh_pending | mixed_versions | no_scheduler |
//	            no_worker | no_scheduler_no_worker | unavailable | unknown
//	scheduler   leader | standby | failing (SchedulerFailingAfter ticks in a row failed) | not_run
//	worker      ok | unsupported_work_waiting | unavailable | unknown | not_run
//	provider    unknown (no call yet) | ok | rate_limited | unavailable | invalid_output | request_rejected | error | not_run
//	provider_kind  local | openai (workers only)
//	process     running | stopping (Run is shutting down: the process finishes its work but takes no more)
//	schema      ok | ahead_expand_only | behind_contract_only | incompatible (the database was migrated past what
//	            this binary can run against while it ran; distributed processes re-check at every membership beat)
//
// The status is the worst of: stopping → not_ready; database unavailable → not_ready; scheduler failing → not_ready
// for role scheduler, degraded otherwise; schema incompatible → misconfigured; own member row missing → not_ready;
// membership per coordinator.MembershipCheck;
// unsupported work waiting → misconfigured; the last provider call unavailable → degraded.
func (r *Runtime) Readiness(ctx context.Context) (string, map[string]any) {
	checks := map[string]any{"database": checkOK, "membership": checkUnknown, "scheduler": checkNotRun,
		"worker": checkNotRun, "provider": checkNotRun, "process": "running", "schema": schemaCheck(r.schemaState.Load())}
	if r.stopping.Load() {
		checks["process"] = "stopping"
	}
	if r.scheduler != nil {
		if _, leader := r.scheduler.Leader(); leader {
			checks["scheduler"] = "leader"
		} else {
			checks["scheduler"] = "standby"
		}
		if r.scheduler.Failing() {
			checks["scheduler"] = "failing"
		}
	}
	if r.worker != nil {
		checks["worker"] = checkUnknown
		checks["provider"] = r.tel.ProviderState()
		kind := r.cfg.ProviderKind
		if kind == "" {
			kind = "local"
		}
		checks["provider_kind"] = kind
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := r.store.DBNow(ctx); err != nil {
		checks["database"] = checkDown
		return coordinator.ReadyNotReady, checks
	}
	status := coordinator.ReadyReady
	worse := func(s string) {
		rank := map[string]int{coordinator.ReadyReady: 0, coordinator.ReadyDegraded: 1, coordinator.ReadyNotReady: 2, coordinator.ReadyMisconfigured: 3}
		if rank[s] > rank[status] {
			status = s
		}
	}
	if r.stopping.Load() {
		worse(coordinator.ReadyNotReady)
	}
	if checks["schema"] == string(migrate.CompatNone) {
		worse(coordinator.ReadyMisconfigured)
	}
	if checks["scheduler"] == "failing" {
		// A scheduler process exists to tick; a single_node process still serves the API while discovery fails.
		if r.cfg.Role == RoleScheduler {
			worse(coordinator.ReadyNotReady)
		} else {
			worse(coordinator.ReadyDegraded)
		}
	}
	members, err := coordinator.LiveMembers(ctx, r.store)
	switch {
	case err != nil:
		checks["membership"] = checkDown
		worse(coordinator.ReadyNotReady)
	case !hasMember(members, r.memberID):
		// This process's own row expired or was deleted (its heartbeats fail): the rest of the deployment cannot
		// see it, so nothing vouches for its versions. The next successful heartbeat writes the row again.
		checks["membership"] = "missing"
		worse(coordinator.ReadyNotReady)
	default:
		st, reason := coordinator.MembershipCheck(members, r.cfg.Role)
		checks["membership"] = reason
		worse(st)
	}
	if r.worker != nil {
		n, err := r.ledger.UnsupportedHeadCount(ctx, r.worker.Supported())
		switch {
		case err != nil:
			checks["worker"] = checkDown
			worse(coordinator.ReadyNotReady)
		case n > 0:
			checks["worker"] = "unsupported_work_waiting"
			worse(coordinator.ReadyMisconfigured)
		default:
			checks["worker"] = checkOK
		}
		if checks["provider"] == "unavailable" {
			worse(coordinator.ReadyDegraded)
		}
	}
	return status, checks
}
