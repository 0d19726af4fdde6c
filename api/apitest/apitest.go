// Package apitest checks real HTTP exchanges against the OpenAPI document (api/openapi.yaml) with
// libopenapi-validator, which implements OpenAPI 3.1 and JSON Schema 2020-12. Tests only: nothing in the binary
// imports it.
//
// A response is checked in strict mode: its status must be documented for the operation, its content type and body
// must match the documented schema (a property the schema does not name is an error, so the document cannot fall
// behind the code), and required headers (X-Request-ID everywhere, Location and Retry-After on 202) must be present
// and valid. When the server accepted a request (2xx), the request itself must be valid too: the document may not
// refuse what the server takes.
package apitest

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/powercontext/powercontext/api"
)

// Spec is the parsed document with its validators.
type Spec struct {
	Model *v3.Document
	// Operations maps each documented path template to its methods (upper case).
	Operations map[string][]string

	mu        sync.Mutex // the validator's caches are not documented as safe for concurrent use
	strict    validator.Validator
	lax       validator.Validator
	schemas   schema_validation.SchemaValidator
	errSchema *base.Schema
	matchers  []pathMatcher
}

type pathMatcher struct {
	template string
	re       *regexp.Regexp
}

// strictIgnore lists free-form objects whose members the document deliberately does not name.
var strictIgnore = []string{
	"$.body.metadata.**",
	"$.body.items[*].metadata.**",
	"$.body.error.details.**",
	"$.body.checks.**",
}

// headersNotDocumented are response headers the document does not list per response: browser security and caching
// headers, and Allow on a 405.
var headersNotDocumented = []string{"X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy",
	"Referrer-Policy", "Strict-Transport-Security", "Cache-Control", "Vary", "Allow", "Last-Modified", "Accept-Ranges"}

// laxResponse names routes whose responses are checked without strict mode: /openapi.json is this document,
// whose members the document does not describe (api's tests compare it with the YAML instead), and /mcp carries
// JSON-RPC messages whose members the Model Context Protocol defines.
var laxResponse = map[string]bool{"/openapi.json": true, "/mcp": true}

var load = sync.OnceValues(func() (*Spec, error) { return Parse(api.YAML()) })

// Load returns the embedded document, parsed once per test binary.
func Load() (*Spec, error) { return load() }

// Parse builds a Spec from an OpenAPI document.
func Parse(doc []byte) (*Spec, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, err
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, err
	}
	strict, errs := validator.NewValidator(d, config.WithStrictMode(), config.WithStrictIgnorePaths(strictIgnore...),
		config.WithStrictIgnoredHeadersExtra(headersNotDocumented...), config.WithFormatAssertions(), config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	lax, errs := validator.NewValidator(d, config.WithFormatAssertions(), config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	s := &Spec{Model: &m.Model, Operations: map[string][]string{}, strict: strict, lax: lax,
		schemas: schema_validation.NewSchemaValidator(config.WithFormatAssertions())}
	if m.Model.Components != nil && m.Model.Components.Schemas != nil {
		if p := m.Model.Components.Schemas.GetOrZero("Error"); p != nil {
			s.errSchema = p.Schema()
		}
	}
	if s.errSchema == nil {
		return nil, fmt.Errorf("apitest: components.schemas.Error is missing")
	}
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			s.Operations[path] = append(s.Operations[path], strings.ToUpper(method))
		}
		sort.Strings(s.Operations[path])
		s.matchers = append(s.matchers, pathMatcher{template: path, re: templateRE(path)})
	}
	return s, nil
}

var paramRE = regexp.MustCompile(`\{[^/{}]+\}`)

func templateRE(path string) *regexp.Regexp {
	parts := paramRE.Split(path, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[^/]+") + "$")
}

// Documented returns the path template that documents method on the request path, if any. A literal template wins
// over one with parameters.
func (s *Spec) Documented(method, path string) (string, bool) {
	best := ""
	for _, m := range s.matchers {
		if !m.re.MatchString(path) {
			continue
		}
		for _, meth := range s.Operations[m.template] {
			if meth == method && (best == "" || strings.Count(m.template, "{") < strings.Count(best, "{")) {
				best = m.template
			}
		}
	}
	return best, best != ""
}

// ErrorCodes returns the ErrorCode enum.
func (s *Spec) ErrorCodes() []string {
	p := s.Model.Components.Schemas.GetOrZero("ErrorCode")
	if p == nil {
		return nil
	}
	var out []string
	for _, n := range p.Schema().Enum {
		out = append(out, n.Value)
	}
	return out
}

// Exchange is one request and the response the server gave.
type Exchange struct {
	Request *http.Request
	// RequestBody is the body the request carried (the request's own Body has been read by the server).
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Check returns every way the exchange departs from the document ("" when it conforms). A request that no
// documented operation covers must have been refused with the documented error body (404 for an unknown path,
// 405 for an unknown method, or 401/429 from the middleware that runs first).
func (s *Spec) Check(x Exchange) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := escapedPath(x.Request.Clone(x.Request.Context()))
	resp := &http.Response{StatusCode: x.Status, Header: x.Header.Clone(), Request: req,
		Body: io.NopCloser(bytes.NewReader(x.Body))}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	if _, ok := s.Documented(req.Method, req.URL.Path); !ok {
		switch x.Status {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized, http.StatusTooManyRequests:
		default:
			return fmt.Sprintf("%s %s is not documented, yet it answered %d", req.Method, req.URL.Path, x.Status)
		}
		if req.Method == http.MethodHead {
			return ""
		}
		if ok, errs := s.schemas.ValidateSchemaBytes(s.errSchema, x.Body); !ok {
			return describe(errs)
		}
		return ""
	}
	var out []string
	v := s.strict
	if laxResponse[req.URL.Path] {
		v = s.lax
	}
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		out = append(out, describe(errs))
	}
	if x.Status >= 200 && x.Status < 300 {
		req2 := escapedPath(x.Request.Clone(x.Request.Context()))
		req2.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
		req2.ContentLength = int64(len(x.RequestBody))
		// The server takes any application/*+json body as JSON; the document names application/json.
		if ct := req2.Header.Get("Content-Type"); ct != "" {
			if mt, _, err := mime.ParseMediaType(ct); err == nil && strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json") {
				req2.Header.Set("Content-Type", "application/json")
			}
		}
		// Requests are checked without strict mode; the request schemas carry additionalProperties: false, as the server
		// refuses a member it does not take.
		if ok, errs := s.lax.ValidateHttpRequestSync(req2); !ok {
			out = append(out, "the server accepted a request the document refuses: "+describe(errs))
		}
	}
	return strings.Join(out, "; ")
}

// escapedPath matches the request on its escaped path, as the server's router does: a path parameter may hold an
// encoded "/" (a scope id in DELETE /v1/scopes/{scope_id}), which must stay one segment.
func escapedPath(r *http.Request) *http.Request {
	if r.URL.RawPath != "" {
		r.URL.Path, r.URL.RawPath = r.URL.EscapedPath(), ""
	}
	return r
}

func describe(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Message)
		if e.Reason != "" {
			b.WriteString(": " + e.Reason)
		}
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, " [%s at %s]", f.Reason, f.KeywordLocation)
		}
	}
	return b.String()
}
