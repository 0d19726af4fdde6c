package app

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/rs/zerolog"
	"golang.org/x/net/netutil"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/internal/connstate"
)

// maxHeaderBytes caps a request's header block (net/http's default is 1 MiB; bearer tokens, cookies and ids fit
// in far less).
const maxHeaderBytes = 64 << 10

// newHTTPServer is the API's net/http server with the edge's timeouts (docs/security.md#limits): the read timeout
// bounds a whole request (a trickled body cannot hold a connection), the write timeout bounds the answer from the
// end of the headers (a client that never reads cannot pin a page in memory; Validate keeps it above the longest
// flush wait), the idle timeout closes quiet keep-alive connections.
func newHTTPServer(cfg Config, h http.Handler, log zerolog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: Seconds(cfg.HTTPReadHeaderTimeoutSeconds),
		ReadTimeout:       Seconds(cfg.HTTPReadTimeoutSeconds),
		WriteTimeout:      Seconds(cfg.HTTPWriteTimeoutSeconds),
		IdleTimeout:       Seconds(cfg.HTTPIdleTimeoutSeconds),
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          HTTPErrorLog(log),
	}
}

// listen binds the API address and caps the connections served at once: beyond the cap a new connection waits in
// the kernel's accept queue until one ends (the timeouts above make sure they do), so a flood of idle
// connections cannot exhaust the process's file descriptors, which the database pool needs too. Below that, one
// client address (an IPv6 /64) holds at most MaxConnectionsPerAddress connections: a further one from it is closed
// at accept, so one address cannot take the whole cap from everyone else. Trusted proxies are exempt (they carry
// many clients).
func listen(cfg Config, trusted []netip.Prefix) (net.Listener, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	per := &connstate.PerAddress{Listener: ln, Max: cfg.MaxConnectionsPerAddress(), Exempt: func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}}
	return netutil.LimitListener(per, cfg.HTTPMaxConnections), nil
}

// trackConnections closes idle connections no request has authenticated on after the anonymous idle timeout
// (only with tokens configured; without them every connection is alike).
func trackConnections(cfg Config, srv *http.Server) {
	t := &connstate.Tracker{AnonymousIdle: Seconds(cfg.HTTPAnonymousIdleTimeoutSeconds)}
	srv.ConnContext, srv.ConnState = t.ConnContext, t.ConnState
}

// applyEdge sets the HTTP layer's principals, proxies and limits from cfg (docs/security.md).
func applyEdge(cfg Config, d *handlers.Deps) error {
	principals, err := cfg.Principals()
	if err != nil {
		return err
	}
	proxies, err := cfg.TrustedProxyPrefixes()
	if err != nil {
		return err
	}
	d.Principals, d.TrustedProxies = principals, proxies
	if err := applyGuard(cfg, d); err != nil {
		return err
	}
	d.MaxListBytes = cfg.HTTPMaxListBytes
	d.ImportBodyLimit, d.ImportsAtOnce = int64(cfg.HTTPMaxImportBytes), cfg.HTTPImportsAtOnce
	if d.UnauthenticatedPerMinute = cfg.HTTPUnauthenticatedPerMinute; d.UnauthenticatedPerMinute == 0 {
		d.UnauthenticatedPerMinute = -1 // off
	}
	// Always present: a principal's own rate limit applies even with the server-wide limit off.
	d.RateLimiter = coordinator.NewRateLimiter(d.Store)
	d.RateLimit = handlers.RateLimit{Enabled: cfg.RateLimitEnabled, Requests: cfg.RateLimitRequests,
		Window: Seconds(cfg.RateLimitWindowSeconds)}
	return nil
}
