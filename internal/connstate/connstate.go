// Package connstate keeps per-connection state of the HTTP edge (docs/security.md#limits): whether a request on a
// connection has passed authentication, a shorter idle limit for connections that never did, and a cap on the
// connections one client address holds at once.
package connstate

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one connection's state; the request context carries it (Tracker.ConnContext).
type conn struct {
	authenticated atomic.Bool
}

type ctxKey struct{}

// MarkAuthenticated records that a request on ctx's connection passed authentication: from then on the connection
// keeps the server's ordinary idle timeout. A no-op outside a tracked connection.
func MarkAuthenticated(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*conn); ok {
		c.authenticated.Store(true)
	}
}

// Authenticated reports whether a request on ctx's connection passed authentication.
func Authenticated(ctx context.Context) bool {
	c, ok := ctx.Value(ctxKey{}).(*conn)
	return ok && c.authenticated.Load()
}

// Tracker closes connections on which no request has passed authentication once they have been idle (no request
// in progress, or a first request not yet read) for AnonymousIdle. Authenticated connections are left to the
// server's own timeouts. Install it with http.Server.ConnContext and http.Server.ConnState.
type Tracker struct {
	AnonymousIdle time.Duration // 0 = off

	mu    sync.Mutex
	conns map[net.Conn]*tracked
}

type tracked struct {
	state *conn
	timer *time.Timer
	gen   uint64 // bumped at every state change; a timer of an older generation does nothing
}

// ConnContext attaches a fresh connection state to the connection's base context.
func (t *Tracker) ConnContext(ctx context.Context, c net.Conn) context.Context {
	st := &conn{}
	t.mu.Lock()
	if t.conns == nil {
		t.conns = make(map[net.Conn]*tracked)
	}
	t.conns[c] = &tracked{state: st}
	t.mu.Unlock()
	return context.WithValue(ctx, ctxKey{}, st)
}

// ConnState arms the anonymous idle timer when a connection is new or idle and disarms it while a request is
// served.
func (t *Tracker) ConnState(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.conns[c]
	if tr == nil {
		return
	}
	tr.gen++
	if tr.timer != nil {
		tr.timer.Stop()
		tr.timer = nil
	}
	switch s {
	case http.StateNew, http.StateIdle:
		if t.AnonymousIdle <= 0 || tr.state.authenticated.Load() {
			return
		}
		gen := tr.gen
		tr.timer = time.AfterFunc(t.AnonymousIdle, func() {
			t.mu.Lock()
			cur := t.conns[c]
			still := cur == tr && tr.gen == gen
			t.mu.Unlock()
			if still {
				_ = c.Close()
			}
		})
	case http.StateHijacked, http.StateClosed:
		delete(t.conns, c)
	}
}

// Len is the number of connections tracked (tests).
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// AddressKey groups a remote address as the per-address cap counts it: an IPv4 address, or an IPv6 /64 (which one
// host usually controls whole).
func AddressKey(addr net.Addr) (netip.Addr, string) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return netip.Addr{}, addr.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return ip, p.String()
	}
	return ip, ip.String()
}

// PerAddress wraps a listener so that one remote address holds at most Max connections at once: a further
// connection from that address is closed as soon as it is accepted (the address's own connections must end
// first). Exempt addresses (trusted reverse proxies, which carry many clients) are not counted.
type PerAddress struct {
	net.Listener
	Max    int
	Exempt func(netip.Addr) bool

	mu    sync.Mutex
	count map[string]int
}

// Accept returns the next connection whose address is under its cap.
func (l *PerAddress) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip, key := AddressKey(c.RemoteAddr())
		if l.Max <= 0 || (l.Exempt != nil && ip.IsValid() && l.Exempt(ip)) {
			return c, nil
		}
		l.mu.Lock()
		if l.count == nil {
			l.count = make(map[string]int)
		}
		if l.count[key] >= l.Max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.count[key]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(key) }}, nil
	}
}

func (l *PerAddress) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count[key]--; l.count[key] <= 0 {
		delete(l.count, key)
	}
}

// Open is the number of connections key holds (tests).
func (l *PerAddress) Open(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[key]
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
