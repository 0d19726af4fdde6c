package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/api"
	"github.com/powercontext/powercontext/api/types"
	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/portability"
)

func withPortability(d *Deps) {
	d.Portability = &portability.Service{Store: d.Store, Ledger: d.Ledger, MaxAttempts: 3}
}

var ndjson = hdr{"Content-Type": "application/x-ndjson"}

func merge(hs ...hdr) hdr {
	out := hdr{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}

// TestExportImportOverHTTP: a scope exported as application/x-ndjson imports under another scope id with 201 and
// reads back the same Sources; each request is recorded as an operation; a second import into the now non-empty
// scope is 409 scope_not_empty, a stream without its trailer 422 import_truncated naming the line.
func TestExportImportOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPortability)
	e.captureDirect("team-a/x", "Releases ship on Tuesdays.")
	e.captureDirect("team-a/x", "The deploy script lives in ops/deploy.sh.")

	out := e.get("/v1/scopes/" + url.PathEscape("team-a/x") + "/export")
	require.Equal(t, http.StatusOK, out.Code, "body: %s", out.Body)
	require.Equal(t, "application/x-ndjson", out.Header.Get("Content-Type"))
	lines := strings.Split(strings.TrimSuffix(string(out.Body), "\n"), "\n")
	require.Len(t, lines, 5, "header, journal head, two Sources, trailer")
	for _, l := range lines {
		_, err := portability.Validate([]byte(l))
		require.NoError(t, err)
	}

	in := e.do(http.MethodPost, "/v1/scopes/team-a%2Fcopy/import", bytes.NewReader(out.Body), ndjson)
	require.Equal(t, http.StatusCreated, in.Code, "body: %s", in.Body)
	var res types.ImportScopeResponse
	require.NoError(t, json.Unmarshal(in.Body, &res))
	require.Equal(t, "team-a/copy", res.ScopeID)
	require.Equal(t, "team-a/x", res.SourceScopeID)
	require.EqualValues(t, 2, res.Counts.Sources)
	require.NotEmpty(t, res.OperationID)

	src := e.get("/v1/sources?scope_id=team-a%2Fx").json(t)["items"].([]any)
	dst := e.get("/v1/sources?scope_id=team-a%2Fcopy").json(t)["items"].([]any)
	require.Len(t, dst, len(src))
	for i := range src {
		a, b := src[i].(map[string]any), dst[i].(map[string]any)
		delete(a, "scope_id")
		delete(b, "scope_id")
		require.Equal(t, a, b)
	}

	ops := e.get("/v1/operations?kind=scope_import").json(t)["items"].([]any)
	require.Len(t, ops, 1)
	require.Equal(t, res.OperationID, ops[0].(map[string]any)["operation_id"])
	require.Len(t, e.get("/v1/operations?kind=scope_export").json(t)["items"].([]any), 1)

	e.do(http.MethodPost, "/v1/scopes/team-a%2Fcopy/import", bytes.NewReader(out.Body), ndjson).
		requireError(t, http.StatusConflict, CodeScopeNotEmpty)
	cut := strings.Join(lines[:len(lines)-1], "\n") + "\n"
	details := e.do(http.MethodPost, "/v1/scopes/team-a%2Fother/import", strings.NewReader(cut), ndjson).
		requireError(t, http.StatusUnprocessableEntity, CodeImportTruncated)
	require.EqualValues(t, 5, details["line"])
	require.Empty(t, e.get("/v1/sources?scope_id=team-a%2Fother").json(t)["items"], "nothing was written")
	e.do(http.MethodPost, "/v1/scopes/team-a%2Fother/import", strings.NewReader(cut), hdr{"Content-Type": "text/plain"}).
		requireError(t, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
	e.get("/v1/scopes/team-a%2Fx/export?embeddings=maybe").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
}

// TestImportTheDocumentedExample: the request example of POST /v1/scopes/{scope_id}/import is a valid stream.
func TestImportTheDocumentedExample(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPortability)
	doc := string(api.YAML())
	start := strings.Index(doc, `{"type":"header","format":"powercontext.scope-export"`)
	require.Positive(t, start)
	var b strings.Builder
	for _, l := range strings.Split(doc[start:], "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") {
			break
		}
		b.WriteString(l + "\n")
	}
	e.do(http.MethodPost, "/v1/scopes/example/import", strings.NewReader(b.String()), ndjson)
	in := e.do(http.MethodPost, "/v1/scopes/example2/import", strings.NewReader(b.String()), ndjson)
	require.Equal(t, http.StatusCreated, in.Code, "body: %s", in.Body)
}

// TestPortabilityScopedAdmin: an admin token with scopes moves only its scopes, as every request naming a scope
// (the dashboard's export download follows the same rule).
func TestPortabilityScopedAdmin(t *testing.T) {
	t.Parallel()
	const scopedAdminTok = "scoped-admin-token-0123456789abcdef0123456789"
	specs, err := auth.ParseTokens([]byte(`[{"name":"ops-a","role":"admin","token":"` + scopedAdminTok + `","scopes":["team-a/"]}]`))
	require.NoError(t, err)
	set, err := auth.NewSet(specs)
	require.NoError(t, err)
	e := newEnv(t, withPortability, func(d *Deps) { d.Principals = set })
	e.captureDirect("team-a/x", "Releases ship on Tuesdays.")
	e.captureDirect("team-b", "Secrets live in the vault.")
	ok := e.do(http.MethodGet, "/v1/scopes/team-a%2Fx/export", nil, authz(scopedAdminTok))
	require.Equal(t, http.StatusOK, ok.Code, "body: %s", ok.Body)
	e.do(http.MethodGet, "/v1/scopes/team-b/export", nil, authz(scopedAdminTok)).requireError(t, http.StatusForbidden, CodeForbidden)
	e.do(http.MethodPost, "/v1/scopes/team-b2/import", bytes.NewReader(ok.Body), merge(ndjson, authz(scopedAdminTok))).
		requireError(t, http.StatusForbidden, CodeForbidden)
	in := e.do(http.MethodPost, "/v1/scopes/team-a%2Fy/import", bytes.NewReader(ok.Body), merge(ndjson, authz(scopedAdminTok)))
	require.Equal(t, http.StatusCreated, in.Code, "body: %s", in.Body)
}

// TestPortabilityNeedsAdminOrTheScope: an admin may move any scope, an agent token only a scope its scopes include
// (an unrestricted agent token may not); an import body beyond the import limit is 413.
func TestPortabilityNeedsAdminOrTheScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPortability, func(d *Deps) {
		d.Principals = principals(t)
		d.ImportBodyLimit = 4096
	})
	e.captureDirect("team-a/x", "Releases ship on Tuesdays.")
	e.captureDirect("team-b", "Secrets live in the vault.")
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/scopes/team-b/export", nil, authz(adminTok)).Code)
	ok := e.do(http.MethodGet, "/v1/scopes/team-a%2Fx/export", nil, authz(agentTok))
	require.Equal(t, http.StatusOK, ok.Code)
	e.do(http.MethodGet, "/v1/scopes/team-b/export", nil, authz(agentTok)).requireError(t, http.StatusForbidden, CodeForbidden)
	e.do(http.MethodGet, "/v1/scopes/team-b/export", nil, authz(otherTok)).requireError(t, http.StatusForbidden, CodeForbidden)
	e.do(http.MethodPost, "/v1/scopes/team-b2/import", bytes.NewReader(ok.Body), merge(ndjson, authz(agentTok))).
		requireError(t, http.StatusForbidden, CodeForbidden)
	in := e.do(http.MethodPost, "/v1/scopes/team-a%2Fy/import", bytes.NewReader(ok.Body), merge(ndjson, authz(agentTok)))
	require.Equal(t, http.StatusCreated, in.Code, "body: %s", in.Body)
	big := bytes.Repeat([]byte("x"), 5000)
	e.do(http.MethodPost, "/v1/scopes/team-a%2Fz/import", bytes.NewReader(big), merge(ndjson, authz(adminTok))).
		requireError(t, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
}

// TestImportOverTheCapImportsNothing: an import body beyond Deps.ImportBodyLimit (POWERCONTEXT_HTTP_MAX_IMPORT_BYTES)
// is 413 payload_too_large with the documented error body, whether it declares its length or is streamed, and
// imports nothing: the target scope is still empty afterwards and takes an import that fits.
func TestImportOverTheCapImportsNothing(t *testing.T) {
	t.Parallel()
	const limit = 4096
	e := newEnv(t, withPortability, func(d *Deps) { d.ImportBodyLimit = limit })
	for i := range 6 {
		e.captureDirect("big", strings.Repeat(string(rune('a'+i)), 1000))
	}
	e.captureDirect("small", "Releases ship on Tuesdays.")
	big := e.get("/v1/scopes/big/export")
	require.Equal(t, http.StatusOK, big.Code, "body: %s", big.Body)
	require.Greater(t, len(big.Body), limit)
	small := e.get("/v1/scopes/small/export")
	require.Equal(t, http.StatusOK, small.Code, "body: %s", small.Body)
	require.Less(t, len(small.Body), limit)

	requireTooLarge := func(r resp) {
		t.Helper()
		r.requireError(t, http.StatusRequestEntityTooLarge, CodePayloadTooLarge)
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		require.Equal(t, CodePayloadTooLarge, body.Error.Code)
		require.Equal(t, "request body is too large", body.Error.Message)
	}
	// A declared Content-Length beyond the cap.
	requireTooLarge(e.do(http.MethodPost, "/v1/scopes/target/import", bytes.NewReader(big.Body), ndjson))
	// A streamed body without a length, cut off at the cap.
	req := newRequest(http.MethodPost, "/v1/scopes/target/import", struct{ io.Reader }{bytes.NewReader(big.Body)}, ndjson)
	req.ContentLength = -1
	r := serveRequest(e.e, req)
	checkContract(t, req, big.Body, r)
	requireTooLarge(r)

	// Nothing was imported: the target exports no Sources and still takes an import.
	out := e.get("/v1/scopes/target/export")
	require.Equal(t, http.StatusOK, out.Code, "body: %s", out.Body)
	var header struct {
		Counts struct {
			Sources int `json:"sources"`
		} `json:"counts"`
	}
	require.NoError(t, json.Unmarshal(bytes.SplitN(out.Body, []byte("\n"), 2)[0], &header))
	require.Zero(t, header.Counts.Sources)
	in := e.do(http.MethodPost, "/v1/scopes/target/import", bytes.NewReader(small.Body), ndjson)
	require.Equal(t, http.StatusCreated, in.Code, "the target is still empty; body: %s", in.Body)
}

// TestExportRefusedWhileRedactingOrErasing: an export of a scope whose forgotten Source's redaction has not run is
// 409 redaction_pending (its Memory may still hold the forgotten text); once the workers ran it the export goes
// through; a scope being erased is 409 scope_erasing.
func TestExportRefusedWhileRedactingOrErasing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPortability)
	e.captureDirect("team-a/x", "The root password is hunter2.")
	e.captureDirect("team-a/x", "Releases ship on Tuesdays.")
	e.enqueueMemory("team-a/x")
	e.step(nil)
	list, err := e.store.SourceListAfter(context.Background(), db.SourceListAfterParams{ScopeID: "team-a/x", Limit: 10})
	require.NoError(t, err)
	res, err := e.deps.Forgetter.Forget(context.Background(), "team-a/x", list[0].SourceID)
	require.NoError(t, err)
	require.NotNil(t, res.Redaction, "the Memory cites the forgotten Source: a redaction is queued")
	path := "/v1/scopes/" + url.PathEscape("team-a/x") + "/export"
	e.get(path).requireError(t, http.StatusConflict, CodeRedactionPending)
	e.step(nil)
	out := e.get(path)
	require.Equal(t, http.StatusOK, out.Code, "body: %s", out.Body)
	require.NotContains(t, string(out.Body), "hunter2")

	_, err = e.deps.Eraser.Erase(context.Background(), "team-a/x", "ops")
	require.NoError(t, err)
	e.get(path).requireError(t, http.StatusConflict, CodeScopeErasing)
}

// TestImportsAtOnceAreBounded: with Deps.ImportsAtOnce imports running (here one, still reading its body), another
// import is 429 too_many_imports with Retry-After and the error body, before its body is read, and imports
// nothing; once the running import ends, the next one goes through.
func TestImportsAtOnceAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withPortability, func(d *Deps) { d.ImportsAtOnce = 1 })
	e.captureDirect("origin", "Releases ship on Tuesdays.")
	stream := e.get("/v1/scopes/origin/export")
	require.Equal(t, http.StatusOK, stream.Code, "body: %s", stream.Body)

	pr, pw := io.Pipe()
	first := make(chan resp, 1)
	// Served directly: the test helper would read the whole body before serving it.
	go func() { first <- serveRequest(e.e, newRequest(http.MethodPost, "/v1/scopes/first/import", pr, ndjson)) }()
	_, err := pw.Write(stream.Body[:10]) // returns once the import reads its body: it holds the slot
	require.NoError(t, err)

	// The second body is never read: a reader that fails the test if it is.
	read := make(chan struct{}, 1)
	req := newRequest(http.MethodPost, "/v1/scopes/second/import", readWatch{bytes.NewReader(stream.Body), read}, ndjson)
	r := serveRequest(e.e, req)
	checkContract(t, req, stream.Body, r)
	r.requireError(t, http.StatusTooManyRequests, CodeTooManyImports)
	require.Equal(t, "10", r.Header.Get("Retry-After"))
	require.Empty(t, read, "the refused import's body was not read")

	_, err = pw.Write(stream.Body[10:])
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	in := <-first
	require.Equal(t, http.StatusCreated, in.Code, "body: %s", in.Body)
	second := e.do(http.MethodPost, "/v1/scopes/second/import", bytes.NewReader(stream.Body), ndjson)
	require.Equal(t, http.StatusCreated, second.Code, "the slot was given back; body: %s", second.Body)
}

// readWatch signals on read when its reader is first read.
type readWatch struct {
	io.Reader
	read chan struct{}
}

func (r readWatch) Read(p []byte) (int, error) {
	select {
	case r.read <- struct{}{}:
	default:
	}
	return r.Reader.Read(p)
}
