package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServerHealthProbe(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health/ready":
			w.WriteHeader(status)
			if status == http.StatusOK {
				_, _ = w.Write([]byte(`{"status":"ready","checks":{}}`))
			} else {
				_, _ = w.Write([]byte(`{"status":"not_ready","checks":{}}`))
			}
		case "/health/live":
			_, _ = w.Write([]byte(`{"status":"live"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"server", "health", "--url", srv.URL}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run()
	require.Equal(t, ExitOK, code)
	require.Equal(t, "ready\n", out)
	status = http.StatusServiceUnavailable
	code, _, errText := run()
	require.Equal(t, ExitFailed, code)
	require.Contains(t, errText, "503 not_ready")
	code, out, _ = run("-o", "json")
	require.Equal(t, ExitFailed, code)
	require.JSONEq(t, `{"status":"not_ready","checks":{}}`, out, "-o json prints the server's body, also when not ready")
	code, out, _ = run("--live")
	require.Equal(t, ExitOK, code)
	require.Equal(t, "live\n", out)
	code, out, _ = run("--live", "-o", "json")
	require.Equal(t, ExitOK, code)
	require.JSONEq(t, `{"status":"live"}`, out)
	srv.Close()
	code, _, _ = run()
	require.Equal(t, ExitFailed, code, "nothing listening")
}

func TestProbeAddress(t *testing.T) {
	for listen, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080",
		"[::]:9000":      "http://127.0.0.1:9000",
		":8080":          "http://127.0.0.1:8080",
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"10.1.2.3:8080":  "http://10.1.2.3:8080",
		"localhost:81":   "http://localhost:81",
	} {
		require.Equal(t, want, probeAddress(listen), listen)
	}
	require.True(t, strings.HasPrefix(probeAddress("bad"), "http://"))
}
