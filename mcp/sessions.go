package mcp

import (
	"container/list"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session limits of a stateful server (single_node); docs/security.md#limits.
const (
	// DefaultMaxSessions caps live sessions; each holds a few KiB until closed.
	DefaultMaxSessions = 1000
	// DefaultSessionIdle closes a session after this long without a request.
	DefaultSessionIdle = 30 * time.Minute
)

const headerSessionID = "Mcp-Session-Id"

// sessionCap bounds the sessions of a stateful StreamableHTTPHandler, which itself keeps every session until it
// idles out: it remembers the session ids it has seen answered, in least-recently-used order, and when a new one
// takes the count over max it closes the least recently used live ones through the server (the SDK then answers
// their next request 404, and the client initializes again).
type sessionCap struct {
	next   http.Handler
	server *sdk.Server
	max    int

	mu    sync.Mutex
	order *list.List // of string, most recent first
	byID  map[string]*list.Element
}

func newSessionCap(next http.Handler, server *sdk.Server, max int) *sessionCap {
	return &sessionCap{next: next, server: server, max: max, order: list.New(), byID: map[string]*list.Element{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(headerSessionID); id != "" {
		c.touch(id)
		c.next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			c.forget(id)
		}
		return
	}
	c.next.ServeHTTP(w, r)
	if id := w.Header().Get(headerSessionID); id != "" && r.Method == http.MethodPost {
		c.added(id)
	}
}

func (c *sessionCap) touch(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.order.MoveToFront(el)
	}
}

func (c *sessionCap) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.order.Remove(el)
		delete(c.byID, id)
	}
}

// added records a new session and, over the cap, closes the least recently used ones.
func (c *sessionCap) added(id string) {
	c.mu.Lock()
	if _, ok := c.byID[id]; !ok {
		c.byID[id] = c.order.PushFront(id)
	}
	if c.order.Len() <= c.max {
		c.mu.Unlock()
		return
	}
	// Over the cap: first drop ids whose sessions already ended (idle timeout, DELETE, failed initialize).
	live := map[string]*sdk.ServerSession{}
	for ss := range c.server.Sessions() {
		live[ss.ID()] = ss
	}
	for el := c.order.Back(); el != nil; {
		prev := el.Prev()
		if sid := el.Value.(string); live[sid] == nil {
			c.order.Remove(el)
			delete(c.byID, sid)
		}
		el = prev
	}
	var evict []*sdk.ServerSession
	for c.order.Len() > c.max {
		el := c.order.Back()
		sid := el.Value.(string)
		c.order.Remove(el)
		delete(c.byID, sid)
		evict = append(evict, live[sid])
	}
	c.mu.Unlock()
	for _, ss := range evict { // outside the lock: Close calls back into the SDK's own bookkeeping
		_ = ss.Close()
	}
}
