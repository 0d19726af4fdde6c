package mcp

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Event stream limits of a stateful server (single_node); docs/security.md#limits.
const (
	// DefaultMaxStreams caps the open event streams (GET /mcp) of the server; each holds a connection.
	DefaultMaxStreams = 256
	// DefaultMaxStreamsPerPrincipal caps the open event streams of one principal.
	DefaultMaxStreamsPerPrincipal = 16
	// DefaultStreamIdle ends an event stream after this long without an event.
	DefaultStreamIdle = 30 * time.Second
)

// streamRetryMillis is the reconnection delay an idle-ended stream asks its client for (the SSE retry field).
const streamRetryMillis = 1000

// idleEventPrefix starts the event id an idle-ended stream sends last. A client that reconnects sends it back as
// Last-Event-ID; it names no stored event (the server keeps none), so it is dropped before the SDK sees it.
const idleEventPrefix = "pc-idle-"

const msgTooManyStreams = "too many MCP event streams are open; close one or retry later"

// streamLimits bounds the server's event streams (GET /mcp on a session): in total and per principal (beyond
// either: 429 too_many_streams), and each stream ends after idle without an event. The SDK holds a stream open
// until the client leaves or the session ends (30 minutes idle), past the HTTP write timeout, so without this a
// single token could hold most of the connection cap. A stream that ends idle sends a last event carrying an id
// and a retry delay, so SSE clients reconnect after the delay and see progress (the Go SDK gives up on a stream
// that ends repeatedly without a new event id).
type streamLimits struct {
	next         http.Handler
	max          int
	perPrincipal int
	idle         time.Duration
	ended        atomic.Int64 // numbers the idle events

	mu    sync.Mutex
	total int
	by    map[string]int
}

func newStreamLimits(next http.Handler, max, perPrincipal int, idle time.Duration) *streamLimits {
	return &streamLimits{next: next, max: max, perPrincipal: perPrincipal, idle: idle, by: map[string]int{}}
}

func (l *streamLimits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.Header.Get(headerSessionID) == "" {
		l.next.ServeHTTP(w, r)
		return
	}
	owner := principalKey(r)
	if !l.acquire(owner) {
		writeError(w, http.StatusTooManyRequests, limitCodes["streams"], msgTooManyStreams)
		return
	}
	defer l.release(owner)
	if strings.HasPrefix(r.Header.Get("Last-Event-ID"), idleEventPrefix) {
		r.Header.Del("Last-Event-ID")
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	iw := &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: l.idle}
	iw.timer = time.AfterFunc(l.idle, func() { iw.idled.Store(true); cancel() })
	defer iw.timer.Stop()
	iw.extendDeadline()
	l.next.ServeHTTP(iw, r.WithContext(ctx))
	if iw.idled.Load() && iw.streaming() {
		// The client is still connected: tell it where the stream ended and when to come back.
		event := idleEventPrefix + strconv.FormatInt(l.ended.Add(1), 10)
		_, _ = iw.ResponseWriter.Write([]byte("id: " + event + "\nretry: " + strconv.Itoa(streamRetryMillis) + "\n\n"))
		_ = iw.rc.Flush()
	}
}

func (l *streamLimits) acquire(owner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max || l.by[owner] >= l.perPrincipal {
		return false
	}
	l.total++
	l.by[owner]++
	return true
}

func (l *streamLimits) release(owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.by[owner]--; l.by[owner] <= 0 {
		delete(l.by, owner)
	}
}

// idleWriter restarts a stream's idle timer and moves its connection's write deadline on with every write, so a
// stream ends after idle without an event and an active one is not cut by the server's write timeout.
type idleWriter struct {
	http.ResponseWriter
	rc     *http.ResponseController
	idle   time.Duration
	timer  *time.Timer
	idled  atomic.Bool
	status atomic.Int32
}

func (w *idleWriter) WriteHeader(code int) {
	w.status.CompareAndSwap(0, int32(code))
	w.ResponseWriter.WriteHeader(code)
}

func (w *idleWriter) Write(p []byte) (int, error) {
	w.status.CompareAndSwap(0, http.StatusOK)
	if !w.idled.Load() {
		w.timer.Reset(w.idle)
		w.extendDeadline()
	}
	return w.ResponseWriter.Write(p)
}

func (w *idleWriter) Flush() { _ = w.rc.Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// extendDeadline lets the next write happen within the idle limit plus a margin (best effort: a writer that
// cannot set deadlines keeps the server's write timeout).
func (w *idleWriter) extendDeadline() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle + 5*time.Second)) // clock:process net deadlines are read against the process clock
}

// streaming reports whether the answer is an open event stream.
func (w *idleWriter) streaming() bool {
	return w.status.Load() == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
}
