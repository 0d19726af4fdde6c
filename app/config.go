package app

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/dburl"
	"github.com/powercontext/powercontext/sources"
)

// Modes and roles (docs/architecture.md#configuration).
const (
	ModeSingleNode  = "single_node"
	ModeDistributed = "distributed"
	RoleAll         = "all"
	RoleAPI         = "api"
	RoleScheduler   = "scheduler"
	RoleWorker      = "worker"
)

// Config is every setting of `powercontext server run`. Each field is a flag and a POWERCONTEXT_<GROUP>_<FIELD>
// environment variable (flags win over the environment, the environment over defaults).
type Config struct {
	DatabaseURL string
	Mode        string
	Role        string
	Listen      string
	AuthToken   string

	// The HTTP edge: principals, TLS, timeouts and limits (edgeconfig.go, docs/security.md).
	Edge
	// Entry and query embeddings (embedconfig.go, docs/memory.md#embeddings).
	Embeddings
	// The edge's keys and probe limits (guardconfig.go, docs/security.md).
	Guard

	ProviderKind    string // local | openai ("" = not configured; local is used where allowed)
	ProviderBaseURL string
	ProviderModel   string
	ProviderAPIKey  string
	ProviderTimeout float64
	// ProviderMaxRequestBytes is the byte budget of one provider request (docs/protocol.md#windows-that-fit); 0 = none.
	ProviderMaxRequestBytes int

	WorkerConcurrency          int
	WorkerLeaseSeconds         float64
	WorkerHeartbeatSeconds     float64
	WorkerPollSeconds          float64
	WorkerShutdownGraceSeconds float64
	WorkerMaxAttempts          int
	WorkerRetryBaseSeconds     float64
	WorkerRetryMaxSeconds      float64
	WorkerMaxSnoozes           int     // snoozes per item and recovery generation (docs/protocol.md#snooze); 0 = off
	WorkerCompleteBatch        int     // completions per completer transaction (docs/protocol.md#completer); 1 = one each
	WorkerCompleteDelaySeconds float64 // how long a completer batch waits for more; 0 = only what is already waiting

	SchedulerLeaseSeconds float64
	SchedulerRenewSeconds float64
	// CoordinationNotify sends and receives cross-process wake-ups (LISTEN/NOTIFY) on PostgreSQL; ignored elsewhere.
	CoordinationNotify bool

	ScheduleSeconds           float64 // memory discovery interval; 0 = manual flush only
	ExperienceScheduleSeconds float64 // experience discovery interval; 0 = off
	MaintenanceSeconds        float64

	// Data retention (docs/protocol.md#retention), done by maintenance; 0 keeps everything.
	RetentionSourceContentDays float64
	RetentionMemoryRevisions   int

	RateLimitEnabled       bool
	RateLimitRequests      int
	RateLimitWindowSeconds float64

	FlushDefaultWaitSeconds float64
	FlushMaxWaitSeconds     float64

	MemberHeartbeatSeconds float64
	MemberTTLSeconds       float64

	LogFormat string // json | console
	LogLevel  string

	// SkillsLocalTargetDir, single_node only: a skills folder on this host that the server keeps in sync itself as
	// the host-local target of SkillsLocalTargetScope (docs/skills.md#host-local-target).
	SkillsLocalTargetDir   string
	SkillsLocalTargetScope string
	// SkillsScanSeconds is the skill packaging discoverer's interval (docs/skills.md#from-an-approval-to-a-revision);
	// 0 = off.
	SkillsScanSeconds float64
}

// DefaultConfig returns the docs/architecture.md#configuration defaults.
func DefaultConfig() Config {
	return Config{
		DatabaseURL: "sqlite://./data/powercontext.db", Mode: ModeSingleNode, Role: RoleAll, Listen: "127.0.0.1:8080",
		Edge:            DefaultEdge(),
		Embeddings:      DefaultEmbeddings(),
		Guard:           DefaultGuard(),
		ProviderTimeout: 60, ProviderMaxRequestBytes: sources.DefaultMaxRequestBytes,
		WorkerConcurrency: 4, WorkerLeaseSeconds: 120, WorkerHeartbeatSeconds: 30, WorkerPollSeconds: 1,
		WorkerShutdownGraceSeconds: 90, WorkerMaxAttempts: 5, WorkerRetryBaseSeconds: 2, WorkerRetryMaxSeconds: 300,
		WorkerMaxSnoozes: 1000, WorkerCompleteBatch: coordinator.DefaultCompleteBatch,
		SchedulerLeaseSeconds: 30, SchedulerRenewSeconds: 10, CoordinationNotify: true, MaintenanceSeconds: 3600,
		SkillsScanSeconds: 300,
		RateLimitRequests: 120, RateLimitWindowSeconds: 60,
		FlushDefaultWaitSeconds: 10, FlushMaxWaitSeconds: 30,
		MemberHeartbeatSeconds: 10, MemberTTLSeconds: 30,
		LogFormat: "json", LogLevel: "info",
	}
}

// setting binds one field to its flag and environment variable.
type setting struct {
	flag, env, usage string
	ptr              any
}

func (c *Config) settings() []setting {
	return append([]setting{
		{"database-url", "POWERCONTEXT_DATABASE_URL", "database URL: sqlite://PATH, postgres://…, mysql://… (oceanbase:// alias)", &c.DatabaseURL},
		{"mode", "POWERCONTEXT_DEPLOYMENT_MODE", "deployment mode: single_node or distributed", &c.Mode},
		{"role", "POWERCONTEXT_DEPLOYMENT_ROLE", "process role: all (single_node), api, scheduler or worker (distributed)", &c.Role},
		{"listen", "POWERCONTEXT_HTTP_LISTEN", "HTTP listen address", &c.Listen},
		{"auth-token", "POWERCONTEXT_AUTH_TOKEN", "the admin token (>= 32 characters), required on every route but /health/* and /metrics; some token is required off loopback", &c.AuthToken},
		{"provider-kind", "POWERCONTEXT_PROVIDER_KIND", "model provider: local (built-in, default) or openai", &c.ProviderKind},
		{"provider-base-url", "POWERCONTEXT_PROVIDER_BASE_URL", "OpenAI-compatible base URL (provider openai)", &c.ProviderBaseURL},
		{"provider-model", "POWERCONTEXT_PROVIDER_MODEL", "model name (provider openai)", &c.ProviderModel},
		{"provider-api-key", "POWERCONTEXT_PROVIDER_API_KEY", "API key (provider openai; prefer the environment variable)", &c.ProviderAPIKey},
		{"provider-timeout-seconds", "POWERCONTEXT_PROVIDER_TIMEOUT_SECONDS", "provider request timeout", &c.ProviderTimeout},
		{"provider-max-request-bytes", "POWERCONTEXT_PROVIDER_MAX_REQUEST_BYTES", "byte budget of one provider request: a larger window is split into consecutive windows (0 = no budget)", &c.ProviderMaxRequestBytes},
		{"worker-concurrency", "POWERCONTEXT_WORKER_CONCURRENCY", "execution slots per worker process (attempts preparing at once; as many more may wait for their commit)", &c.WorkerConcurrency},
		{"worker-lease-seconds", "POWERCONTEXT_WORKER_LEASE_SECONDS", "work lease length", &c.WorkerLeaseSeconds},
		{"worker-heartbeat-seconds", "POWERCONTEXT_WORKER_HEARTBEAT_SECONDS", "lease heartbeat interval (< lease/3)", &c.WorkerHeartbeatSeconds},
		{"worker-poll-seconds", "POWERCONTEXT_WORKER_POLL_SECONDS", "claim poll interval", &c.WorkerPollSeconds},
		{"worker-shutdown-grace-seconds", "POWERCONTEXT_WORKER_SHUTDOWN_GRACE_SECONDS", "in-flight work grace on SIGTERM (< lease)", &c.WorkerShutdownGraceSeconds},
		{"worker-max-attempts", "POWERCONTEXT_WORKER_MAX_ATTEMPTS", "attempts per recovery generation", &c.WorkerMaxAttempts},
		{"worker-retry-base-seconds", "POWERCONTEXT_WORKER_RETRY_BASE_SECONDS", "retry backoff base (full jitter)", &c.WorkerRetryBaseSeconds},
		{"worker-retry-max-seconds", "POWERCONTEXT_WORKER_RETRY_MAX_SECONDS", "retry backoff cap (>= base)", &c.WorkerRetryMaxSeconds},
		{"worker-max-snoozes", "POWERCONTEXT_WORKER_MAX_SNOOZES", "rate-limited waits per item and recovery generation that spend no attempt (0 = every rate limit spends one)", &c.WorkerMaxSnoozes},
		{"worker-complete-batch", "POWERCONTEXT_WORKER_COMPLETE_BATCH", "completions one completer transaction carries at most (1 = a transaction each)", &c.WorkerCompleteBatch},
		{"worker-complete-delay-seconds", "POWERCONTEXT_WORKER_COMPLETE_DELAY_SECONDS", "how long a completer batch waits for more completions (0 = only those already waiting)", &c.WorkerCompleteDelaySeconds},
		{"scheduler-lease-seconds", "POWERCONTEXT_COORDINATION_SCHEDULER_LEASE_SECONDS", "scheduler leader lease", &c.SchedulerLeaseSeconds},
		{"scheduler-renew-seconds", "POWERCONTEXT_COORDINATION_SCHEDULER_RENEW_SECONDS", "scheduler lease renewal interval (<= lease/3)", &c.SchedulerRenewSeconds},
		{"coordination-notify", "POWERCONTEXT_COORDINATION_NOTIFY", "cross-process wake-ups over LISTEN/NOTIFY (PostgreSQL only; polling stays the floor)", &c.CoordinationNotify},
		{"schedule-seconds", "POWERCONTEXT_RUNTIME_SCHEDULE_SECONDS", "memory discovery interval (0 = manual flush only; single_node default 30)", &c.ScheduleSeconds},
		{"experience-schedule-seconds", "POWERCONTEXT_RUNTIME_EXPERIENCE_SCHEDULE_SECONDS", "experience discovery interval (0 = off; single_node default 300)", &c.ExperienceScheduleSeconds},
		{"maintenance-seconds", "POWERCONTEXT_RUNTIME_MAINTENANCE_SECONDS", "operation maintenance interval", &c.MaintenanceSeconds},
		{"retention-source-content-days", "POWERCONTEXT_RETENTION_SOURCE_CONTENT_DAYS", "erase the content of Sources older than this once Memory (and Experience) consumed them (0 = keep)", &c.RetentionSourceContentDays},
		{"retention-memory-revisions", "POWERCONTEXT_RETENTION_MEMORY_REVISIONS", "keep this many newest Memory revisions per scope, deleting older ones with their entries (0 = keep all)", &c.RetentionMemoryRevisions},
		{"rate-limit-enabled", "POWERCONTEXT_RATE_LIMIT_ENABLED", "shared fixed-window rate limit per principal", &c.RateLimitEnabled},
		{"rate-limit-requests", "POWERCONTEXT_RATE_LIMIT_REQUESTS", "requests per window per principal", &c.RateLimitRequests},
		{"rate-limit-window-seconds", "POWERCONTEXT_RATE_LIMIT_WINDOW_SECONDS", "rate-limit window", &c.RateLimitWindowSeconds},
		{"flush-default-wait-seconds", "POWERCONTEXT_FLUSH_DEFAULT_WAIT_SECONDS", "flush wait without a Prefer header", &c.FlushDefaultWaitSeconds},
		{"flush-max-wait-seconds", "POWERCONTEXT_FLUSH_MAX_WAIT_SECONDS", "largest accepted Prefer: wait=N", &c.FlushMaxWaitSeconds},
		{"member-heartbeat-seconds", "POWERCONTEXT_MEMBER_HEARTBEAT_SECONDS", "membership heartbeat", &c.MemberHeartbeatSeconds},
		{"member-ttl-seconds", "POWERCONTEXT_MEMBER_TTL_SECONDS", "membership time to live", &c.MemberTTLSeconds},
		{"log-format", "POWERCONTEXT_LOG_FORMAT", "log format: json or console", &c.LogFormat},
		{"log-level", "POWERCONTEXT_LOG_LEVEL", "log level: debug, info, warn, error", &c.LogLevel},
		{"skills-local-target-dir", "POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR", "single_node only: a skills folder on this host the server keeps in sync as a host-local target", &c.SkillsLocalTargetDir},
		{"skills-local-target-scope", "POWERCONTEXT_SKILLS_LOCAL_TARGET_SCOPE", "the scope whose skills the host-local target receives", &c.SkillsLocalTargetScope},
		{"skills-scan-seconds", "POWERCONTEXT_SKILLS_SCAN_SECONDS", "interval of the scan for approved Experience candidates no skill revision holds yet, whose packaging it enqueues (0 = off)", &c.SkillsScanSeconds},
	}, append(append(c.edgeSettings(), c.embeddingSettings()...), c.guardSettings()...)...)
}

// refuse returns a configuration refusal: one line, exit code 2 (see ConfigError).
func refuse(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}

// BindFlags registers every setting on fs with the current values as defaults.
func (c *Config) BindFlags(fs *pflag.FlagSet) {
	for _, s := range c.settings() {
		usage := s.usage + " (env " + s.env + ")"
		switch p := s.ptr.(type) {
		case *string:
			fs.StringVar(p, s.flag, *p, usage)
		case *int:
			fs.IntVar(p, s.flag, *p, usage)
		case *float64:
			fs.Float64Var(p, s.flag, *p, usage)
		case *bool:
			fs.BoolVar(p, s.flag, *p, usage)
		}
	}
}

// ApplyEnv reads every POWERCONTEXT_* variable that is set and whose flag was not given on the command line.
func (c *Config) ApplyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	for _, s := range c.settings() {
		if fs != nil && fs.Changed(s.flag) {
			continue
		}
		v, ok := lookup(s.env)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var err error
		switch p := s.ptr.(type) {
		case *string:
			*p = v
		case *int:
			*p, err = strconv.Atoi(v)
		case *float64:
			*p, err = strconv.ParseFloat(v, 64)
		case *bool:
			*p, err = strconv.ParseBool(v)
		}
		if err != nil {
			return refuse("%s: %q is not a valid value", s.env, v)
		}
	}
	return nil
}

// Discovery intervals a single_node process uses when neither the flag nor the environment sets them, so a
// captured Source reaches Memory (and task outcomes reach incubation) without any flush call. distributed keeps 0
// (manual only) unless configured: its scheduler role is sized by the operator.
const (
	SingleNodeScheduleSeconds           = 30
	SingleNodeExperienceScheduleSeconds = 300
)

// ApplyModeDefaults sets the single_node discovery intervals that neither a flag on fs nor the environment set
// (lookup nil = os.LookupEnv). Call it after ApplyEnv.
func (c *Config) ApplyModeDefaults(fs *pflag.FlagSet, lookup func(string) (string, bool)) {
	if c.Mode != ModeSingleNode {
		return
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	set := func(flag, env string) bool {
		if fs != nil && fs.Changed(flag) {
			return true
		}
		_, ok := lookup(env)
		return ok
	}
	if !set("schedule-seconds", "POWERCONTEXT_RUNTIME_SCHEDULE_SECONDS") {
		c.ScheduleSeconds = SingleNodeScheduleSeconds
	}
	if !set("experience-schedule-seconds", "POWERCONTEXT_RUNTIME_EXPERIENCE_SCHEDULE_SECONDS") {
		c.ExperienceScheduleSeconds = SingleNodeExperienceScheduleSeconds
	}
}

// Seconds converts a seconds setting to a duration.
func Seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Days converts a days setting to a duration.
func Days(d float64) time.Duration { return time.Duration(d * 24 * float64(time.Hour)) }

// RunsAPI reports whether this process serves the HTTP API (role api or all).
func (c *Config) RunsAPI() bool { return c.Role == RoleAll || c.Role == RoleAPI }

// RunsScheduler reports whether this process runs the scheduler (role scheduler or all).
func (c *Config) RunsScheduler() bool { return c.Role == RoleAll || c.Role == RoleScheduler }

// RunsWorker reports whether this process runs workers (role worker or all).
func (c *Config) RunsWorker() bool { return c.Role == RoleAll || c.Role == RoleWorker }

// Validate refuses a configuration before anything starts (docs/architecture.md#configuration). It returns a *ConfigError.
func (c *Config) Validate() error {
	u, err := dburl.Parse(c.DatabaseURL)
	if err != nil {
		return refuse("POWERCONTEXT_DATABASE_URL: %v", err)
	}
	switch c.Mode {
	case ModeSingleNode:
		if c.Role != RoleAll {
			return refuse("single_node mode runs every role in one process: role must be all, not %q", c.Role)
		}
	case ModeDistributed:
		if u.Engine == db.EngineSQLite {
			return refuse("distributed mode needs a shared database (postgres:// or mysql://), not SQLite")
		}
		switch c.Role {
		case RoleAPI, RoleScheduler, RoleWorker:
		case RoleAll:
			return refuse("distributed mode runs one role per process: role must be api, scheduler or worker, not all")
		default:
			return refuse("unknown role %q: use api, scheduler or worker", c.Role)
		}
	default:
		return refuse("unknown mode %q: use single_node or distributed", c.Mode)
	}
	if c.SkillsLocalTargetDir != "" {
		if c.Mode != ModeSingleNode {
			return refuse("POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR is a folder on one host, which only single_node may write: " +
				"in distributed mode agents enroll and run \"powercontext skills sync\" (docs/skills.md)")
		}
		if sources.ValidateScope(c.SkillsLocalTargetScope) != nil {
			return refuse("POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR needs POWERCONTEXT_SKILLS_LOCAL_TARGET_SCOPE, the scope whose skills it receives")
		}
	}
	if err := c.checkAuth(); err != nil {
		return err
	}
	pos := func(name string, v float64) error {
		if v <= 0 {
			return refuse("%s must be > 0", name)
		}
		return nil
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"worker lease seconds", c.WorkerLeaseSeconds}, {"worker heartbeat seconds", c.WorkerHeartbeatSeconds},
		{"worker poll seconds", c.WorkerPollSeconds}, {"worker shutdown grace seconds", c.WorkerShutdownGraceSeconds},
		{"worker retry base seconds", c.WorkerRetryBaseSeconds}, {"worker retry max seconds", c.WorkerRetryMaxSeconds},
		{"scheduler lease seconds", c.SchedulerLeaseSeconds}, {"scheduler renew seconds", c.SchedulerRenewSeconds},
		{"flush max wait seconds", c.FlushMaxWaitSeconds}, {"member heartbeat seconds", c.MemberHeartbeatSeconds},
		{"member ttl seconds", c.MemberTTLSeconds}, {"maintenance seconds", c.MaintenanceSeconds},
		{"provider timeout seconds", c.ProviderTimeout},
	} {
		if err := pos(p.name, p.v); err != nil {
			return err
		}
	}
	switch {
	case c.WorkerConcurrency < 1:
		return refuse("worker concurrency must be >= 1")
	case c.WorkerMaxAttempts < 1:
		return refuse("worker max attempts must be >= 1")
	case c.WorkerMaxSnoozes < 0:
		return refuse("worker max snoozes must be >= 0 (0 = off)")
	case c.WorkerCompleteBatch < 1 || c.WorkerCompleteBatch > 1000:
		return refuse("worker complete batch must be between 1 and 1000")
	case c.WorkerCompleteDelaySeconds < 0 || c.WorkerCompleteDelaySeconds > 1:
		return refuse("worker complete delay (%gs) must be between 0 and 1 second", c.WorkerCompleteDelaySeconds)
	case c.SchedulerRenewSeconds > c.SchedulerLeaseSeconds/3:
		return refuse("scheduler renew interval (%gs) must be at most a third of the scheduler lease (%gs)", c.SchedulerRenewSeconds, c.SchedulerLeaseSeconds)
	case c.WorkerHeartbeatSeconds >= c.WorkerLeaseSeconds/3:
		return refuse("worker heartbeat (%gs) must be less than a third of the worker lease (%gs)", c.WorkerHeartbeatSeconds, c.WorkerLeaseSeconds)
	case c.WorkerShutdownGraceSeconds >= c.WorkerLeaseSeconds:
		return refuse("worker shutdown grace (%gs) must be less than the worker lease (%gs)", c.WorkerShutdownGraceSeconds, c.WorkerLeaseSeconds)
	case c.WorkerRetryMaxSeconds < c.WorkerRetryBaseSeconds:
		return refuse("worker retry max (%gs) must be at least the retry base (%gs)", c.WorkerRetryMaxSeconds, c.WorkerRetryBaseSeconds)
	case c.FlushDefaultWaitSeconds < 0 || c.FlushDefaultWaitSeconds > c.FlushMaxWaitSeconds:
		return refuse("flush default wait (%gs) must be between 0 and the max wait (%gs)", c.FlushDefaultWaitSeconds, c.FlushMaxWaitSeconds)
	case c.ScheduleSeconds < 0 || c.ExperienceScheduleSeconds < 0:
		return refuse("schedule intervals must be >= 0 (0 = off)")
	case c.SkillsScanSeconds < 0:
		return refuse("POWERCONTEXT_SKILLS_SCAN_SECONDS must be >= 0 (0 = off)")
	case c.RetentionSourceContentDays < 0:
		return refuse("POWERCONTEXT_RETENTION_SOURCE_CONTENT_DAYS must be >= 0 (0 = keep)")
	case c.ProviderMaxRequestBytes < 0 || (c.ProviderMaxRequestBytes > 0 && c.ProviderMaxRequestBytes < 4096):
		return refuse("POWERCONTEXT_PROVIDER_MAX_REQUEST_BYTES must be 0 (no budget) or >= 4096")
	case c.RetentionMemoryRevisions < 0:
		return refuse("POWERCONTEXT_RETENTION_MEMORY_REVISIONS must be >= 0 (0 = keep all)")
	case c.MemberHeartbeatSeconds >= c.MemberTTLSeconds:
		return refuse("member heartbeat (%gs) must be less than the member ttl (%gs)", c.MemberHeartbeatSeconds, c.MemberTTLSeconds)
	case c.RateLimitEnabled && (c.RateLimitRequests < 1 || c.RateLimitWindowSeconds <= 0):
		return refuse("rate limit needs requests >= 1 and a positive window")
	}
	if err := c.validateEdge(); err != nil {
		return err
	}
	if err := c.validateGuard(); err != nil {
		return err
	}
	if err := c.validateEmbeddings(); err != nil {
		return err
	}
	switch c.ProviderKind {
	case "":
		if c.Mode == ModeDistributed && c.Role == RoleWorker {
			return refuse("a worker needs a model provider: set POWERCONTEXT_PROVIDER_KIND (local or openai)")
		}
	case "local":
	case "openai":
		if c.ProviderBaseURL == "" || c.ProviderModel == "" {
			return refuse("provider openai needs POWERCONTEXT_PROVIDER_BASE_URL and POWERCONTEXT_PROVIDER_MODEL")
		}
	default:
		return refuse("unknown provider kind %q: use local or openai", c.ProviderKind)
	}
	switch c.LogFormat {
	case "json", "console":
	default:
		return refuse("unknown log format %q: use json or console", c.LogFormat)
	}
	return nil
}
