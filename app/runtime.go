package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/db/migrate"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/sources"
)

// BuildVersion is set at link time (-ldflags "-X github.com/powercontext/powercontext/app.BuildVersion=…").
var BuildVersion = "dev"

// BehaviorRevision names the protocol behaviour this binary implements; live members must agree on it.
const BehaviorRevision = "ledger-1"

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
	single     *coordinator.LeaseToken
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
func Start(ctx context.Context, cfg Config, logOut io.Writer) (*Runtime, error) {
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
	defer sqlDB.Close()
	store, err := OpenStore(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("cannot open the database %s: %w", u.Redacted, err)
	}
	r.store = store
	r.ledger = coordinator.NewLedger(store)
	ok := false
	defer func() {
		if !ok {
			r.closeAll()
		}
	}()

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
	schemaVersion, _ := strconv.ParseInt(schema.Expected, 10, 64)

	r.membership = coordinator.NewMembership(store, db.RuntimeMember{MemberID: r.memberID, Role: cfg.Role, BuildVersion: BuildVersion,
		SchemaMin: schemaVersion, SchemaMax: schemaVersion, PayloadMin: PayloadMin, PayloadMax: PayloadMax, BehaviorRevision: BehaviorRevision},
		Seconds(cfg.MemberHeartbeatSeconds), Seconds(cfg.MemberTTLSeconds), log)
	if err := r.membership.Beat(ctx); err != nil {
		return nil, err
	}

	prov, err := r.provider()
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
			RetryMax: Seconds(cfg.WorkerRetryMaxSeconds), Logger: log,
		},
			&memory.Handler{Store: store, Provider: prov},
			&experience.Handler{Store: store, Provider: prov},
			coordinator.MaintenanceHandler{Ledger: r.ledger},
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
		r.scheduler, err = coordinator.NewScheduler(r.ledger, coordinator.SchedulerConfig{Owner: r.memberID,
			Lease: Seconds(cfg.SchedulerLeaseSeconds), Renew: Seconds(cfg.SchedulerRenewSeconds), Logger: log}, discoverers...)
		if err != nil {
			return nil, err
		}
	}

	deps := handlers.Deps{
		Journal:          sources.NewJournal(store),
		Flusher:          &memory.Flusher{Ledger: r.ledger, Consumer: memConsumer},
		Memory:           memory.Reader{Store: store},
		Experience:       experience.Reviews{Store: store},
		Ledger:           r.ledger,
		Store:            store,
		AuthToken:        cfg.AuthToken,
		FlushDefaultWait: Seconds(cfg.FlushDefaultWaitSeconds),
		FlushMaxWait:     Seconds(cfg.FlushMaxWaitSeconds),
		Readiness:        r.Readiness,
		Role:             cfg.Role,
		Logger:           log,
	}
	if r.worker != nil {
		deps.Flusher.Wake = r.worker.Wake
	}
	if cfg.RateLimitEnabled {
		deps.RateLimiter = coordinator.NewRateLimiter(store)
		deps.RateLimit = handlers.RateLimit{Enabled: true, Requests: cfg.RateLimitRequests, Window: Seconds(cfg.RateLimitWindowSeconds)}
	}
	r.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", cfg.Listen, err)
	}
	r.http = &http.Server{Handler: handlers.New(deps), ReadHeaderTimeout: 10 * time.Second}
	ok = true
	return r, nil
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

// Run serves until ctx is done, then shuts down in order: stop accepting HTTP, stop the scheduler (releasing its
// lease), let the worker drain for the shutdown grace, deregister, release the single-node lease, close the store.
func (r *Runtime) Run(ctx context.Context) error {
	defer r.closeAll()
	r.log.Info().Str("listen", r.Addr()).Str("mode", r.cfg.Mode).Msg("powercontext started")
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	fatal := make(chan error, 1)
	var wg sync.WaitGroup
	goRun := func(fn func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(runCtx); err != nil && runCtx.Err() == nil {
				select {
				case fatal <- err:
				default:
				}
			}
		}()
	}
	httpDone := make(chan error, 1)
	go func() { httpDone <- r.http.Serve(r.listener) }()
	goRun(r.membership.Run)
	if r.single != nil {
		goRun(r.keepSingleNode)
	}
	if r.scheduler != nil {
		goRun(r.scheduler.Run)
	}
	if r.worker != nil {
		goRun(r.worker.Run)
	}
	var runErr error
	select {
	case <-ctx.Done():
	case err := <-fatal:
		runErr = err
	case err := <-httpDone:
		if !errors.Is(err, http.ErrServerClosed) {
			runErr = err
		}
	}
	r.log.Info().Msg("powercontext stopping")
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	_ = r.http.Shutdown(sctx)
	scancel()
	cancel()
	wg.Wait()
	if r.single != nil {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = r.ledger.ReleaseLease(rctx, *r.single)
		rcancel()
	}
	r.log.Info().Msg("powercontext stopped")
	return runErr
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
			r.log.Warn().Err(err).Msg("single-node lease renewal failed")
			continue
		}
		r.single = &tok
	}
}

func (r *Runtime) closeAll() {
	if r.listener != nil {
		_ = r.listener.Close()
	}
	if r.store != nil {
		_ = r.store.Close()
	}
}

// Readiness reports the process's checks: database, membership, scheduler, worker handlers and provider.
func (r *Runtime) Readiness(ctx context.Context) (string, map[string]any) {
	checks := map[string]any{}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := r.store.DBNow(ctx); err != nil {
		checks["database"] = "unavailable"
		return coordinator.ReadyNotReady, checks
	}
	checks["database"] = "ok"
	status := coordinator.ReadyReady
	worse := func(s string) {
		rank := map[string]int{coordinator.ReadyReady: 0, coordinator.ReadyDegraded: 1, coordinator.ReadyNotReady: 2, coordinator.ReadyMisconfigured: 3}
		if rank[s] > rank[status] {
			status = s
		}
	}
	members, err := coordinator.LiveMembers(ctx, r.store)
	if err != nil {
		checks["membership"] = "unavailable"
		worse(coordinator.ReadyNotReady)
	} else {
		st, reason := coordinator.MembershipCheck(members, r.cfg.Role)
		checks["membership"] = reason
		worse(st)
	}
	if r.scheduler != nil {
		if _, leader := r.scheduler.Leader(); leader {
			checks["scheduler"] = "leader"
		} else {
			checks["scheduler"] = "standby"
		}
	}
	if r.worker != nil {
		n, err := r.ledger.UnsupportedHeadCount(ctx, r.worker.Supported())
		switch {
		case err != nil:
			checks["worker"] = "unavailable"
			worse(coordinator.ReadyNotReady)
		case n > 0:
			checks["worker"] = "unsupported_work_waiting"
			worse(coordinator.ReadyMisconfigured)
		default:
			checks["worker"] = "ok"
		}
		kind := r.cfg.ProviderKind
		if kind == "" {
			kind = "local"
		}
		checks["provider"] = kind
	}
	return status, checks
}
