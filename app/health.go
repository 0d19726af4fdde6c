package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/powercontext/powercontext/cli"
)

// probeClient is the probe's HTTP client: the default one, or one trusting the CA bundle of --ca-file.
func probeClient(caFile string) (*http.Client, error) {
	pool, err := cli.LoadCA(caFile)
	if err != nil || pool == nil {
		return http.DefaultClient, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	return &http.Client{Transport: t}, nil
}

// EnvListen names the listen address variable; `server health` probes the address the server was told to use.
const EnvListen = "POWERCONTEXT_HTTP_LISTEN"

// newHealthCommand is `powercontext server health`: a probe for container health checks (the image has no shell,
// curl or wget). It asks the local process for /health/ready (or /health/live) and exits 0 only on 200.
func newHealthCommand() *cobra.Command {
	var target string
	var live bool
	var timeout time.Duration
	var output, caFile string
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Probe this server's readiness (exit 0 when ready or degraded); for container health checks",
		Long: `Probe a running server's GET /health/ready (or, with --live, /health/live) and exit 0 when it answers 200,
1 otherwise. The address defaults to $` + EnvListen + ` (a wildcard host such as 0.0.0.0 is probed on
127.0.0.1), else 127.0.0.1:8080, over https:// when $POWERCONTEXT_TLS_CERT_FILE is set. --ca-file (or
$` + cli.EnvCAFile + `) names the CA bundle that issued the server's certificate. The container image's HEALTHCHECK
and the compose files use it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if target == "" {
				target = probeAddress(envOr(EnvListen, DefaultConfig().Listen))
				if envOr("POWERCONTEXT_TLS_CERT_FILE", "") != "" {
					target = "https://" + strings.TrimPrefix(target, "http://")
				}
			}
			hc, err := probeClient(caFile)
			if err != nil {
				return err
			}
			path := "/health/ready"
			if live {
				path = "/health/live"
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			return probe(cmd.Context(), hc, cmd.OutOrStdout(), strings.TrimRight(target, "/")+path, timeout, output == "json")
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringVar(&target, "url", "", "base URL to probe (default from $"+EnvListen+")")
	cmd.Flags().BoolVar(&live, "live", false, "probe liveness (/health/live) instead of readiness")
	cmd.Flags().StringVar(&caFile, "ca-file", "", "PEM CA bundle to trust for an https:// server (default $"+cli.EnvCAFile+", else the system's)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// probeAddress turns a listen address into the URL a local probe uses.
func probeAddress(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// probe prints the status word, or with asJSON the server's health body as it answered (any status).
func probe(ctx context.Context, hc *http.Client, out io.Writer, url string, timeout time.Duration, asJSON bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &ConfigError{Err: err}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var body struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &body)
	if asJSON && json.Valid(raw) {
		fmt.Fprintln(out, strings.TrimSpace(string(raw)))
	}
	if body.Status == "" {
		body.Status = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, body.Status)
	}
	if !asJSON {
		fmt.Fprintln(out, body.Status)
	}
	return nil
}
