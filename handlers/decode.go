package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// decodeJSON reads the request body into dst (a pointer to a struct): 415 unless the content type is JSON, 413
// beyond the body limit, 400 invalid_json for a body that is not one UTF-8 JSON object or that repeats a member
// name in any object or names a member dst does not have (member names match exactly, case-sensitively;
// details.field names it), 422 invalid_request with details.field for a value of the wrong type.
func decodeJSON(c echo.Context, dst any) error {
	req := c.Request()
	if !jsonContentType(req.Header.Get(echo.HeaderContentType)) {
		return apiErr(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "request body must be application/json", nil)
	}
	if req.Body == nil {
		return invalidJSON("request body must be a JSON object")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		return invalidJSON("request body could not be read")
	}
	if !utf8.Valid(body) {
		return invalidJSON("request body is not valid UTF-8")
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return invalidJSON("request body is empty; a JSON object is required")
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return invalidJSON("request body is not valid JSON")
		}
		return invalidJSON("request body must be a JSON object")
	}
	if path, dup := duplicateKey(trimmed); dup {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON,
			"request body repeats a member name; each name may appear once per object", map[string]any{"field": path})
	}
	if field, unknown := unknownMember(trimmed, dst); unknown {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON,
			"request body has a member this route does not take; names are matched exactly (case-sensitive)",
			map[string]any{"field": field})
	}
	if err := bodyScopeAllowed(c, trimmed); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "body"
			}
			return invalidField(field, "has the wrong type; expected "+jsonTypeName(te.Type.Kind().String()))
		}
		return invalidJSON("request body is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalidJSON("request body must hold exactly one JSON object")
	}
	return nil
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "another type"
}

// jsonContentType accepts application/json and application/*+json, with an optional UTF-8 charset.
func jsonContentType(ct string) bool {
	if ct == "" {
		return false
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if mt != "application/json" && (!strings.HasPrefix(mt, "application/") || !strings.HasSuffix(mt, "+json")) {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return false
	}
	return true
}

// queryInt parses an optional integer query parameter within [lo, hi]; def when absent.
func queryInt(c echo.Context, name string, def, lo, hi int64) (int64, error) {
	raw, present := c.QueryParams()[name]
	if len(raw) > 1 { // before the empty check: limit=&limit=100000 is two values, not an absent one
		return 0, invalidField(name, "must be given at most once")
	}
	if !present || len(raw) == 0 || raw[0] == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(raw[0], 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, invalidField(name, "must be an integer in "+strconv.FormatInt(lo, 10)+".."+strconv.FormatInt(hi, 10))
	}
	return n, nil
}

// queryString returns an optional single-valued query parameter, checked to be valid UTF-8 without NUL bytes.
func queryString(c echo.Context, name string) (string, error) {
	raw := c.QueryParams()[name]
	if len(raw) == 0 {
		return "", nil
	}
	if len(raw) > 1 {
		return "", invalidField(name, "must be given at most once")
	}
	if err := checkText(name, raw[0]); err != nil {
		return "", err
	}
	return raw[0], nil
}

// checkText refuses invalid UTF-8 and NUL bytes in a text value (no engine stores NUL in a text column).
func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return invalidField(field, "must be valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return invalidField(field, "must not contain NUL characters")
	}
	return nil
}

// memberNames caches, per request struct type, the exact JSON member names it takes.
var memberNames sync.Map // reflect.Type -> map[string]struct{}

// knownMembers returns the exact json member names of struct type t (a field without a tag takes its Go name).
func knownMembers(t reflect.Type) map[string]struct{} {
	if m, ok := memberNames.Load(t); ok {
		return m.(map[string]struct{})
	}
	names := map[string]struct{}{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = struct{}{}
	}
	memberNames.Store(t, names)
	return names
}

// unknownMember reports the first top-level member name of the JSON object body that is not exactly one of dst's
// member names. encoding/json matches names case-insensitively, so without this check {"scope_id":"p",
// "Scope_ID":"q"} would be read as scope q while a gateway (or any case-sensitive parser) reads scope p; an
// unknown name is refused for the same reason (two readers, one request). Request members are flat: a nested
// object (metadata) is free-form and not checked. A body that does not tokenize reports nothing (the decoder
// proper rejects it).
func unknownMember(body []byte, dst any) (string, bool) {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "", false
	}
	known := knownMembers(t)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, ok := tok.(string)
		if !ok {
			return "", false
		}
		if _, ok := known[name]; !ok {
			return name, true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	return "", false
}

// bodyScopeAllowed refuses a top-level "scope_id" string outside the principal's allowed prefixes with 403
// (docs/security.md#principals); a scope_id of the wrong type is left to the decoder.
func bodyScopeAllowed(c echo.Context, body []byte) error {
	p := principalOf(c)
	if !p.Restricted() {
		return nil
	}
	var probe struct {
		ScopeID json.RawMessage `json:"scope_id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ScopeID) == 0 {
		return nil
	}
	var scope string
	if json.Unmarshal(probe.ScopeID, &scope) != nil {
		return nil
	}
	return scopeAllowed(p, scope)
}

// duplicateKey walks body's tokens and reports the path (a.b[2].c) of the first member name repeated within one
// object. Duplicates are legal JSON but ambiguous: parsers disagree on which value wins (encoding/json takes the
// last), so a proxy or a client library may see a different request than the server (RFC 7493 forbids them).
// Malformed JSON reports no duplicate; the decoder proper rejects it.
func duplicateKey(body []byte) (string, bool) {
	type frame struct {
		obj     bool
		keys    map[string]struct{}
		key     string // object: the current member
		wantKey bool   // object: the next token is a member name or '}'
		index   int    // array: the current element
	}
	var stack []*frame
	path := func() string {
		var b strings.Builder
		for i, f := range stack {
			if f.obj {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	// valueDone moves the enclosing container past the value just read.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.obj {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			top := stack[n-1]
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				valueDone()
			} else if k, ok := tok.(string); ok {
				top.key = k
				if _, dup := top.keys[k]; dup {
					return path(), true
				}
				top.keys[k] = struct{}{}
				top.wantKey = false
			}
		} else if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{obj: true, keys: map[string]struct{}{}, wantKey: true})
			case '[':
				stack = append(stack, &frame{})
			case ']':
				stack = stack[:len(stack)-1]
				valueDone()
			}
		} else {
			valueDone()
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}
