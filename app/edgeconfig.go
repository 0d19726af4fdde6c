package app

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/handlers"
)

// Edge is the HTTP edge's configuration: principals, TLS, proxies, timeouts and limits (docs/security.md).
type Edge struct {
	// AuthTokensFile and AuthTokens hold named tokens (a JSON tokens document, docs/security.md#principals), in
	// addition to the single admin token Config.AuthToken.
	AuthTokensFile string
	AuthTokens     string

	TLSCertFile string
	TLSKeyFile  string
	// TrustedProxies are comma-separated IPs or CIDR ranges whose X-Forwarded-For / X-Forwarded-Proto are believed.
	TrustedProxies string

	HTTPReadHeaderTimeoutSeconds float64
	HTTPReadTimeoutSeconds       float64
	HTTPWriteTimeoutSeconds      float64
	HTTPIdleTimeoutSeconds       float64
	HTTPMaxConnections           int
	HTTPMaxListBytes             int
	// HTTPMaxImportBytes caps the body of a scope import (POST /v1/scopes/{id}/import, docs/portability.md); an
	// import is held in memory while it is verified.
	HTTPMaxImportBytes int
	// HTTPImportsAtOnce bounds the imports one process verifies at once (each holds its body in memory).
	HTTPImportsAtOnce int
	// HTTPUnauthenticatedPerMinute is the per-address budget of requests without valid credentials (0 = off).
	HTTPUnauthenticatedPerMinute int
	MCPMaxSessions               int
	MCPSessionIdleSeconds        float64
	MCPMaxSessionsPerPrincipal   int
	MCPMaxStreams                int
	MCPMaxStreamsPerPrincipal    int
	MCPStreamIdleSeconds         float64
	UISessionTTLSeconds          float64

	// Per-connection limits (edgeconns.go).
	HTTPMaxConnectionsPerAddress    int
	HTTPAnonymousIdleTimeoutSeconds float64
}

// DefaultEdge returns the edge defaults (docs/security.md#limits).
func DefaultEdge() Edge {
	return Edge{
		HTTPReadHeaderTimeoutSeconds: 10, HTTPReadTimeoutSeconds: 30, HTTPWriteTimeoutSeconds: 60, HTTPIdleTimeoutSeconds: 90,
		HTTPMaxConnections: 1024, HTTPMaxListBytes: 1 << 20, HTTPUnauthenticatedPerMinute: 60,
		HTTPMaxImportBytes: int(handlers.DefaultImportBodyLimit), HTTPImportsAtOnce: handlers.DefaultImportsAtOnce,
		MCPMaxSessions: 1000, MCPSessionIdleSeconds: 1800, UISessionTTLSeconds: 12 * 3600,
		MCPMaxSessionsPerPrincipal: 100, MCPMaxStreams: 256, MCPMaxStreamsPerPrincipal: 16, MCPStreamIdleSeconds: 30,
		HTTPAnonymousIdleTimeoutSeconds: DefaultAnonymousIdleTimeoutSeconds,
	}
}

func (c *Config) edgeSettings() []setting {
	return append(c.connSettings(), []setting{
		{"auth-tokens-file", "POWERCONTEXT_AUTH_TOKENS_FILE", "JSON file of named tokens with role and allowed scopes (docs/security.md#principals)", &c.AuthTokensFile},
		{"auth-tokens", "POWERCONTEXT_AUTH_TOKENS", "the same JSON inline (prefer the environment variable)", &c.AuthTokens},
		{"tls-cert-file", "POWERCONTEXT_TLS_CERT_FILE", "PEM certificate chain: serve HTTPS (with --tls-key-file)", &c.TLSCertFile},
		{"tls-key-file", "POWERCONTEXT_TLS_KEY_FILE", "PEM private key of the certificate", &c.TLSKeyFile},
		{"http-trusted-proxies", "POWERCONTEXT_HTTP_TRUSTED_PROXIES", "comma-separated IPs/CIDRs whose X-Forwarded-For and X-Forwarded-Proto are believed", &c.TrustedProxies},
		{"http-read-header-timeout-seconds", "POWERCONTEXT_HTTP_READ_HEADER_TIMEOUT_SECONDS", "time to read a request's headers (<= read timeout)", &c.HTTPReadHeaderTimeoutSeconds},
		{"http-read-timeout-seconds", "POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS", "time to read a whole request, body included", &c.HTTPReadTimeoutSeconds},
		{"http-write-timeout-seconds", "POWERCONTEXT_HTTP_WRITE_TIMEOUT_SECONDS", "time from the end of the headers to the end of the answer (>= flush max wait + 5)", &c.HTTPWriteTimeoutSeconds},
		{"http-idle-timeout-seconds", "POWERCONTEXT_HTTP_IDLE_TIMEOUT_SECONDS", "keep-alive connection idle time before it is closed", &c.HTTPIdleTimeoutSeconds},
		{"http-max-connections", "POWERCONTEXT_HTTP_MAX_CONNECTIONS", "open connections served at once; more wait to be accepted", &c.HTTPMaxConnections},
		{"http-max-list-bytes", "POWERCONTEXT_HTTP_MAX_LIST_BYTES", "byte cap of one list page; a fuller page ends early with its cursor (>= 65536)", &c.HTTPMaxListBytes},
		{"http-max-import-bytes", "POWERCONTEXT_HTTP_MAX_IMPORT_BYTES", "byte cap of a scope import's body; a larger body is 413 payload_too_large and imports nothing (1 MiB to 2 GiB; the import is held in memory)", &c.HTTPMaxImportBytes},
		{"http-imports-at-once", "POWERCONTEXT_HTTP_IMPORTS_AT_ONCE", "scope imports one process verifies at once, each holding its body in memory; another is 429 too_many_imports (1 to 64)", &c.HTTPImportsAtOnce},
		{"http-unauthenticated-per-minute", "POWERCONTEXT_HTTP_UNAUTHENTICATED_PER_MINUTE", "requests without valid credentials per client address and minute, before auth (0 = off)", &c.HTTPUnauthenticatedPerMinute},
		{"mcp-max-sessions", "POWERCONTEXT_MCP_MAX_SESSIONS", "MCP sessions kept in single_node, in total; beyond it the new session's principal gives up its least recently used idle one", &c.MCPMaxSessions},
		{"mcp-session-idle-seconds", "POWERCONTEXT_MCP_SESSION_IDLE_SECONDS", "MCP session idle time before it is closed (single_node)", &c.MCPSessionIdleSeconds},
		{"mcp-max-sessions-per-principal", "POWERCONTEXT_MCP_MAX_SESSIONS_PER_PRINCIPAL", "MCP sessions of one principal (single_node); beyond it its own least recently used idle one is closed", &c.MCPMaxSessionsPerPrincipal},
		{"mcp-max-streams", "POWERCONTEXT_MCP_MAX_STREAMS", "open MCP event streams (GET /mcp, single_node); beyond it 429 too_many_streams", &c.MCPMaxStreams},
		{"mcp-max-streams-per-principal", "POWERCONTEXT_MCP_MAX_STREAMS_PER_PRINCIPAL", "open MCP event streams of one principal; beyond it 429 too_many_streams", &c.MCPMaxStreamsPerPrincipal},
		{"mcp-stream-idle-seconds", "POWERCONTEXT_MCP_STREAM_IDLE_SECONDS", "an MCP event stream ends after this long without an event (the client reconnects)", &c.MCPStreamIdleSeconds},
		{"ui-session-ttl-seconds", "POWERCONTEXT_UI_SESSION_TTL_SECONDS", "dashboard session lifetime on the database clock (sessions are stored in the database)", &c.UISessionTTLSeconds},
	}...)
}

// Principals builds the configured tokens: POWERCONTEXT_AUTH_TOKEN as the admin named "admin", then the tokens
// file, then POWERCONTEXT_AUTH_TOKENS. Empty when none is set.
func (c *Config) Principals() (*auth.Set, error) {
	var specs []auth.TokenSpec
	if c.AuthToken != "" {
		specs = append(specs, auth.TokenSpec{Name: auth.DefaultAdminName, Role: auth.RoleAdmin, Token: c.AuthToken})
	}
	if c.AuthTokensFile != "" {
		data, err := os.ReadFile(c.AuthTokensFile)
		if err != nil {
			return nil, fmt.Errorf("POWERCONTEXT_AUTH_TOKENS_FILE: cannot read %s: %v", c.AuthTokensFile, errorWithoutPath(err))
		}
		more, err := auth.ParseTokens(data)
		if err != nil {
			return nil, fmt.Errorf("POWERCONTEXT_AUTH_TOKENS_FILE %s: %v", c.AuthTokensFile, err)
		}
		specs = append(specs, more...)
	}
	if c.AuthTokens != "" {
		more, err := auth.ParseTokens([]byte(c.AuthTokens))
		if err != nil {
			return nil, fmt.Errorf("POWERCONTEXT_AUTH_TOKENS: %v", err)
		}
		specs = append(specs, more...)
	}
	set, err := auth.NewSet(specs)
	if err != nil {
		if c.AuthToken != "" && strings.HasPrefix(err.Error(), fmt.Sprintf("token %q:", auth.DefaultAdminName)) {
			return nil, fmt.Errorf("POWERCONTEXT_AUTH_TOKEN or a token named %q: %v", auth.DefaultAdminName, err)
		}
		return nil, fmt.Errorf("auth tokens: %v", err)
	}
	return set, nil
}

func errorWithoutPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// TrustedProxyPrefixes parses POWERCONTEXT_HTTP_TRUSTED_PROXIES.
func (c *Config) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(c.TrustedProxies, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("POWERCONTEXT_HTTP_TRUSTED_PROXIES: %q is not an IP address or CIDR range", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// TLSConfig loads the certificate when TLS is configured (nil when it is not).
func (c *Config) TLSConfig() (*tls.Config, error) {
	switch {
	case c.TLSCertFile == "" && c.TLSKeyFile == "":
		return nil, nil
	case c.TLSCertFile == "" || c.TLSKeyFile == "":
		return nil, fmt.Errorf("TLS needs both POWERCONTEXT_TLS_CERT_FILE and POWERCONTEXT_TLS_KEY_FILE")
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("POWERCONTEXT_TLS_CERT_FILE/POWERCONTEXT_TLS_KEY_FILE: cannot load the key pair: %v", errorWithoutPath(err))
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// checkAuth refuses bad tokens and a non-loopback listen address without any token.
func (c *Config) checkAuth() error {
	set, err := c.Principals()
	if err != nil {
		return refuse("%v", err)
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil || port == "" {
		return refuse("listen address %q must be host:port", c.Listen)
	}
	if !set.Empty() || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return refuse("listen address %q is not loopback: set POWERCONTEXT_AUTH_TOKEN (or POWERCONTEXT_AUTH_TOKENS_FILE) to serve it", c.Listen)
	}
	return nil
}

// validateEdge checks the HTTP edge settings (docs/security.md#limits).
func (c *Config) validateEdge() error {
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"POWERCONTEXT_HTTP_READ_HEADER_TIMEOUT_SECONDS", c.HTTPReadHeaderTimeoutSeconds},
		{"POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS", c.HTTPReadTimeoutSeconds},
		{"POWERCONTEXT_HTTP_WRITE_TIMEOUT_SECONDS", c.HTTPWriteTimeoutSeconds},
		{"POWERCONTEXT_HTTP_IDLE_TIMEOUT_SECONDS", c.HTTPIdleTimeoutSeconds},
		{"POWERCONTEXT_MCP_SESSION_IDLE_SECONDS", c.MCPSessionIdleSeconds},
		{"POWERCONTEXT_MCP_STREAM_IDLE_SECONDS", c.MCPStreamIdleSeconds},
		{"POWERCONTEXT_UI_SESSION_TTL_SECONDS", c.UISessionTTLSeconds},
	} {
		if p.v <= 0 {
			return refuse("%s must be > 0", p.name)
		}
	}
	switch {
	case c.HTTPReadHeaderTimeoutSeconds > c.HTTPReadTimeoutSeconds:
		return refuse("POWERCONTEXT_HTTP_READ_HEADER_TIMEOUT_SECONDS (%gs) must be at most POWERCONTEXT_HTTP_READ_TIMEOUT_SECONDS (%gs)",
			c.HTTPReadHeaderTimeoutSeconds, c.HTTPReadTimeoutSeconds)
	case c.HTTPWriteTimeoutSeconds < c.FlushMaxWaitSeconds+flushAnswerMarginSeconds:
		return refuse("POWERCONTEXT_HTTP_WRITE_TIMEOUT_SECONDS (%gs) must be at least the flush max wait (%gs) plus %d s, so the longest flush wait can still answer",
			c.HTTPWriteTimeoutSeconds, c.FlushMaxWaitSeconds, flushAnswerMarginSeconds)
	case c.HTTPMaxConnections < 1:
		return refuse("POWERCONTEXT_HTTP_MAX_CONNECTIONS must be >= 1")
	case c.HTTPMaxListBytes < minListBytes:
		return refuse("POWERCONTEXT_HTTP_MAX_LIST_BYTES must be >= %d (one Source may be 64 KiB)", minListBytes)
	case c.HTTPMaxImportBytes < minImportBytes || c.HTTPMaxImportBytes > maxImportBytes:
		return refuse("POWERCONTEXT_HTTP_MAX_IMPORT_BYTES must be between %d (1 MiB) and %d (2 GiB): an import is held in memory while it is verified", minImportBytes, maxImportBytes)
	case c.HTTPImportsAtOnce < 1 || c.HTTPImportsAtOnce > maxImportsAtOnce:
		return refuse("POWERCONTEXT_HTTP_IMPORTS_AT_ONCE must be between 1 and %d: each import holds its body in memory while it is verified", maxImportsAtOnce)
	case c.HTTPUnauthenticatedPerMinute < 0:
		return refuse("POWERCONTEXT_HTTP_UNAUTHENTICATED_PER_MINUTE must be >= 0 (0 = off)")
	case c.MCPMaxSessions < 1:
		return refuse("POWERCONTEXT_MCP_MAX_SESSIONS must be >= 1")
	case c.MCPMaxSessionsPerPrincipal < 1 || c.MCPMaxStreams < 1 || c.MCPMaxStreamsPerPrincipal < 1:
		return refuse("POWERCONTEXT_MCP_MAX_SESSIONS_PER_PRINCIPAL, POWERCONTEXT_MCP_MAX_STREAMS and POWERCONTEXT_MCP_MAX_STREAMS_PER_PRINCIPAL must be >= 1")
	}
	if _, err := c.TrustedProxyPrefixes(); err != nil {
		return refuse("%v", err)
	}
	if _, err := c.TLSConfig(); err != nil {
		return refuse("%v", err)
	}
	return c.validateConns()
}

const (
	// flushAnswerMarginSeconds is the least time the write timeout leaves a flush that waited the longest.
	flushAnswerMarginSeconds = 5
	minListBytes             = 64 << 10
	// The bounds of POWERCONTEXT_HTTP_MAX_IMPORT_BYTES: not below the ordinary body limit, and not beyond what one
	// process should hold in memory for one request.
	minImportBytes = 1 << 20
	maxImportBytes = 2 << 30
	// maxImportsAtOnce bounds POWERCONTEXT_HTTP_IMPORTS_AT_ONCE: at the largest body cap, 64 imports already ask
	// for 128 GiB.
	maxImportsAtOnce = 64
)
