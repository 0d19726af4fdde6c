package app

import (
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/internal/serverkey"
)

// Guard is the HTTP edge's keys and probe limits (docs/security.md#server-secret, docs/security.md#limits).
type Guard struct {
	// ServerSecret keys the dashboard cookie's MAC and the operation cursors' encryption (HKDF per purpose);
	// empty: derived from the admin tokens.
	ServerSecret string
	// MetricsToken, when set, is required on /metrics as a bearer token.
	MetricsToken string
	// MetricsCacheSeconds is how long one /metrics snapshot is served (0 = computed on every request).
	MetricsCacheSeconds float64
	// HTTPProbesPerMinute is the per-address budget of /metrics and /health/ready (0 = off; loopback exempt).
	HTTPProbesPerMinute int
}

// DefaultGuard returns the guard defaults.
func DefaultGuard() Guard {
	return Guard{MetricsCacheSeconds: 5, HTTPProbesPerMinute: handlers.DefaultProbesPerMinute}
}

func (c *Config) guardSettings() []setting {
	return []setting{
		{"server-secret", "POWERCONTEXT_SERVER_SECRET", "secret (>= 32 characters) the dashboard cookie MAC and the operation cursor keys derive from; default: derived from the admin tokens", &c.ServerSecret},
		{"metrics-token", "POWERCONTEXT_METRICS_TOKEN", "bearer token (>= 32 characters) /metrics requires when set", &c.MetricsToken},
		{"metrics-cache-seconds", "POWERCONTEXT_METRICS_CACHE_SECONDS", "how long one /metrics snapshot is served, whatever the request rate (0 = every request)", &c.MetricsCacheSeconds},
		{"http-probes-per-minute", "POWERCONTEXT_HTTP_PROBES_PER_MINUTE", "/metrics and /health/ready requests per client address and minute; loopback exempt (0 = off)", &c.HTTPProbesPerMinute},
	}
}

// validateGuard checks the guard settings.
func (c *Config) validateGuard() error {
	if c.ServerSecret != "" && len(c.ServerSecret) < serverkey.MinSecretLength {
		return refuse("POWERCONTEXT_SERVER_SECRET must be at least %d characters", serverkey.MinSecretLength)
	}
	switch {
	case c.MetricsToken != "" && len(c.MetricsToken) < serverkey.MinSecretLength:
		return refuse("POWERCONTEXT_METRICS_TOKEN must be at least %d characters", serverkey.MinSecretLength)
	case c.MetricsCacheSeconds < 0:
		return refuse("POWERCONTEXT_METRICS_CACHE_SECONDS must be >= 0 (0 = every request)")
	case c.HTTPProbesPerMinute < 0:
		return refuse("POWERCONTEXT_HTTP_PROBES_PER_MINUTE must be >= 0 (0 = off)")
	}
	return nil
}

// ServerKeys are the keys every API replica configured alike derives alike: from POWERCONTEXT_SERVER_SECRET, else
// from the admin tokens, else (no token: loopback only) random per process.
func (c *Config) ServerKeys() (*serverkey.Keys, error) {
	if c.ServerSecret != "" {
		return serverkey.New([]byte(c.ServerSecret)), nil
	}
	set, err := c.Principals()
	if err != nil {
		return nil, err
	}
	return serverkey.New(set.AdminSecret()), nil
}

// applyGuard sets the HTTP layer's keys and probe limits from cfg.
func applyGuard(cfg Config, d *handlers.Deps) error {
	keys, err := cfg.ServerKeys()
	if err != nil {
		return err
	}
	d.ServerKeys = keys
	d.MetricsToken = cfg.MetricsToken
	if d.MetricsCacheInterval = Seconds(cfg.MetricsCacheSeconds); d.MetricsCacheInterval == 0 {
		d.MetricsCacheInterval = -1 // every request
	}
	if d.ProbesPerMinute = cfg.HTTPProbesPerMinute; d.ProbesPerMinute == 0 {
		d.ProbesPerMinute = -1 // off
	}
	return nil
}
