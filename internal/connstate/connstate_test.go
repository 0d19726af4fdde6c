package connstate

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddressKey: IPv4 (and IPv4-mapped IPv6) peers count per address, IPv6 peers per /64.
func TestAddressKey(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000":          "127.0.0.1",
		"[::ffff:10.0.0.7]:5000":  "10.0.0.7",
		"[2001:db8:1:2::5]:443":   "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::]:443": "2001:db8:1:2::/64",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		require.NoError(t, err)
		_, key := AddressKey(tcp)
		require.Equal(t, want, key, addr)
	}
}

// TestMarkAuthenticated: the mark sticks to the connection's context; outside a tracked connection it is a no-op.
func TestMarkAuthenticated(t *testing.T) {
	MarkAuthenticated(context.Background())
	require.False(t, Authenticated(context.Background()))
	var tr Tracker
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx := tr.ConnContext(context.Background(), a)
	require.False(t, Authenticated(ctx))
	MarkAuthenticated(context.WithValue(ctx, struct{ k int }{1}, "derived request context"))
	require.True(t, Authenticated(ctx))
	require.Equal(t, 1, tr.Len())
}
