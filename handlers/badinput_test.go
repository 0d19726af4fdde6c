package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestBadInputNeverFails5xx throws malformed requests at every route: each must answer a 4xx with the error
// envelope, never a 5xx.
func TestBadInputNeverFails5xx(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.FlushMaxWait = time.Nanosecond })
	e.capture("s", "x is y.", nil)
	op := e.enqueueMemory("s")
	missing := uuid.NewString()
	huge := strings.Repeat("x", 2<<20)
	big := strings.Repeat("x", 64*1024+1)
	type tc struct {
		method, path, ct, body string
	}
	cases := []tc{}
	posts := []string{"/v1/sources", "/v1/memory/flush", "/v1/operations/" + op.WorkID + "/cancel", "/v1/operations/" + op.WorkID + "/retry",
		"/v1/operations/" + missing + "/cancel", "/v1/experience/candidates/" + missing + "/approve", "/v1/experience/candidates/x/reject"}
	bodies := []string{
		"", "{", "}", "[]", "null", "true", "0", `"str"`, `{"scope_id":null}`, `{"scope_id":{}}`, `{"scope_id":[]}`,
		`{"scope_id":true}`, `{"scope_id":1e999}`, `{"content":123}`, `{"metadata":"x"}`, `{"metadata":[]}`,
		`{"scope_id":"s","content":"` + big + `"}`, `{"scope_id":"` + strings.Repeat("s", 300) + `"}`,
		`{"scope_id":"s","content":"x","metadata":{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`,
		`{"expected_version":"1"}`, `{"expected_version":-9223372036854775808}`, `{"expected_version":9223372036854775808}`,
		`{"expected_version":1.0}`, `{"expected_version":[1]}`, `{"expected_version":99}`,
		"{\"scope_id\":\"\xc3\x28\",\"content\":\"x\"}", "\x00\x01\x02", `{"scope_id":"s","content":"\ud800"}`,
		`{"scope_id":"s","content":"x","source_id":"\u0000"}`, `{"scope_id":"s"}{"scope_id":"t"}`,
		`{"scope_id":"s","scope_id":7}`, huge,
	}
	for _, p := range posts {
		for _, b := range bodies {
			cases = append(cases, tc{http.MethodPost, p, "application/json", b})
		}
		cases = append(cases, tc{http.MethodPost, p, "text/plain", `{"scope_id":"s"}`}, tc{http.MethodPost, p, "", `{}`},
			tc{http.MethodPost, p, "multipart/form-data; boundary=x", "--x--"}, tc{http.MethodPost, p, "application/json; charset=utf-16", `{}`})
	}
	gets := []string{
		"/v1/sources?scope_id=s&after=abc", "/v1/sources?scope_id=s&limit=99999999999999999999", "/v1/sources?scope_id=" + strings.Repeat("s", 300),
		"/v1/sources?scope_id=%00", "/v1/memory?scope_id=%C3%28", "/v1/memory/search?scope_id=s&q=" + strings.Repeat("q", 300),
		"/v1/memory/search?scope_id=s&q=%25_%5C", "/v1/memory/search?scope_id=s&q=%00",
		"/v1/experience/candidates?scope_id=s&status=%00", "/v1/operations/" + missing, "/v1/operations/" + strings.Repeat("a", 5000),
		"/v1/operations/%00", "/v1/operations?cursor=" + strings.Repeat("A", 5000), "/v1/operations?cursor=AAAA",
		"/v1/operations?cursor=%00", "/v1/operations?limit=-1", "/v1/operations?status=%00", "/v1/operations?kind=%FF",
		"/v1/operations?scope_id=s&scope_id=t", "/v1/operations?cursor==", "/v1/operations?cursor=MTo6",
	}
	for _, g := range gets {
		cases = append(cases, tc{http.MethodGet, g, "", ""})
	}
	for _, c := range cases {
		var body io.Reader
		h := hdr{}
		if c.body != "" || c.method == http.MethodPost {
			body = strings.NewReader(c.body)
		}
		if c.ct != "" {
			h["Content-Type"] = c.ct
		}
		r := e.do(c.method, c.path, body, h)
		name := c.method + " " + trunc(c.path) + " " + c.ct + " " + trunc(c.body)
		require.Less(t, r.Code, 500, "%s: %s", name, r.Body)
		if r.Code >= 400 {
			var env errorBody
			require.NoError(t, json.Unmarshal(r.Body, &env), name)
			require.NotEmpty(t, env.Error.Code, name)
		}
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// FuzzSourcesAndFlush decodes arbitrary bodies, content types and Prefer headers on POST /v1/sources and
// POST /v1/memory/flush, and an arbitrary raw query string on the GET routes that read one (the lists, search,
// operations): no input may produce a 5xx, and every 4xx carries the error envelope. `go test` runs the seed corpus;
// `go test -fuzz` explores.
func FuzzSourcesAndFlush(f *testing.F) {
	// A 1 ns max wait never holds a fuzz iteration: every flush answers at once.
	e := newEnv(f, func(d *Deps) { d.FlushMaxWait = time.Nanosecond })
	seeds := []struct {
		flush       bool
		contentType string
		prefer      string
		body        string
		query       string
	}{
		{false, "application/json", "", `{"scope_id":"s","content":"hello"}`, "scope_id=s&limit=10"},
		{false, "application/json", "", `{"scope_id":"s","source_id":"a","source_type":"note","content":"x","metadata":{"k":[1,2]}}`, "scope_id=s%zz"},
		{false, "application/json", "", `{"scope_id":"","content":""}`, "scope_id=s;limit=1"},
		{false, "application/json", "", `{"scope_id":"s","content":"\u0000"}`, "limit=-1&after=x"},
		{false, "application/json", "", `{"scope_id":1,"content":{}}`, "scope_id=s&scope_id=t"},
		{false, "text/plain", "", `hello`, "q=%E4%B8%AD%E6%96%87&scope_id=s"},
		{false, "application/json", "", "{\"scope_id\":\"\xff\"}", "cursor=%00"},
		{false, "application/json", "", `[`, "kind=memory_flush&status=nope"},
		{true, "application/json", "", `{"scope_id":"s"}`, ""},
		{true, "application/json", "respond-async", `{"scope_id":"s"}`, "limit=1e9"},
		{true, "application/json", "wait=1e309", `{"scope_id":"s"}`, "scope_id=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{true, "application/json", "wait=-0, respond-async;x=y", `{"scope_id":"t"}`, "%"},
		{true, "application/json; charset=utf-8", "wait=\"", `{"scope_id":null}`, "&&&="},
		{true, "", "", ``, "status=failed&limit=500"},
	}
	for _, s := range seeds {
		f.Add(s.flush, s.contentType, s.prefer, []byte(s.body), s.query)
	}
	getPaths := []string{"/v1/sources", "/v1/memory", "/v1/memory/search", "/v1/operations", "/v1/experience/candidates"}
	f.Fuzz(func(t *testing.T, flush bool, contentType, prefer string, body []byte, query string) {
		path := "/v1/sources"
		if flush {
			path = "/v1/memory/flush"
		}
		h := hdr{"Content-Type": contentType}
		if prefer != "" {
			h["Prefer"] = prefer
		}
		r := serve(e.e, http.MethodPost, path, bytes.NewReader(body), h)
		if r.Code >= 500 {
			t.Fatalf("%s answered %d: %s", path, r.Code, r.Body)
		}
		if r.Code >= 400 {
			var env errorBody
			if err := json.Unmarshal(r.Body, &env); err != nil || env.Error.Code == "" {
				t.Fatalf("%s answered %d without the error envelope: %s", path, r.Code, r.Body)
			}
		}

		// The raw query goes in as the server received it: set on the URL, not parsed by the test first.
		get := getPaths[len(query)%len(getPaths)]
		req := newRequest(http.MethodGet, get, nil, hdr{})
		req.URL.RawQuery = query
		r = serveRequest(e.e, req)
		if r.Code >= 500 {
			t.Fatalf("GET %s?%q answered %d: %s", get, query, r.Code, r.Body)
		}
		if r.Code >= 400 {
			var env errorBody
			if err := json.Unmarshal(r.Body, &env); err != nil || env.Error.Code == "" {
				t.Fatalf("GET %s?%q answered %d without the error envelope: %s", get, query, r.Code, r.Body)
			}
		}
	})
}
