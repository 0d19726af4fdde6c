package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds cmd/powercontext once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "powercontext-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "powercontext")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/powercontext").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// TestStartupRefusals execs the built binary for every refusal of docs/architecture.md#configuration: exit code 2, one line naming the reason,
// before anything starts (no database file is created).
func TestStartupRefusals(t *testing.T) {
	bin := binary(t)
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"distributed on sqlite", []string{"POWERCONTEXT_DEPLOYMENT_MODE=distributed", "POWERCONTEXT_DEPLOYMENT_ROLE=api"}, nil, "distributed mode needs a shared database"},
		{"distributed role all", []string{"POWERCONTEXT_DEPLOYMENT_MODE=distributed", "POWERCONTEXT_DATABASE_URL=postgres://u@127.0.0.1:1/db"}, nil, "role must be api, scheduler or worker"},
		{"single_node worker", []string{"POWERCONTEXT_DEPLOYMENT_ROLE=worker"}, nil, "role must be all"},
		{"non-loopback without token", nil, []string{"--listen", "0.0.0.0:8080"}, "is not loopback: set POWERCONTEXT_AUTH_TOKEN"},
		{"renew above lease/3", []string{"POWERCONTEXT_COORDINATION_SCHEDULER_LEASE_SECONDS=30", "POWERCONTEXT_COORDINATION_SCHEDULER_RENEW_SECONDS=11"}, nil, "scheduler renew interval"},
		{"heartbeat at lease/3", []string{"POWERCONTEXT_WORKER_LEASE_SECONDS=90", "POWERCONTEXT_WORKER_HEARTBEAT_SECONDS=30"}, nil, "worker heartbeat"},
		{"grace not below lease", []string{"POWERCONTEXT_WORKER_SHUTDOWN_GRACE_SECONDS=120"}, nil, "worker shutdown grace"},
		{"retry max below base", nil, []string{"--worker-retry-base-seconds", "10", "--worker-retry-max-seconds", "5"}, "worker retry max"},
		{"negative snooze cap", []string{"POWERCONTEXT_WORKER_MAX_SNOOZES=-1"}, nil, "worker max snoozes must be >= 0"},
		{"zero complete batch", []string{"POWERCONTEXT_WORKER_COMPLETE_BATCH=0"}, nil, "worker complete batch must be between 1 and 1000"},
		{"complete delay above a second", nil, []string{"--worker-complete-delay-seconds", "2"}, "worker complete delay (2s)"},
		{"default wait above max", []string{"POWERCONTEXT_FLUSH_DEFAULT_WAIT_SECONDS=40"}, nil, "flush default wait"},
		{"worker without provider", []string{"POWERCONTEXT_DEPLOYMENT_MODE=distributed", "POWERCONTEXT_DEPLOYMENT_ROLE=worker",
			"POWERCONTEXT_DATABASE_URL=mysql://root@127.0.0.1:1/db"}, nil, "a worker needs a model provider"},
		{"openai without model", []string{"POWERCONTEXT_PROVIDER_KIND=openai", "POWERCONTEXT_PROVIDER_BASE_URL=http://127.0.0.1:1/v1"}, nil, "provider openai needs"},
		{"unparsable number", []string{"POWERCONTEXT_WORKER_CONCURRENCY=four"}, nil, "POWERCONTEXT_WORKER_CONCURRENCY"},
		{"unknown flag", nil, []string{"--no-such-flag"}, "unknown flag"},
		{"bad database url", []string{"POWERCONTEXT_DATABASE_URL=redis://x"}, nil, "POWERCONTEXT_DATABASE_URL"},
		{"write timeout below flush wait", []string{"POWERCONTEXT_HTTP_WRITE_TIMEOUT_SECONDS=30"}, nil, "POWERCONTEXT_HTTP_WRITE_TIMEOUT_SECONDS (30s) must be at least the flush max wait"},
		{"header timeout above read timeout", []string{"POWERCONTEXT_HTTP_READ_HEADER_TIMEOUT_SECONDS=40"}, nil, "must be at most POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS"},
		{"no read timeout", []string{"POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS=0"}, nil, "POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS must be > 0"},
		{"no idle timeout", nil, []string{"--http-idle-timeout-seconds", "0"}, "POWERCONTEXT_HTTP_IDLE_TIMEOUT_SECONDS must be > 0"},
		{"no connections", []string{"POWERCONTEXT_HTTP_MAX_CONNECTIONS=0"}, nil, "POWERCONTEXT_HTTP_MAX_CONNECTIONS must be >= 1"},
		{"tiny list pages", []string{"POWERCONTEXT_HTTP_MAX_LIST_BYTES=1000"}, nil, "POWERCONTEXT_HTTP_MAX_LIST_BYTES must be >= 65536"},
		{"tiny import cap", []string{"POWERCONTEXT_HTTP_MAX_IMPORT_BYTES=4096"}, nil, "POWERCONTEXT_HTTP_MAX_IMPORT_BYTES must be between 1048576 (1 MiB) and 2147483648 (2 GiB)"},
		{"huge import cap", nil, []string{"--http-max-import-bytes", "4294967296"}, "POWERCONTEXT_HTTP_MAX_IMPORT_BYTES must be between 1048576 (1 MiB) and 2147483648 (2 GiB)"},
		{"no import at once", []string{"POWERCONTEXT_HTTP_IMPORTS_AT_ONCE=0"}, nil, "POWERCONTEXT_HTTP_IMPORTS_AT_ONCE must be between 1 and 64"},
		{"too many imports at once", nil, []string{"--http-imports-at-once", "65"}, "POWERCONTEXT_HTTP_IMPORTS_AT_ONCE must be between 1 and 64"},
		{"no mcp sessions", []string{"POWERCONTEXT_MCP_MAX_SESSIONS=0"}, nil, "POWERCONTEXT_MCP_MAX_SESSIONS must be >= 1"},
		{"no mcp streams", []string{"POWERCONTEXT_MCP_MAX_STREAMS_PER_PRINCIPAL=0"}, nil, "POWERCONTEXT_MCP_MAX_STREAMS_PER_PRINCIPAL must be >= 1"},
		{"no mcp stream idle", []string{"POWERCONTEXT_MCP_STREAM_IDLE_SECONDS=0"}, nil, "POWERCONTEXT_MCP_STREAM_IDLE_SECONDS must be > 0"},
		{"short token", []string{"POWERCONTEXT_AUTH_TOKEN=secret"}, nil, "POWERCONTEXT_AUTH_TOKEN or a token named \"admin\": token \"admin\": the token is shorter than 32 characters"},
		{"placeholder token", []string{"POWERCONTEXT_AUTH_TOKEN=change-me-to-a-long-random-token"}, nil, "token \"admin\": the token is a placeholder from the deploy examples"},
		{"missing tokens file", []string{"POWERCONTEXT_AUTH_TOKENS_FILE=/nonexistent/tokens.json"}, nil, "POWERCONTEXT_AUTH_TOKENS_FILE: cannot read /nonexistent/tokens.json"},
		{"bad inline tokens", []string{`POWERCONTEXT_AUTH_TOKENS=[{"name":"a","role":"root","token":"` + strings.Repeat("t", 32) + `"}]`}, nil, `auth tokens: token "a": unknown role "root"`},
		{"misspelt scopes", []string{`POWERCONTEXT_AUTH_TOKENS=[{"name":"a","role":"agent","scope":["x/"],"token":"` + strings.Repeat("t", 32) + `"}]`}, nil, `POWERCONTEXT_AUTH_TOKENS: not a tokens document: unknown field "scope"`},
		{"tls half configured", []string{"POWERCONTEXT_TLS_CERT_FILE=/x.pem"}, nil, "TLS needs both POWERCONTEXT_TLS_CERT_FILE and POWERCONTEXT_TLS_KEY_FILE"},
		{"tls unreadable", []string{"POWERCONTEXT_TLS_CERT_FILE=/nonexistent.pem", "POWERCONTEXT_TLS_KEY_FILE=/nonexistent.key"}, nil, "cannot load the key pair"},
		{"bad trusted proxy", []string{"POWERCONTEXT_HTTP_TRUSTED_PROXIES=10.0.0.0/8, proxy.local"}, nil, `POWERCONTEXT_HTTP_TRUSTED_PROXIES: "proxy.local" is not an IP address or CIDR range`},
		{"negative anonymous budget", []string{"POWERCONTEXT_HTTP_UNAUTHENTICATED_PER_MINUTE=-1"}, nil, "POWERCONTEXT_HTTP_UNAUTHENTICATED_PER_MINUTE must be >= 0"},
		{"no session ttl", []string{"POWERCONTEXT_UI_SESSION_TTL_SECONDS=0"}, nil, "POWERCONTEXT_UI_SESSION_TTL_SECONDS must be > 0"},
		{"unknown embeddings kind", []string{"POWERCONTEXT_EMBEDDINGS_KIND=bert"}, nil, `unknown embeddings kind "bert"`},
		{"openai embeddings without a base url", []string{"POWERCONTEXT_EMBEDDINGS_KIND=openai", "POWERCONTEXT_EMBEDDINGS_MODEL=m"}, nil,
			"embeddings openai needs an http(s) POWERCONTEXT_EMBEDDINGS_BASE_URL"},
		{"openai embeddings without a model", []string{"POWERCONTEXT_EMBEDDINGS_KIND=openai", "POWERCONTEXT_PROVIDER_BASE_URL=http://127.0.0.1:1/v1"}, nil,
			"embeddings openai needs POWERCONTEXT_EMBEDDINGS_MODEL"},
		{"too many dimensions", []string{"POWERCONTEXT_EMBEDDINGS_DIMENSIONS=10000"}, nil, "POWERCONTEXT_EMBEDDINGS_DIMENSIONS must be 0"},
		{"no query timeout", nil, []string{"--embeddings-query-timeout-seconds", "0"}, "POWERCONTEXT_EMBEDDINGS_QUERY_TIMEOUT_SECONDS must be > 0"},
		{"similarity of one", []string{"POWERCONTEXT_EMBEDDINGS_MIN_SIMILARITY=1"}, nil, "POWERCONTEXT_EMBEDDINGS_MIN_SIMILARITY must be >= 0 and < 1"},
		{"negative scan", []string{"POWERCONTEXT_EMBEDDINGS_SCAN_SECONDS=-1"}, nil, "POWERCONTEXT_EMBEDDINGS_SCAN_SECONDS must be >= 0"},
		{"host-local skills target in distributed", []string{"POWERCONTEXT_DEPLOYMENT_MODE=distributed", "POWERCONTEXT_DEPLOYMENT_ROLE=api",
			"POWERCONTEXT_DATABASE_URL=postgres://u@127.0.0.1:1/db", "POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR=/tmp/skills",
			"POWERCONTEXT_SKILLS_LOCAL_TARGET_SCOPE=team"}, nil, "POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR is a folder on one host, which only single_node may write"},
		{"host-local skills target without scope", []string{"POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR=/tmp/skills"}, nil,
			"POWERCONTEXT_SKILLS_LOCAL_TARGET_DIR needs POWERCONTEXT_SKILLS_LOCAL_TARGET_SCOPE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, append([]string{"server", "run"}, tc.args...)...)
			cmd.Dir = dir
			cmd.Env = append(cleanEnv(), tc.env...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "output: %s", out)
			require.Equal(t, 2, exit.ExitCode(), "output: %s", out)
			text := strings.TrimSpace(string(out))
			require.Contains(t, text, tc.want)
			require.NotContains(t, text, "\n", "one line")
			entries, _ := os.ReadDir(dir)
			require.Empty(t, entries, "nothing started: no database file")
		})
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POWERCONTEXT_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestConfigDefaultsAreValid(t *testing.T) {
	cfg := app.DefaultConfig()
	require.NoError(t, cfg.Validate())
	cfg.Listen = "0.0.0.0:8080"
	cfg.AuthToken = strings.Repeat("s", 32)
	require.NoError(t, cfg.Validate(), "a token allows a non-loopback address")
}

// TestSingleNodeSchedulesByDefault: single_node discovers memory every 30 s and experience every 300 s unless a
// flag or the environment says otherwise (0 keeps manual flush only); distributed keeps 0.
func TestSingleNodeSchedulesByDefault(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	cfg := app.DefaultConfig()
	cfg.ApplyModeDefaults(nil, none)
	require.Equal(t, 30.0, cfg.ScheduleSeconds)
	require.Equal(t, 300.0, cfg.ExperienceScheduleSeconds)
	require.NoError(t, cfg.Validate())

	env := map[string]string{"POWERCONTEXT_RUNTIME_SCHEDULE_SECONDS": "0"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg = app.DefaultConfig()
	require.NoError(t, cfg.ApplyEnv(nil, lookup))
	cfg.ApplyModeDefaults(nil, lookup)
	require.Equal(t, 0.0, cfg.ScheduleSeconds, "an explicit 0 keeps manual flush only")
	require.Equal(t, 300.0, cfg.ExperienceScheduleSeconds)

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	cfg = app.DefaultConfig()
	cfg.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--experience-schedule-seconds=0"}))
	cfg.ApplyModeDefaults(fs, none)
	require.Equal(t, 30.0, cfg.ScheduleSeconds)
	require.Equal(t, 0.0, cfg.ExperienceScheduleSeconds)

	cfg = app.DefaultConfig()
	cfg.Mode, cfg.Role = app.ModeDistributed, app.RoleScheduler
	cfg.ApplyModeDefaults(nil, none)
	require.Zero(t, cfg.ScheduleSeconds)
	require.Zero(t, cfg.ExperienceScheduleSeconds)
}

// TestReadmeDocumentsEveryVariable keeps the README configuration table complete.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	vars := regexp.MustCompile(`"(POWERCONTEXT_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
	require.NotEmpty(t, vars)
	for _, v := range vars {
		require.Contains(t, string(readme), "`"+v[1]+"`", "README configuration table misses %s", v[1])
	}
}
