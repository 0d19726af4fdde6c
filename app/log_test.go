package app_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
)

// TestNetHTTPErrorsAreJSONLogLines: net/http's own error lines (here a superfluous WriteHeader) come out as
// structured zerolog lines, never as bare text on stderr.
func TestNetHTTPErrorsAreJSONLogLines(t *testing.T) {
	var out syncWriter
	log := app.NewLogger("json", "info", &out)
	srv := &http.Server{ErrorLog: app.HTTPErrorLog(log), ReadHeaderTimeout: time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.WriteHeader(http.StatusTeapot)
		})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "superfluous") }, 5*time.Second, 10*time.Millisecond)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "not a JSON log line: %q", line)
		require.Equal(t, "http server error", m["message"])
		require.Equal(t, "warn", m["level"])
		require.Equal(t, "net/http", m["component"])
		require.NotEmpty(t, m["class"])
	}
}

// syncWriter is a log sink safe for the server's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
