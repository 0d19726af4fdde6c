package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/serverkey"
)

// TestServerSecret: a short POWERCONTEXT_SERVER_SECRET is refused; when set it alone decides the keys, when unset
// the admin tokens do (same tokens, same keys on every replica; another admin token, other keys).
func TestServerSecret(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ServerSecret = strings.Repeat("s", 31)
	require.ErrorContains(t, cfg.Validate(), "POWERCONTEXT_SERVER_SECRET must be at least 32 characters")
	cfg.ServerSecret = strings.Repeat("s", 32)
	require.NoError(t, cfg.Validate())
	for _, bad := range []func(*Config){
		func(c *Config) { c.MetricsToken = "short" },
		func(c *Config) { c.MetricsCacheSeconds = -1 },
		func(c *Config) { c.HTTPProbesPerMinute = -1 },
	} {
		c := DefaultConfig()
		bad(&c)
		require.Error(t, c.Validate())
	}

	key := func(c Config) []byte {
		k, err := c.ServerKeys()
		require.NoError(t, err)
		return k.Derive(serverkey.PurposeSessionCookie, 32)
	}
	withToken := func(secret, token string) Config {
		c := DefaultConfig()
		c.ServerSecret, c.AuthToken = secret, token
		return c
	}
	tokA, tokB, secret := strings.Repeat("a", 32), strings.Repeat("b", 32), strings.Repeat("s", 32)
	require.True(t, bytes.Equal(key(withToken(secret, tokA)), key(withToken(secret, tokB))), "the secret decides")
	require.True(t, bytes.Equal(key(withToken("", tokA)), key(withToken("", tokA))), "same admin token, same key")
	require.False(t, bytes.Equal(key(withToken("", tokA)), key(withToken("", tokB))), "another admin token")
	require.False(t, bytes.Equal(key(withToken(secret, tokA)), key(withToken("", tokA))))
}
