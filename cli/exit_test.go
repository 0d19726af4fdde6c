package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/internal/testutil"
)

// exitRuntime starts the real service (app.Start: single_node, role all, SQLite) with an auth token and an
// OpenAI-compatible model that rejects every window (400: the flush fails) unless it contains HANG, which it holds
// until the test ends (the flush stays running).
func exitRuntime(t *testing.T) (url, token string) {
	t.Helper()
	release := make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("HANG")) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		http.Error(w, `{"error":{"message":"rejected"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(model.Close)

	token = strings.Repeat("t", 32)
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "pc.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.AuthToken = token
	cfg.ProviderKind, cfg.ProviderBaseURL, cfg.ProviderModel, cfg.ProviderAPIKey = "openai", model.URL+"/v1", "m", "k"
	cfg.ProviderTimeout = 600
	cfg.WorkerMaxAttempts = 1
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.2, 5
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, io.Discard)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	// Cleanups run last-registered first: the held model call is released, then the runtime stops.
	t.Cleanup(func() { close(release) })
	return "http://" + rt.Addr(), token
}

// TestExitCodes is the exit-code table of README.md#exit-codes, against the real service and an unreachable
// address, in text and with -o json (whose error is one JSON object on standard error).
func TestExitCodes(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	t.Setenv(cli.EnvServerURL, "")
	url, token := exitRuntime(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	at := []string{"--server", url, "--token", token}
	with := func(a ...string) []string { return append(append([]string{}, a...), at...) }
	// Scopes whose next flush fails (the model rejects it) and stays running (the model holds it).
	for _, s := range []struct{ scope, content string }{{"fails", "The deploy window is Tuesday."}, {"hangs", "HANG"}} {
		code, _, errOut := run(with("sources", "add", "--scope", s.scope, s.content)...)
		require.Equal(t, app.ExitOK, code, errOut)
	}

	for _, c := range []struct {
		name     string
		args     []string
		exit     int
		jsonCode string // the JSON error's code
		text     string // in the text error
	}{
		{"ok", with("sources", "add", "--scope", "ok", "hello"), cli.ExitOK, "", ""},
		{"usage: flag missing", with("memory", "flush"), cli.ExitUsage, "usage_error", "--scope is required"},
		{"usage: bad flag value", with("memory", "search", "--scope", "s", "--limit", "many", "q"), cli.ExitUsage,
			"usage_error", "invalid argument"},
		{"unreachable", []string{"ops", "list", "--server", closed}, cli.ExitUnreachable, "unreachable",
			"cannot reach powercontext at " + closed},
		{"4xx: bad token", []string{"ops", "list", "--server", url, "--token", strings.Repeat("x", 32)},
			cli.ExitClientError, "unauthorized", "pass --token"},
		{"4xx: not found", with("ops", "get", "5f0c0000-0000-4000-8000-000000000000"), cli.ExitClientError,
			"operation_not_found", "operation_not_found"},
		{"4xx: validation", with("memory", "search", "--scope", "s", "--mode", "vector", "q"), cli.ExitClientError,
			"invalid_request", "field mode"},
		{"operation failed", with("memory", "flush", "--scope", "fails", "--poll", "20ms"), cli.ExitFailed,
			"", "failed: provider/request_rejected"},
		{"operation still running at --deadline", with("memory", "flush", "--scope", "hangs", "--poll", "20ms",
			"--deadline", "500ms"), cli.ExitPending, "operation_pending", "when --deadline 500ms passed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(c.args...)
			require.Equal(t, c.exit, code, errOut)
			if c.exit == cli.ExitOK {
				require.Empty(t, errOut)
				return
			}
			require.Empty(t, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			require.True(t, strings.HasPrefix(errOut, "powercontext: "), errOut)
			require.Contains(t, errOut, c.text)

			// -o json: the same exit code, and the error is a JSON object on standard error.
			code, out, errOut = run(append(c.args, "-o", "json")...)
			require.Equal(t, c.exit, code, errOut)
			require.Empty(t, out)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			var obj struct {
				Error cli.ErrorObject `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &obj), errOut)
			require.Equal(t, c.exit, obj.Error.ExitCode)
			require.NotEmpty(t, obj.Error.Message)
			if c.jsonCode != "" {
				require.Equal(t, c.jsonCode, obj.Error.Code, errOut)
			}
			switch c.exit {
			case cli.ExitClientError:
				require.GreaterOrEqual(t, obj.Error.Status, 400)
				require.NotEmpty(t, obj.Error.RequestID)
			case cli.ExitPending:
				require.NotEmpty(t, obj.Error.OperationID)
				require.Equal(t, "running", obj.Error.Details["status"])
			case cli.ExitFailed:
				require.Contains(t, []string{"operation_failed", "operation_blocked"}, obj.Error.Code)
				require.NotEmpty(t, obj.Error.OperationID)
			}
		})
	}
}

// TestJSONOutputFlag: which command lines ask for JSON errors.
func TestJSONOutputFlag(t *testing.T) {
	for args, want := range map[string]bool{
		"ops list -o json":             true,
		"ops list --output json":       true,
		"ops list --output=json":       true,
		"ops list -ojson":              true,
		"ops list -o=json":             true,
		"ops list -o json -o text":     false,
		"ops list":                     false,
		"ops list -o text":             false,
		"sources add -- -o json":       false,
		"memory search --scope s json": false,
	} {
		require.Equal(t, want, cli.JSONOutput(strings.Fields(args)), args)
	}
}

// TestCompletion: --mode, --status, --kind and --output complete to their values, never to file names.
func TestCompletion(t *testing.T) {
	noFiles := ":4\n" // cobra.ShellCompDirectiveNoFileComp
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"memory", "search", "--mode", ""}, []string{"fts", "semantic", "hybrid"}},
		{[]string{"memory", "context", "--scope", "s", "--mode", ""}, []string{"fts", "semantic", "hybrid"}},
		{[]string{"ops", "list", "--status", ""}, []string{"queued", "running", "retry_wait", "cancelling",
			"succeeded", "failed", "cancelled"}},
		{[]string{"ops", "list", "--kind", ""}, []string{"memory_flush", "experience_incubation", "memory_redact",
			"memory_embed", "scope_erase", "scope_export", "scope_import", "maintenance"}},
		{[]string{"experience", "candidates", "--status", ""}, []string{"pending", "approved", "rejected", "withdrawn"}},
		{[]string{"memory", "show", "-o", ""}, []string{"text", "json"}},
	} {
		code, out, errOut := run(append([]string{"__complete"}, c.args...)...)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Equal(t, strings.Join(c.want, "\n")+"\n"+noFiles, out, c.args)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reading test.
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

// TestFlushPrintsPlainProgressWhenNotATerminal: standard error is not a terminal (a buffer), so a flush prints a
// plain progress line every --progress-interval while the operation runs — text, or JSON objects with -o json —
// and no carriage returns.
func TestFlushPrintsPlainProgressWhenNotATerminal(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	api, url := newFakeAPI(t)
	for _, c := range []struct {
		output, want string
	}{
		{"text", "operation op-1: running (attempt 1), "},
		{"json", `{"progress":{"attempt_count":1,"elapsed_seconds":`},
	} {
		api.mu.Lock()
		api.polls, api.opScript = 0, []opStep{{"running", 1, ""}} // running until released below
		api.mu.Unlock()
		errOut := &syncBuffer{}
		var out bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- app.Main(context.Background(), []string{"memory", "flush", "--server", url, "--scope", "team",
				"--poll", "5ms", "--deadline", "10m", "--progress-interval", "10ms", "-o", c.output}, &out, errOut)
		}()
		testutil.Eventually(t, time.Minute, func() bool { return strings.Count(errOut.String(), c.want) >= 2 },
			"no progress lines: %q", errOut)
		api.mu.Lock()
		api.polls, api.opScript = 0, []opStep{{"succeeded", 2, ""}}
		api.mu.Unlock()
		require.Equal(t, app.ExitOK, <-done, errOut.String())
		require.NotContains(t, errOut.String(), "\r")
		for _, line := range strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n") {
			if c.output == "json" {
				require.True(t, json.Valid([]byte(line)), line)
				require.Contains(t, line, `"operation_id":"op-1"`)
			} else {
				// A tick may land before the first poll (the accepted record, queued) or between the last poll
				// and the end (succeeded): lines report whatever status was last seen.
				require.Regexp(t, `^operation op-1: (queued|running \(attempt 1\)|succeeded \(attempt 2\)), \d+s elapsed$`, line)
			}
		}
		if c.output == "text" {
			require.Contains(t, out.String(), "flushed 3 sources of scope team")
		}
	}
}
