//go:build linux

package e2e

import (
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// dbProxy is a TCP relay between one process and the database server. partition stalls every byte in both
// directions for a while (nothing is lost or reset, as in a network partition that heals): the process's database
// calls hang, its leases run out on database time, and whatever it sends meanwhile arrives after the heal.
type dbProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	until time.Time
	conns map[net.Conn]struct{}
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("db proxy: %v", err)
	}
	p := &dbProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *dbProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// rewrite returns the database URL raw with its host:port replaced by the proxy's.
func (p *dbProxy) rewrite(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("db proxy: %v", err)
	}
	u.Host = "127.0.0.1:" + strconv.Itoa(p.port())
	return u.String()
}

// partition stalls the relay for d (extending a partition in progress).
func (p *dbProxy) partition(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := time.Now().Add(d); until.After(p.until) {
		p.until = until
	}
}

// heal ends a partition now.
func (p *dbProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until = time.Time{}
}

func (p *dbProxy) waitHealed() {
	for {
		p.mu.Lock()
		d := time.Until(p.until)
		p.mu.Unlock()
		if d <= 0 {
			return
		}
		time.Sleep(min(d, 20*time.Millisecond))
	}
}

func (p *dbProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *dbProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *dbProxy) relay(client net.Conn) {
	p.waitHealed()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.track(client, true)
	p.track(server, true)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, rerr := src.Read(buf)
			if n > 0 {
				p.waitHealed()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if rerr != nil {
				break
			}
		}
		_ = dst.Close()
		_ = src.Close()
		p.track(dst, false)
		p.track(src, false)
	}
	go pipe(server, client)
	pipe(client, server)
}

func (p *dbProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until = time.Time{}
	for c := range p.conns {
		_ = c.Close()
	}
}
