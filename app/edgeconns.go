package app

// Per-connection limits of the HTTP edge (docs/security.md#limits): a cap per client address below the global
// connection cap, and a short idle limit for connections no request has authenticated on.

// DefaultAnonymousIdleTimeoutSeconds is the default idle limit of an unauthenticated connection.
const DefaultAnonymousIdleTimeoutSeconds = 5

func (c *Config) connSettings() []setting {
	return []setting{
		{"http-max-connections-per-address", "POWERCONTEXT_HTTP_MAX_CONNECTIONS_PER_ADDRESS", "open connections one client address (IPv6: /64) holds at once; more are closed at accept (0 = a quarter of the global cap; trusted proxies are exempt)", &c.HTTPMaxConnectionsPerAddress},
		{"http-anonymous-idle-timeout-seconds", "POWERCONTEXT_HTTP_ANONYMOUS_IDLE_TIMEOUT_SECONDS", "idle time before a connection no request has authenticated on is closed (with tokens configured)", &c.HTTPAnonymousIdleTimeoutSeconds},
	}
}

// MaxConnectionsPerAddress is the effective per-address cap: the setting, or a quarter of the global cap.
func (c *Config) MaxConnectionsPerAddress() int {
	if c.HTTPMaxConnectionsPerAddress > 0 {
		return c.HTTPMaxConnectionsPerAddress
	}
	return max(1, c.HTTPMaxConnections/4)
}

// TLSEnabled reports whether the API is served over HTTPS.
func (c *Config) TLSEnabled() bool { return c.TLSCertFile != "" || c.TLSKeyFile != "" }

func (c *Config) validateConns() error {
	switch {
	case c.HTTPMaxConnectionsPerAddress < 0:
		return refuse("POWERCONTEXT_HTTP_MAX_CONNECTIONS_PER_ADDRESS must be >= 0 (0 = a quarter of POWERCONTEXT_HTTP_MAX_CONNECTIONS)")
	case c.HTTPMaxConnectionsPerAddress > c.HTTPMaxConnections:
		return refuse("POWERCONTEXT_HTTP_MAX_CONNECTIONS_PER_ADDRESS (%d) must be at most POWERCONTEXT_HTTP_MAX_CONNECTIONS (%d)",
			c.HTTPMaxConnectionsPerAddress, c.HTTPMaxConnections)
	case c.HTTPAnonymousIdleTimeoutSeconds <= 0:
		return refuse("POWERCONTEXT_HTTP_ANONYMOUS_IDLE_TIMEOUT_SECONDS must be > 0")
	}
	return nil
}
