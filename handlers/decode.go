package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// decodeJSON reads the request body into dst (a pointer to a struct): 415 unless the content type is JSON, 413
// beyond the body limit, 400 invalid_json for a body that is not one UTF-8 JSON object, 422 invalid_request with
// details.field for a value of the wrong type. Unknown fields are ignored (forward compatible).
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
	if mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
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
	if !present || len(raw) == 0 || raw[0] == "" {
		return def, nil
	}
	if len(raw) > 1 {
		return 0, invalidField(name, "must be given at most once")
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
