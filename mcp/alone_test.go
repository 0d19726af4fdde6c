package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
)

// runWorker runs memory flushes and experience incubations from the ledger until the test ends, like the worker
// of a single_node process.
func runWorker(t *testing.T, s db.Store, ledger *coordinator.Ledger) {
	t.Helper()
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "mcp-test-worker", Concurrency: 1,
		Poll: 5 * time.Millisecond, Logger: zerolog.Nop()},
		&memory.Handler{Store: s, Provider: provider.NewLocal()}, &experience.Handler{Store: s, Provider: provider.NewLocal()})
	require.NoError(t, err)
	testutil.RunWorker(t, w)
}

func call[T any](t *testing.T, session *sdk.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*sdk.TextContent).Text
	}
	require.False(t, res.IsError, "%s: %s", name, text)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// TestMCPAloneCapturesFlushesAndReadsContext: an agent that speaks only MCP (the official SDK's client) captures
// Sources, gets them into Memory with flush_memory and get_operation, and reads them back through get_context and
// list_sources, with no HTTP API call — on every engine.
func TestMCPAloneCapturesFlushesAndReadsContext(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ledger := coordinator.NewLedger(s)
		d := deps(s, zerolog.Nop())
		d.Ledger = ledger
		d.Flusher = &memory.Flusher{Ledger: ledger, Consumer: memory.Consumer(3)}
		d.Incubator = &experience.Incubator{Ledger: ledger, Consumer: experience.Consumer(3)}
		srv := httptest.NewServer(mcp.NewHandler(d, false))
		t.Cleanup(srv.Close)
		ctx := context.Background()
		session, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = session.Close() })

		tools, err := session.ListTools(ctx, nil)
		require.NoError(t, err)
		for _, tool := range tools.Tools {
			require.NotNil(t, tool.InputSchema, tool.Name)
			if tool.Name != mcp.ToolCaptureSource && tool.Name != mcp.ToolGetMemory && tool.Name != mcp.ToolSearchMemory &&
				tool.Name != mcp.ToolListExperienceCandidates {
				require.NotNil(t, tool.OutputSchema, "%s: output schema from its Go type", tool.Name)
			}
		}

		for _, c := range []string{"Staging uses PostgreSQL 17.", "部署前需要运行数据库迁移脚本。"} {
			call[mcp.CaptureSourceOutput](t, session, "capture_source", map[string]any{"scope_id": "agent", "content": c})
		}
		srcs := call[mcp.SourceList](t, session, "list_sources", map[string]any{"scope_id": "agent"})
		require.Len(t, srcs.Items, 2)
		require.Nil(t, srcs.NextAfter)
		page := call[mcp.SourceList](t, session, "list_sources", map[string]any{"scope_id": "agent", "limit": 1})
		require.Len(t, page.Items, 1)
		require.Equal(t, int64(1), *page.NextAfter)

		// No worker yet: the flush answers pending with an operation id at once.
		fl := call[mcp.FlushMemoryOutput](t, session, "flush_memory", map[string]any{"scope_id": "agent", "wait_seconds": 0})
		require.Equal(t, "pending", fl.Status)
		require.NotNil(t, fl.OperationID)
		op := call[mcp.OperationOutput](t, session, "get_operation", map[string]any{"operation_id": *fl.OperationID})
		require.Equal(t, "memory_flush", op.Kind)
		require.Equal(t, db.StatusQueued, op.Status)

		runWorker(t, s, ledger)
		testutil.Eventually(t, 30*time.Second, func() bool {
			op = call[mcp.OperationOutput](t, session, "get_operation", map[string]any{"operation_id": *fl.OperationID})
			return op.Status == db.StatusSucceeded
		}, "the flush did not succeed")
		require.Equal(t, map[string]any{"revision": float64(1)}, op.Result["memory"])

		// Nothing pending now: idle with the revision.
		fl = call[mcp.FlushMemoryOutput](t, session, "flush_memory", map[string]any{"scope_id": "agent"})
		require.Equal(t, "idle", fl.Status)
		require.Equal(t, int64(1), *fl.Revision)

		cx := call[mcp.ContextOutput](t, session, "get_context", map[string]any{"scope_id": "agent", "q": "迁移"})
		require.NotEmpty(t, cx.Items)
		require.Contains(t, cx.Items[0].Content, "数据库迁移")
		require.Equal(t, []int64{2}, cx.Items[0].SourcePositions)
		cx = call[mcp.ContextOutput](t, session, "get_context", map[string]any{"scope_id": "agent", "q": "staging", "max_tokens": 20})
		require.LessOrEqual(t, cx.UsedTokens, 20)
		require.Contains(t, cx.Items[0].Content, "PostgreSQL 17")

		// Experience: a task outcome, incubated at once; the lesson waits for review.
		inc := call[mcp.IncubateExperienceOutput](t, session, "incubate_experience", map[string]any{"scope_id": "agent"})
		require.Equal(t, "processed", inc.Status, "%+v", inc)
		require.Equal(t, int64(2), inc.ProcessedSourceCount)
		require.Zero(t, inc.CandidateCount, "the two notes propose no lesson")
		call[mcp.CaptureSourceOutput](t, session, "capture_source", map[string]any{"scope_id": "agent",
			"content": "Retrying the flaky test twice hid a real race. Always run with -race.", "metadata": map[string]any{"kind": "task-outcome"}})
		inc = call[mcp.IncubateExperienceOutput](t, session, "incubate_experience", map[string]any{"scope_id": "agent"})
		require.Equal(t, "processed", inc.Status, "%+v", inc)
		require.Equal(t, 1, inc.CandidateCount)
		require.Equal(t, int64(3), inc.CurrentCursor)
		require.NotNil(t, inc.OperationID)
		op = call[mcp.OperationOutput](t, session, "get_operation", map[string]any{"operation_id": *inc.OperationID})
		require.Equal(t, "experience_incubation", op.Kind)
		inc = call[mcp.IncubateExperienceOutput](t, session, "incubate_experience", map[string]any{"scope_id": "agent"})
		require.Equal(t, mcp.IncubateExperienceOutput{Status: "idle", CurrentCursor: 3, HighWatermark: 3}, inc)

		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "get_operation",
			Arguments: map[string]any{"operation_id": "00000000-0000-0000-0000-000000000000"}})
		require.NoError(t, err)
		require.True(t, res.IsError)
		require.Contains(t, res.Content[0].(*sdk.TextContent).Text, "operation_not_found")
	})
}
