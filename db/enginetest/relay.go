package enginetest

import (
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/powercontext/powercontext/db"
)

// Relay is a loopback TCP relay in front of a database server. Cut closes every relayed connection and refuses new
// ones, which is what a crashed or unreachable server looks like to the client.
type Relay struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewRelay starts a relay to target (host:port); it is closed when the test ends.
func NewRelay(t testing.TB, target string) *Relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("enginetest: relay: %v", err)
	}
	r := &Relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go r.serve()
	t.Cleanup(r.Cut)
	return r
}

// Addr is the relay's host:port.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Cut drops every relayed connection and refuses new ones.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	_ = r.ln.Close()
	for c := range r.conns {
		_ = c.Close()
	}
}

func (r *Relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		r.mu.Lock()
		if r.cut {
			r.mu.Unlock()
			_ = c.Close()
			_ = s.Close()
			return
		}
		r.conns[c], r.conns[s] = struct{}{}, struct{}{}
		r.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					if _, werr := dst.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			_ = dst.Close()
			_ = src.Close()
		}
		go pipe(s, c)
		go pipe(c, s)
	}
}

// OpenThroughRelay creates a fresh migrated database on engine (PostgreSQL or MySQL) and returns a store whose
// connections go through a Relay, and the relay.
func OpenThroughRelay(t testing.TB, engine db.Engine) (db.Store, *Relay) {
	t.Helper()
	raw := NewDatabase(t, engine)
	u := ParseURL(t, raw)
	migrateDatabase(t, u, OpenStore(t, u))
	parsed, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	relay := NewRelay(t, parsed.Host)
	parsed.Host = relay.Addr()
	return OpenStore(t, ParseURL(t, parsed.String())), relay
}
