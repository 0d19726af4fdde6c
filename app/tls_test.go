package app_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/internal/testcert"
	"github.com/powercontext/powercontext/internal/testutil"
)

// tlsRuntime starts a runtime serving HTTPS with a leaf named "one" from a fresh CA; it returns the address, the
// logs, the CA and the paths of the CA, certificate and key files.
type tlsFixture struct {
	addr                      string
	logs                      *syncWriter
	ca                        *testcert.CA
	caFile, certFile, keyFile string
}

func tlsRuntime(t *testing.T, adjust ...func(*app.Config)) tlsFixture {
	t.Helper()
	ca, err := testcert.NewCA()
	require.NoError(t, err)
	dir := t.TempDir()
	f := tlsFixture{ca: ca, certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key")}
	f.caFile, err = ca.WriteCA(dir)
	require.NoError(t, err)
	require.NoError(t, ca.WriteLeaf("one", f.certFile, f.keyFile))
	f.addr, f.logs = edgeRuntime(t, append([]func(*app.Config){func(c *app.Config) {
		c.TLSCertFile, c.TLSKeyFile = f.certFile, f.keyFile
	}}, adjust...)...)
	return f
}

// served is the common name of the certificate a fresh TLS handshake with addr gets.
func served(t *testing.T, f tlsFixture) string {
	t.Helper()
	conn, err := tls.Dial("tcp", f.addr, &tls.Config{RootCAs: f.ca.Pool(), MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestTLSIsServed: with a certificate configured the API answers HTTPS (TLS 1.2 or newer) to a client trusting the
// CA, refuses TLS 1.1, answers a cleartext request on the same port with net/http's 400 (no handler runs), logs
// the scheme, and the dashboard cookie is Secure.
func TestTLSIsServed(t *testing.T) {
	token := strings.Repeat("t", 32)
	f := tlsRuntime(t, func(c *app.Config) { c.AuthToken = token })
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool(), MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Get("https://" + f.addr + "/health/live")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotNil(t, resp.TLS)
	require.GreaterOrEqual(t, resp.TLS.Version, uint16(tls.VersionTLS12))

	_, err = tls.Dial("tcp", f.addr, &tls.Config{RootCAs: f.ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}) //nolint:gosec // the point: an old version is refused
	require.Error(t, err, "TLS 1.1 is refused")

	// Cleartext on the TLS port: 400 from net/http before any handler, and a bearer token is not accepted.
	conn, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /v1/operations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	plain, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(plain.Body)
	plain.Body.Close()
	require.Equal(t, http.StatusBadRequest, plain.StatusCode)
	require.Contains(t, string(body), "HTTP request to an HTTPS server")

	waitLog(t, f.logs, `"scheme":"https"`)

	// The dashboard session cookie is Secure when TLS is served.
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	login, err := noRedirect.PostForm("https://"+f.addr+"/ui/login", url.Values{"token": {token}})
	require.NoError(t, err)
	login.Body.Close()
	require.Equal(t, http.StatusSeeOther, login.StatusCode)
	require.NotEmpty(t, login.Cookies())
	for _, c := range login.Cookies() {
		require.True(t, c.Secure, "cookie %s is Secure", c.Name)
	}

	// curl, when the machine has it: HTTPS with the CA works, cleartext gets the 400.
	if _, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("curl", "-sS", "--cacert", f.caFile, "-o", "/dev/null", "-w", "%{http_code}",
			"https://"+f.addr+"/health/live").CombinedOutput()
		require.NoError(t, err, string(out))
		require.Equal(t, "200", string(out))
		out, err = exec.Command("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://"+f.addr+"/health/live").CombinedOutput()
		require.NoError(t, err, string(out))
		require.Equal(t, "400", string(out))
	} else {
		t.Log("curl not found: the curl checks are skipped")
	}
}

// waitLog waits (up to 30 s) for the log to contain s.
func waitLog(t *testing.T, logs *syncWriter, s string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool { return strings.Contains(logs.String(), s) }, "the log never said %s", s)
}

// TestTLSWithoutCertificateIsPlainHTTP: without TLS settings the scheme logged is http.
func TestTLSWithoutCertificateIsPlainHTTP(t *testing.T) {
	_, logs := edgeRuntime(t)
	waitLog(t, logs, `"scheme":"http"`)
}

// TestTLSCertificateRotation: a new pair written over the files is served without a restart; a bad pair keeps the
// old certificate in service and logs tls_reload_failed; SIGHUP reloads at once.
func TestTLSCertificateRotation(t *testing.T) {
	f := tlsRuntime(t)
	require.Equal(t, "one", served(t, f))

	require.NoError(t, f.ca.WriteLeaf("two", f.certFile, f.keyFile))
	testutil.Eventually(t, 30*time.Second, func() bool { return served(t, f) == "two" }, "the rotated certificate is not served")

	failures := strings.Count(f.logs.String(), "tls_reload_failed")
	require.NoError(t, testcert.WriteAtomic(f.keyFile, []byte("-----BEGIN EC PRIVATE KEY-----\nbm90IGEga2V5\n-----END EC PRIVATE KEY-----\n")))
	testutil.Eventually(t, 30*time.Second, func() bool {
		_ = served(t, f) // a handshake triggers the check
		return strings.Count(f.logs.String(), "tls_reload_failed") > failures
	}, "the bad pair was never tried")
	require.Equal(t, "two", served(t, f), "a bad pair keeps the old certificate")
	require.NotContains(t, f.logs.String(), "bm90IGEga2V5", "the key file's contents are never logged")

	// SIGHUP: a reload without waiting for a handshake.
	c, k, err := f.ca.Leaf("three")
	require.NoError(t, err)
	require.NoError(t, testcert.WriteAtomic(f.keyFile, k))
	require.NoError(t, testcert.WriteAtomic(f.certFile, c))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	testutil.Eventually(t, 30*time.Second, func() bool { return strings.Contains(f.logs.String(), `"trigger":"sighup"`) },
		"SIGHUP did not reload")
	require.Equal(t, "three", served(t, f))
}

// TestClientsTrustACAFile: the Go client (WithRootCAs), the command line (--ca-file, POWERCONTEXT_CA_FILE) and the
// `server health` probe reach an HTTPS server whose CA they are given, and fail without it.
func TestClientsTrustACAFile(t *testing.T) {
	token := strings.Repeat("c", 32)
	f := tlsRuntime(t, func(c *app.Config) { c.AuthToken = token })
	base := "https://" + f.addr
	ctx := context.Background()

	pool, err := client.LoadCAFile(f.caFile)
	require.NoError(t, err)
	_, err = client.New(base, client.WithToken(token), client.WithRootCAs(pool)).ListOperations(ctx, client.ListOperationsParams{})
	require.NoError(t, err)
	_, err = client.New(base, client.WithToken(token)).ListOperations(ctx, client.ListOperationsParams{})
	require.Error(t, err, "without the CA the server's certificate is not trusted")

	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := app.Main(ctx, args, &out, &errb)
		return code, out.String() + errb.String()
	}
	code, out := run("ops", "list", "--server", base, "--token", token, "--ca-file", f.caFile)
	require.Equal(t, app.ExitOK, code, out)
	code, out = run("ops", "list", "--server", base, "--token", token)
	require.Equal(t, app.ExitUnreachable, code, out)
	require.Contains(t, out, "--ca-file", "an untrusted certificate is named as such, with the option that fixes it")
	t.Setenv("POWERCONTEXT_CA_FILE", f.caFile)
	code, out = run("ops", "list", "--server", base, "--token", token)
	require.Equal(t, app.ExitOK, code, out)

	code, out = run("server", "health", "--url", base, "--live")
	require.Equal(t, app.ExitOK, code, out)
	t.Setenv("POWERCONTEXT_CA_FILE", "")
	code, out = run("server", "health", "--url", base, "--live", "--ca-file", f.caFile)
	require.Equal(t, app.ExitOK, code, out)
	code, out = run("server", "health", "--url", base, "--live")
	require.Equal(t, app.ExitFailed, code, out)
	code, out = run("server", "health", "--url", base, "--live", "--ca-file", filepath.Join(t.TempDir(), "missing.pem"))
	require.Equal(t, app.ExitConfig, code, out)

	// Without --url the probe reads the server's own settings: https:// when a certificate is configured.
	t.Setenv("POWERCONTEXT_HTTP_LISTEN", f.addr)
	t.Setenv("POWERCONTEXT_TLS_CERT_FILE", f.certFile)
	code, out = run("server", "health", "--live", "--ca-file", f.caFile)
	require.Equal(t, app.ExitOK, code, out)
}
