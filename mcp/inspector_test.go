package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/internal/testutil"
)

// inspectorDir holds the package.json and package-lock.json that pin the MCP Inspector.
const inspectorDir = "inspector"

// inspector installs the pinned MCP Inspector (npm ci, when node_modules is missing or older than the lock file)
// and returns its command. The suite runs from `make clients-test` (PC_TEST_MCP_INSPECTOR=1); without node/npm it
// is skipped unless PC_TEST_REQUIRE_CLIENTS=1.
func inspector(t *testing.T) string {
	t.Helper()
	if os.Getenv("PC_TEST_MCP_INSPECTOR") == "" {
		t.Skip("MCP Inspector suite: run it with `make clients-test` (or PC_TEST_MCP_INSPECTOR=1)")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PC_TEST_REQUIRE_CLIENTS") != "" {
				t.Fatalf("%s is required (PC_TEST_REQUIRE_CLIENTS is set)", tool)
			}
			t.Skipf("%s not found; MCP Inspector suite skipped", tool)
		}
	}
	return testutil.NpmBin(t, inspectorDir, "mcp-inspector")
}

// inspectorCall is one run of the Inspector's CLI.
type inspectorCall struct {
	exit           int
	stdout, stderr string
	result         struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
}

// TestInspectorCLIDrivesEveryTool (issue 35 item 3): the MCP Inspector's CLI — a client that converts --tool-arg
// values by the input schema's type — calls every tool of a real single_node server (SQLite, bearer token)
// with numbers where the schema says integer or number; its strict schema check finds nothing to report about the
// input schemas; and refused arguments come back as documented tool errors.
func TestInspectorCLIDrivesEveryTool(t *testing.T) {
	bin := inspector(t)
	token := strings.Repeat("i", 32)
	cfg := app.DefaultConfig()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "pc.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.AuthToken = token
	cfg.MemberHeartbeatSeconds, cfg.MemberTTLSeconds = 0.2, 5
	require.NoError(t, cfg.Validate())
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := app.Start(ctx, cfg, &bytes.Buffer{})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	url := "http://" + rt.Addr() + "/mcp"
	home := t.TempDir() // the Inspector keeps a catalog under $HOME

	run := func(args ...string) inspectorCall {
		t.Helper()
		cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		full := append([]string{"--cli", url, "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)
		cmd := exec.CommandContext(cctx, bin, full...)
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"), "NO_COLOR=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		require.NoError(t, cctx.Err(), "the Inspector did not finish within 60 s: %v", args)
		c := inspectorCall{stdout: stdout.String(), stderr: stderr.String()}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			c.exit = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
		_ = json.Unmarshal(stdout.Bytes(), &c.result)
		return c
	}
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		c := run(append([]string{"--method", "tools/call", "--tool-name", tool, "--tool-arg"}, args...)...)
		require.Equal(t, 0, c.exit, "%s %v: %s %s", tool, args, c.stdout, c.stderr)
		require.False(t, c.result.IsError, "%s: %s", tool, c.stdout)
		require.NotNil(t, c.result.StructuredContent, "%s: %s", tool, c.stdout)
		return c.result.StructuredContent
	}
	refused := func(want, tool string, args ...string) {
		t.Helper()
		c := run(append([]string{"--method", "tools/call", "--tool-name", tool, "--tool-arg"}, args...)...)
		require.NotEqual(t, 0, c.exit, c.stdout)
		require.True(t, c.result.IsError, c.stdout)
		require.Len(t, c.result.Content, 1, c.stdout)
		require.True(t, strings.HasPrefix(c.result.Content[0].Text, want), "want %q, got %q", want, c.result.Content[0].Text)
		requireNoLeak(t, tool, c.stdout)
	}

	// The tool list, with the Inspector's strict portability report: nothing about any input schema.
	list := run("--method", "tools/list", "--strict")
	require.Equal(t, 0, list.exit, "%s %s", list.stdout, list.stderr)
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(list.stdout), &tools), list.stdout)
	require.Len(t, tools.Tools, 12)
	require.NotContains(t, list.stderr, "inputSchema", "the Inspector reports input schema problems")

	scope := "inspector/demo"
	captured := call("capture_source", "scope_id="+scope, "content=Staging uses PostgreSQL 16.", `metadata={"kind":"note"}`)
	require.Equal(t, true, captured["created"])
	flushed := call("flush_memory", "scope_id="+scope, "wait_seconds=10")
	require.Contains(t, []any{"processed", "pending"}, flushed["status"])
	opID, ok := flushed["operation_id"].(string)
	require.True(t, ok, "a flush with a pending Source names its operation: %v", flushed)
	op := call("get_operation", "operation_id="+opID)
	require.Equal(t, "memory_flush", op["kind"])
	call("get_memory", "scope_id="+scope)
	call("search_memory", "scope_id="+scope, "q=PostgreSQL", "limit=5", "mode=fts")
	got := call("get_context", "scope_id="+scope, "q=staging", "max_tokens=100")
	require.EqualValues(t, 100, got["max_tokens"], "max_tokens arrives as a number")
	call("memory_history", "scope_id="+scope, "limit=5")
	sources := call("list_sources", "scope_id="+scope, "limit=1")
	require.Len(t, sources["items"], 1)
	incubated := call("incubate_experience", "scope_id="+scope, "wait_seconds=1")
	require.Contains(t, []any{"idle", "processed", "pending"}, incubated["status"])
	call("list_experience_candidates", "scope_id="+scope, "status=pending")
	skillList := call("list_skills", "scope_id="+scope, "limit=5")
	require.Equal(t, []any{}, skillList["items"], "nothing approved, nothing packaged")
	// No skill exists here: the not-found error shows that revision arrived as a number (a string would be refused
	// as invalid_request: revision: must be an integer).
	refused("skill_not_found: skill_name: no such skill in that scope", "get_skill", "scope_id="+scope, "skill_name=none-yet", "revision=1")

	// Refusals are documented tool errors, not library text.
	refused("invalid_request: max_tokens: must be 1..100000", "get_context", "scope_id="+scope, "max_tokens=0")
	refused("invalid_request: limit: must be 1..500", "list_sources", "scope_id="+scope, "limit=501")
	refused("invalid_request: surprise: is not an argument of this tool", "get_memory", "scope_id="+scope, "surprise=1")
	refused("invalid_request: mode: must be one of fts, semantic, hybrid", "search_memory", "scope_id="+scope, "q=x", "mode=vector")
	refused("invalid_request: limit: must be 1..100", "list_skills", "scope_id="+scope, "limit=101")
	refused("invalid_request: skill_name: must be 1..64 characters", "get_skill", "scope_id="+scope, "skill_name=Not-A-Name")
}
