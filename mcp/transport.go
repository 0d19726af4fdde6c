package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// maxTransportMessage bounds the SDK text kept as the message of a transport error.
const maxTransportMessage = 200

// transportCodes maps the statuses the SDK's transport answers with plain text to the API's bounded codes.
var transportCodes = map[int]string{
	http.StatusBadRequest:            "invalid_request",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
}

// limitCodes are the codes of the MCP limits' own refusals, both 429 (sessionCap, streamLimits).
var limitCodes = map[string]string{
	"sessions": "too_many_sessions",
	"streams":  "too_many_streams",
}

// transportMessages are the fixed messages of the SDK's plain-text refusals, matched by a prefix of the SDK's
// text; a refusal without an entry gets its status's message from statusMessages. The SDK's own text (which can
// quote Go types and decoder internals) never reaches the client.
var transportMessages = []struct{ prefix, message string }{
	{"Accept must contain 'text/event-stream'", "a GET must accept text/event-stream"},
	{"Accept must contain both", "Accept must list both application/json and text/event-stream"},
	{"Content-Type must be", "the body must be declared as application/json"},
	{"Bad Request: GET requires an Mcp-Session-Id", "this request needs an Mcp-Session-Id header; send initialize first"},
	{"Bad Request: DELETE requires an Mcp-Session-Id", "this request needs an Mcp-Session-Id header; send initialize first"},
	{"Bad Request: Unsupported protocol version", "unsupported MCP-Protocol-Version"},
	{"Bad Request: protocol version", "unsupported MCP-Protocol-Version"},
	{"malformed payload", "the body is not a valid JSON-RPC 2.0 message"},
	{"POST requires a non-empty body", "the body is not a valid JSON-RPC 2.0 message"},
	{"failed to read body", "the body could not be read"},
	{"invalid request", "the body is not a valid JSON-RPC 2.0 request"},
	{"JSON RPC not handled", "unknown JSON-RPC method"},
	{"JSON-RPC batching is not supported", "JSON-RPC batches are not supported"},
	{"server does not support batch", "JSON-RPC batches are not supported"},
	{"can't send Last-Event-ID", "Last-Event-ID is not supported"},
	{"malformed Last-Event-ID", "Last-Event-ID is not supported"},
	{"stream replay unsupported", "Last-Event-ID is not supported"},
	{"failed to replay events", "Last-Event-ID is not supported"},
	{"session not found", "unknown or expired MCP session; initialize a new one"},
	{"session is closing", "unknown or expired MCP session; initialize a new one"},
	{"session user mismatch", "this MCP session belongs to another principal"},
	{"Forbidden: invalid Host header", "the Host header is not allowed"},
	{"stream ID conflicts", "this session's event stream is already open"},
	{"request body exceeds", "the body exceeds the size limit"},
}

var statusMessages = map[int]string{
	http.StatusBadRequest:            "the MCP transport refused the request",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "unknown or expired MCP session; initialize a new one",
	http.StatusMethodNotAllowed:      "method not allowed on /mcp",
	http.StatusConflict:              "the request conflicts with the session's state",
	http.StatusRequestEntityTooLarge: "the body exceeds the size limit",
	http.StatusUnsupportedMediaType:  "the body must be declared as application/json",
}

// rpcMessages are the fixed messages of JSON-RPC errors by code (the SDK's messages can quote Go types and
// decoder internals). A code outside the table keeps its number with the generic message; code 0, which is not
// a JSON-RPC code, becomes -32600.
var rpcMessages = map[int64]string{
	-32700: "parse error: the message is not valid JSON",
	-32600: "invalid request",
	-32601: "method not found",
	-32602: "invalid params",
	-32603: "internal error",
}

// errorShape gives the SDK's transport errors (plain-text http.Error answers: wrong Accept or Content-Type, a
// missing or unknown Mcp-Session-Id, a wrong method, a malformed body) the API's error shape
// {"error":{"code","message","details"}} with the same status and a fixed message (docs/api.md). JSON-RPC answers
// keep their shape, but the message of a JSON-RPC error is replaced by the fixed one of its code. A 5xx never
// shows the SDK's text.
func errorShape(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &shapeWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		sw.finish()
	})
}

type shapeWriter struct {
	http.ResponseWriter
	wroteHeader bool
	status      int // set while a plain-text error is being captured
	text        strings.Builder
	json        *bytes.Buffer // non-nil while a JSON-RPC answer is being held to check for errors
	jsonStatus  int
}

func (w *shapeWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	ct := w.Header().Get("Content-Type")
	switch {
	case code >= 400 && strings.HasPrefix(ct, "text/plain"):
		w.status = code
		return
	case strings.HasPrefix(ct, "application/json"):
		w.json, w.jsonStatus = &bytes.Buffer{}, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *shapeWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.status != 0:
		if room := 4 * maxTransportMessage; w.text.Len() < room {
			w.text.Write(p[:min(len(p), room-w.text.Len())])
		}
		return len(p), nil
	case w.json != nil:
		return w.json.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps server-sent event streams flowing through the wrapper.
func (w *shapeWriter) Flush() {
	if w.status != 0 || w.json != nil {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines, hijacking).
func (w *shapeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *shapeWriter) finish() {
	if w.json != nil {
		body := rewriteRPCErrors(w.json.Bytes())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.ResponseWriter.WriteHeader(w.jsonStatus)
		_, _ = w.ResponseWriter.Write(body)
		return
	}
	if w.status == 0 {
		return
	}
	code, ok := transportCodes[w.status]
	msg := transportMessage(w.status, w.text.String())
	switch {
	case w.status >= 500:
		code, msg = "internal_error", "internal server error"
	case !ok:
		code = "invalid_request"
	}
	writeError(w.ResponseWriter, w.status, code, msg)
}

// writeError writes the API's error shape.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "details": nil}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// transportMessage is the fixed message of a plain-text refusal.
func transportMessage(status int, sdkText string) string {
	for _, m := range transportMessages {
		if strings.HasPrefix(sdkText, m.prefix) {
			return m.message
		}
	}
	if msg, ok := statusMessages[status]; ok {
		return msg
	}
	return statusMessages[http.StatusBadRequest]
}

// rewriteRPCErrors replaces the message (and drops the data) of every JSON-RPC error in a JSON-RPC answer (one
// message or a batch); an answer without errors is returned unchanged.
func rewriteRPCErrors(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"error"`)) {
		return body
	}
	trimmed := bytes.TrimSpace(body)
	var msgs []map[string]json.RawMessage
	batch := len(trimmed) > 0 && trimmed[0] == '['
	if batch {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return body
		}
	} else {
		var one map[string]json.RawMessage
		if json.Unmarshal(trimmed, &one) != nil {
			return body
		}
		msgs = []map[string]json.RawMessage{one}
	}
	changed := false
	for _, m := range msgs {
		raw, ok := m["error"]
		if !ok || m["result"] != nil {
			continue
		}
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		code := e.Code
		if code == 0 {
			code = -32600
		}
		msg, ok := rpcMessages[code]
		switch {
		case code == -32602 && strings.HasPrefix(e.Message, "unknown tool"):
			msg = "unknown tool"
		case !ok:
			msg = "the request could not be completed"
		}
		m["error"], _ = json.Marshal(map[string]any{"code": code, "message": msg})
		changed = true
	}
	if !changed {
		return body
	}
	var out []byte
	if batch {
		out, _ = json.Marshal(msgs)
	} else {
		out, _ = json.Marshal(msgs[0])
	}
	return append(out, '\n')
}
