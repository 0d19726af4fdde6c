package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/mcp"
)

// leaks are fragments of library text (JSON decoders, reflection, the schema validator, Go type names) that must
// never reach an MCP client.
var leaks = []string{"json:", "unmarshal", "Go value", "Go struct", "reflect", "validating", "mcp.", "map[string]",
	"interface {}", "jsonrpc message", "handling '"}

func requireNoLeak(t *testing.T, what, text string) {
	t.Helper()
	for _, l := range leaks {
		require.NotContains(t, text, l, "%s: library text reached the client: %s", what, text)
	}
}

// mcpPost posts a raw body to an MCP endpoint with the headers a streamable HTTP client sends.
func mcpPost(t *testing.T, url, session, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// initSession opens a stateful session the way a client does (initialize, then notifications/initialized).
func initSession(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	status, raw := mcpPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, status, string(raw))
	return sid
}

// TestErrorsNeverEchoLibraryText (issue 34 item 10, issue 35 item 4): malformed bodies, malformed params, unknown
// tools and arguments that miss the input schema are answered with documented codes and fixed messages —
// transport refusals in the API's error shape, JSON-RPC errors with their code and a fixed message, argument
// mistakes as the tool error "invalid_request: field: message" — never with decoder, reflection or schema
// validator text; and a request other than initialize without a session is 400 invalid_request in single_node.
func TestErrorsNeverEchoLibraryText(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	stateful := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), false))
	t.Cleanup(stateful.Close)
	stateless := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), true))
	t.Cleanup(stateless.Close)

	// Without a session, only initialize is accepted by a stateful server.
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_memory","arguments":{"scope_id":"a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`} {
		status, raw := mcpPost(t, stateful.URL, "", body)
		require.Equal(t, http.StatusBadRequest, status, string(raw))
		require.JSONEq(t, `{"error":{"code":"invalid_request","message":"this request needs an Mcp-Session-Id header; send initialize first","details":null}}`, string(raw))
	}

	sid := initSession(t, stateful.URL)
	type shape struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// Transport refusals, on both kinds of server.
	for _, tc := range []struct{ body, message string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, "the body is not a valid JSON-RPC 2.0 message"},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, "the body is not a valid JSON-RPC 2.0 message"},
		{`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "the body is not a valid JSON-RPC 2.0 message"},
		{`{"id":2,"method":"tools/list"}`, "the body is not a valid JSON-RPC 2.0 message"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`, "the body is not a valid JSON-RPC 2.0 request"},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such"}`, "unknown JSON-RPC method"},
	} {
		for name, url := range map[string]string{"stateful": stateful.URL, "stateless": stateless.URL} {
			status, raw := mcpPost(t, url, map[string]string{"stateful": sid}[name], tc.body)
			require.Equal(t, http.StatusBadRequest, status, "%s %s: %s", name, tc.body, raw)
			requireNoLeak(t, tc.body, string(raw))
			var env shape
			require.NoError(t, json.Unmarshal(raw, &env), string(raw))
			require.Equal(t, "invalid_request", env.Error.Code, string(raw))
			require.Equal(t, tc.message, env.Error.Message, "%s %s", name, tc.body)
		}
	}
	// JSON-RPC errors keep their code, with a fixed message.
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, `{"code":-32602,"message":"unknown tool"}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}`, `{"code":-32602,"message":"invalid params"}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"x"}`, `{"code":-32602,"message":"invalid params"}`},
	} {
		for name, url := range map[string]string{"stateful": stateful.URL, "stateless": stateless.URL} {
			status, raw := mcpPost(t, url, map[string]string{"stateful": sid}[name], tc.body)
			require.Equal(t, http.StatusOK, status, string(raw))
			requireNoLeak(t, tc.body, string(raw))
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      int             `json:"id"`
				Error   json.RawMessage `json:"error"`
			}
			require.NoError(t, json.Unmarshal(raw, &msg), string(raw))
			require.Equal(t, "2.0", msg.JSONRPC)
			require.Equal(t, 2, msg.ID)
			require.JSONEq(t, tc.want, string(msg.Error), "%s %s", name, tc.body)
		}
	}
	// Arguments that miss the input schema: the documented tool error, for every kind of mistake.
	for _, tc := range []struct{ tool, args, want string }{
		{"get_memory", `"x"`, "invalid_request: arguments: must be a JSON object"},
		{"get_memory", `[1]`, "invalid_request: arguments: must be a JSON object"},
		{"get_memory", `{}`, "invalid_request: scope_id: is required"},
		{"get_memory", `null`, "invalid_request: scope_id: is required"},
		{"get_memory", `{"scope_id":5}`, "invalid_request: scope_id: must be a string"},
		{"get_memory", `{"scope_id":"a","revision":0}`, "invalid_request: revision: must be >= 1"},
		{"get_memory", `{"scope_id":"a","revision":1.5}`, "invalid_request: revision: must be an integer"},
		{"get_context", `{"scope_id":"a","max_tokens":"10"}`, "invalid_request: max_tokens: must be an integer"},
		{"get_context", `{"scope_id":"a","Scope_ID":"b"}`, "invalid_request: Scope_ID: is not an argument of this tool"},
		{"search_memory", `{"scope_id":"a","q":"x","mode":"bad"}`, "invalid_request: mode: must be one of fts, semantic, hybrid"},
		{"flush_memory", `{"scope_id":"a","wait_seconds":"1"}`, "invalid_request: wait_seconds: must be a number"},
		{"list_sources", `{"scope_id":"a","after":true}`, "invalid_request: after: must be an integer"},
		{"memory_history", `{"scope_id":"a","limit":{}}`, "invalid_request: limit: must be an integer"},
		{"get_operation", `{"operation_id":null}`, "invalid_request: operation_id: must be a string"},
	} {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + `}}`
		for name, url := range map[string]string{"stateful": stateful.URL, "stateless": stateless.URL} {
			status, raw := mcpPost(t, url, map[string]string{"stateful": sid}[name], body)
			require.Equal(t, http.StatusOK, status, string(raw))
			requireNoLeak(t, body, string(raw))
			var msg struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(raw, &msg), string(raw))
			require.True(t, msg.Result.IsError, string(raw))
			require.Len(t, msg.Result.Content, 1)
			require.Equal(t, tc.want, msg.Result.Content[0].Text, "%s %s %s", name, tc.tool, tc.args)
		}
	}
	// An optional argument given as null is absent (its default).
	status, raw := mcpPost(t, stateless.URL, "", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_context","arguments":{"scope_id":"a","max_tokens":null}}}`)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, string(raw), `"isError":true`, string(raw))
	require.Contains(t, string(raw), `"max_tokens":2000`)
}

// TestInputSchemasUsePlainTypes (issue 35 item 3): every argument of every tool has one plain JSON type, so
// clients that convert typed arguments (the MCP Inspector) send numbers, not strings; the five optional numbers
// that were ["null","integer"|"number"] are plain.
func TestInputSchemasUsePlainTypes(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	srv := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), true))
	t.Cleanup(srv.Close)
	status, raw := mcpPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, status, string(raw))
	var list struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties map[string]struct {
						Type any `json:"type"`
					} `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &list))
	require.Len(t, list.Result.Tools, 12)
	types := map[string]any{}
	for _, tool := range list.Result.Tools {
		for name, p := range tool.InputSchema.Properties {
			require.IsType(t, "", p.Type, "%s.%s has type %v", tool.Name, name, p.Type)
			types[tool.Name+"."+name] = p.Type
		}
	}
	for arg, want := range map[string]string{"get_context.max_tokens": "integer", "flush_memory.wait_seconds": "number",
		"incubate_experience.wait_seconds": "number", "list_sources.limit": "integer", "memory_history.limit": "integer",
		"list_skills.limit": "integer", "get_skill.revision": "integer"} {
		require.Equal(t, want, types[arg], arg)
	}
}

// TestEveryArgumentMistakeIsDocumented sends every tool each argument with values of every wrong JSON type (and
// absent required arguments): each answer is a tool error in the documented "code: field: message" form, never
// library text (issue 34 item 10).
func TestEveryArgumentMistakeIsDocumented(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	srv := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.Nop()), true))
	t.Cleanup(srv.Close)
	status, raw := mcpPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, status)
	var list struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties map[string]struct {
						Type string `json:"type"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &list))
	valid := map[string]any{"string": "x", "integer": 1, "number": 1.5, "object": map[string]any{}, "boolean": true}
	wrong := []any{"x", 7, 2.5, -1, 0, 1e300, true, []any{1}, map[string]any{"a": 1}, nil}
	form := regexp.MustCompile(`^(invalid_request|runtime_not_ready|operation_not_found|revision_not_found|skill_not_found): ([a-z_]+: )?[^\n]+$`)
	calls := 0
	for _, tool := range list.Result.Tools {
		base := map[string]any{}
		for _, name := range tool.InputSchema.Required {
			base[name] = valid[tool.InputSchema.Properties[name].Type]
		}
		for name, p := range tool.InputSchema.Properties {
			for _, v := range wrong {
				args := map[string]any{}
				for k, bv := range base {
					args[k] = bv
				}
				args[name] = v
				body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
					"params": map[string]any{"name": tool.Name, "arguments": args}})
				require.NoError(t, err)
				status, raw := mcpPost(t, srv.URL, "", string(body))
				require.Equal(t, http.StatusOK, status, string(raw))
				requireNoLeak(t, tool.Name+"."+name, string(raw))
				var msg struct {
					Result struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
						IsError bool `json:"isError"`
					} `json:"result"`
				}
				require.NoError(t, json.Unmarshal(raw, &msg), string(raw))
				calls++
				if !msg.Result.IsError {
					continue // a value of the right type within range
				}
				require.Regexp(t, form, msg.Result.Content[0].Text, "%s.%s=%v (%s)", tool.Name, name, v, p.Type)
			}
		}
	}
	require.Greater(t, calls, 100)
}
