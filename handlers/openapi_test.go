package handlers

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/api"
	"github.com/powercontext/powercontext/api/apitest"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/ui"
)

func loadSpec(t testing.TB) *apitest.Spec {
	t.Helper()
	s, err := apitest.Load()
	require.NoError(t, err)
	return s
}

// checkContract validates one exchange against api/openapi.yaml (see apitest.Spec.Check).
func checkContract(t testing.TB, req *http.Request, reqBody []byte, r resp) {
	t.Helper()
	if r.Code == statusClientClosed {
		return // nobody reads the answer of a request whose client went away
	}
	if msg := loadSpec(t).Check(apitest.Exchange{Request: req, RequestBody: reqBody, Status: r.Code,
		Header: r.Header, Body: r.Body}); msg != "" {
		t.Errorf("%s %s → %d departs from api/openapi.yaml: %s\nbody: %s", req.Method, req.URL.RequestURI(), r.Code,
			msg, truncateForLog(r.Body))
	}
}

func truncateForLog(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// fullServer registers every route any process serves: API role with MCP, dashboard and metrics.
func fullServer(t testing.TB) *echo.Echo {
	e := newEnv(t)
	d := e.deps
	d.Metrics = promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{})
	d.MCP = mcp.NewHandler(mcp.Deps{Journal: d.Journal, Memory: d.Memory, Experience: d.Experience,
		Logger: zerolog.Nop()}, true)
	d.UI = ui.New(ui.Deps{Ledger: d.Ledger, Store: d.Store, Logger: zerolog.Nop()})
	return New(d)
}

var echoParamRE = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// openAPIPath converts an Echo route path (/v1/operations/:operation_id) to an OpenAPI template.
func openAPIPath(p string) string { return echoParamRE.ReplaceAllString(p, "{$1}") }

// routeOfPath returns the Echo route that serves method on a concrete path ("" when none does).
func routeOfPath(e *echo.Echo, method, path string) string {
	c := e.NewContext(httptest.NewRequest(method, path, nil), httptest.NewRecorder())
	e.Router().Find(method, path, c)
	if c.Path() == "" {
		return ""
	}
	// Echo answers a method a path does not serve with its 405 handler under the same route path.
	for _, r := range e.Routes() {
		if r.Method == method && r.Path == c.Path() {
			return r.Path
		}
	}
	return ""
}

// Every registered route is documented and every documented operation is routed by the server.
func TestOpenAPIMatchesRegisteredRoutes(t *testing.T) {
	spec := loadSpec(t)
	e := fullServer(t)

	methodsOf := map[string]map[string]bool{}
	for _, r := range e.Routes() {
		if methodsOf[r.Path] == nil {
			methodsOf[r.Path] = map[string]bool{}
		}
		methodsOf[r.Path][r.Method] = true
	}
	// Every documented operation, with its parameters filled in, reaches a registered route.
	servedBy := map[string]bool{} // "METHOD route" pairs the document reaches
	for path, methods := range spec.Operations {
		concrete := strings.NewReplacer("{", "", "}", "").Replace(path)
		for _, m := range methods {
			route := routeOfPath(e, m, concrete)
			if route == "" {
				t.Errorf("documented %s %s is not served by any registered route", m, path)
				continue
			}
			servedBy[m+" "+route] = true
			servedBy["path "+route] = true
		}
	}
	// Every registered route is documented. A route registered for every method (Echo's Any: /mcp, /ui/*) is one
	// handler behind which the document names the methods and pages it serves; it must be reached at least once.
	var missing []string
	for path, methods := range methodsOf {
		if len(methods) >= 9 { // Any
			if !servedBy["path "+path] {
				missing = append(missing, "ANY "+path)
			}
			continue
		}
		for m := range methods {
			if !servedBy[m+" "+path] {
				missing = append(missing, m+" "+openAPIPath(path))
			}
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "registered routes missing from api/openapi.yaml")
}

// The ErrorCode enum lists exactly the codes the server can send: the Code* constants of this package and the
// codes the MCP transport maps its refusals to (mcp/transport.go, transportCodes and limitCodes).
func TestOpenAPIErrorCodesAreTheCodeConstants(t *testing.T) {
	set := map[string]bool{}
	for _, c := range stringLiterals(t, ".", func(n ast.Node) []ast.Expr {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return nil
		}
		var out []ast.Expr
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Code") && i < len(vs.Values) {
				out = append(out, vs.Values[i])
			}
		}
		return out
	}) {
		set[c] = true
	}
	transport := stringLiterals(t, "../mcp", func(n ast.Node) []ast.Expr {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || (vs.Names[0].Name != "transportCodes" && vs.Names[0].Name != "limitCodes") || len(vs.Values) != 1 {
			return nil
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return nil
		}
		var out []ast.Expr
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				out = append(out, kv.Value)
			}
		}
		return out
	})
	require.NotEmpty(t, transport, "mcp.transportCodes not found")
	for _, c := range transport {
		set[c] = true
	}
	var codes []string
	for c := range set {
		codes = append(codes, c)
	}
	got := loadSpec(t).ErrorCodes()
	sort.Strings(codes)
	sort.Strings(got)
	require.Equal(t, codes, got, "components.schemas.ErrorCode.enum must list every code the server sends")
}

// stringLiterals returns the string literals pick selects from the non-test files of dir.
func stringLiterals(t *testing.T, dir string, pick func(ast.Node) []ast.Expr) []string {
	t.Helper()
	fset := token.NewFileSet()
	// The package has no build-tagged files, so ParseDir's disregard of build tags does not matter here.
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { //nolint:staticcheck // see above
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	var out []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				for _, e := range pick(n) {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out = append(out, v)
					}
				}
				return true
			})
		}
	}
	return out
}

func TestOpenAPIServedAsJSON(t *testing.T) {
	e := newEnv(t)
	r := e.get("/openapi.json")
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, echo.MIMEApplicationJSON, r.Header.Get("Content-Type"))
	want, err := api.JSON()
	require.NoError(t, err)
	require.Equal(t, want, r.Body)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &doc))
	require.Equal(t, "3.1.0", doc["openapi"])

	// Only the API roles serve it.
	w := newEnv(t, func(d *Deps) { d.Role = "worker" })
	require.Equal(t, http.StatusNotFound, w.get("/openapi.json").Code)
}

// The contract check itself can fail: a response that departs from the document is reported.
func TestContractCheckDetectsDrift(t *testing.T) {
	spec := loadSpec(t)
	req := httptest.NewRequest(http.MethodGet, "/v1/memory?scope_id=s", nil)
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	ok := `{"scope_id":"s","revision":null,"created_at":null,"evicted":null,"entries":[]}`
	require.Empty(t, spec.Check(apitest.Exchange{Request: req, Status: 200, Header: h, Body: []byte(ok)}))
	for name, x := range map[string]apitest.Exchange{
		"undocumented field": {Request: req, Status: 200, Header: h,
			Body: []byte(`{"scope_id":"s","revision":null,"created_at":null,"evicted":null,"entries":[],"extra":1}`)},
		"missing field":       {Request: req, Status: 200, Header: h, Body: []byte(`{"scope_id":"s","entries":[]}`)},
		"wrong time format":   {Request: req, Status: 200, Header: h, Body: []byte(`{"scope_id":"s","revision":1,"created_at":"2026-01-01T00:00:00Z","evicted":null,"entries":[]}`)},
		"undocumented status": {Request: req, Status: 409, Header: h, Body: []byte(`{"error":{"code":"operation_conflict","message":"m","details":null}}`)},
		"unknown error code":  {Request: req, Status: 422, Header: h, Body: []byte(`{"error":{"code":"nope","message":"m","details":null}}`)},
		"no request id":       {Request: req, Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(ok)},
		"undocumented route":  {Request: httptest.NewRequest(http.MethodGet, "/v1/nope", nil), Status: 200, Header: h, Body: []byte(`{}`)},
	} {
		require.NotEmpty(t, spec.Check(x), name)
	}
	// A 202 flush answer without Location is refused.
	flush := httptest.NewRequest(http.MethodPost, "/v1/memory/flush", bytes.NewReader(nil))
	require.NotEmpty(t, spec.Check(apitest.Exchange{Request: flush, RequestBody: []byte(`{"scope_id":"s"}`), Status: 202,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}, "Retry-After": {"2"}},
		Body:   []byte(`{"operation_id":"o","status":"queued","status_url":"/v1/operations/o"}`)}))
}

// The routes outside /v1 answer as documented: MCP's transport, the dashboard pages, metrics and health.
func TestOpenAPIMCPDashboardAndRuntimeExchanges(t *testing.T) {
	e := fullServer(t)
	mcpHdr := hdr{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	rpc := func(body string) resp {
		return exchange(t, e, http.MethodPost, "/mcp", strings.NewReader(body), mcpHdr)
	}

	r := rpc(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusOK, r.Code, "%s", r.Body)
	require.Equal(t, http.StatusAccepted, rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).Code)
	r = rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, r.Code, "%s", r.Body)
	require.Contains(t, string(r.Body), "capture_source")
	r = rpc(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"capture_source",` +
		`"arguments":{"scope_id":"s","content":"hello"}}}`)
	require.Equal(t, http.StatusOK, r.Code, "%s", r.Body)
	// Transport refusals: no Accept, and GET/DELETE on the stateless endpoint.
	require.GreaterOrEqual(t, exchange(t, e, http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`),
		hdr{"Content-Type": "application/json"}).Code, 400)
	require.Equal(t, http.StatusMethodNotAllowed, exchange(t, e, http.MethodGet, "/mcp", nil, hdr{"Accept": "text/event-stream"}).Code)
	require.Equal(t, http.StatusMethodNotAllowed, exchange(t, e, http.MethodDelete, "/mcp", nil, nil).Code)

	for _, p := range []string{"/ui", "/ui/operations", "/ui/blocked", "/ui/experience", "/ui/login", "/ui/static/app.css", "/ui/static/app.js"} {
		r := exchange(t, e, http.MethodGet, p, nil, nil)
		require.Equal(t, http.StatusOK, r.Code, p)
	}
	require.Equal(t, http.StatusNotFound, exchange(t, e, http.MethodGet, "/ui/operations/no-such-id", nil, nil).Code)
	require.Equal(t, http.StatusNotFound, exchange(t, e, http.MethodGet, "/ui/static/nope.css", nil, nil).Code)
	require.Equal(t, http.StatusOK, exchange(t, e, http.MethodGet, "/ui/login?token=t", nil, nil).Code, "never a token in the URL")
	require.Equal(t, http.StatusSeeOther, exchange(t, e, http.MethodPost, "/ui/login", strings.NewReader("token=t"),
		hdr{"Content-Type": "application/x-www-form-urlencoded"}).Code)
	require.Equal(t, http.StatusSeeOther, exchange(t, e, http.MethodPost, "/ui/logout", nil, nil).Code)

	require.Equal(t, http.StatusOK, exchange(t, e, http.MethodGet, "/metrics", nil, nil).Code)
	require.Equal(t, http.StatusOK, exchange(t, e, http.MethodGet, "/metrics", nil,
		hdr{"Accept": "application/openmetrics-text; version=1.0.0"}).Code)
	require.Equal(t, http.StatusOK, exchange(t, e, http.MethodGet, "/health/live", nil, nil).Code)
	require.Equal(t, http.StatusServiceUnavailable, exchange(t, e, http.MethodGet, "/health/ready", nil, nil).Code,
		"no live member in this test: not_ready")
	require.Equal(t, http.StatusOK, exchange(t, e, http.MethodGet, "/v1/runtime/members", nil, nil).Code)
	// A method a documented path does not serve: 405 with the error body (checked as undocumented).
	require.Equal(t, http.StatusMethodNotAllowed, exchange(t, e, http.MethodDelete, "/v1/sources", nil, nil).Code)
}
