package mcp

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
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

// errorShape gives the SDK's transport errors (plain-text http.Error answers: wrong Accept or Content-Type, a
// missing or unknown Mcp-Session-Id, a wrong method, a malformed body) the API's error shape
// {"error":{"code","message","details"}} with the same status (docs/api.md). JSON-RPC answers, including JSON-RPC
// errors, pass through untouched: MCP clients parse those. A 5xx never shows the SDK's text.
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
}

func (w *shapeWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *shapeWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if room := 4 * maxTransportMessage; w.text.Len() < room {
			w.text.Write(p[:min(len(p), room-w.text.Len())])
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps server-sent event streams flowing through the wrapper.
func (w *shapeWriter) Flush() {
	if w.status != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines, hijacking).
func (w *shapeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *shapeWriter) finish() {
	if w.status == 0 {
		return
	}
	code, ok := transportCodes[w.status]
	msg := transportMessage(w.text.String())
	switch {
	case w.status >= 500:
		code, msg = "internal_error", "internal server error"
	case !ok:
		code = "invalid_request"
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "details": nil}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(append(body, '\n'))
}

// transportMessage is the SDK's one-line text, bounded and valid UTF-8, or the status text when empty.
func transportMessage(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > maxTransportMessage {
		s = s[:maxTransportMessage]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	if s == "" {
		return "the MCP transport refused the request"
	}
	return s
}
