package mcp

import (
	"bytes"
	"container/list"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/powercontext/powercontext/auth"
)

// Session limits of a stateful server (single_node); docs/security.md#limits.
const (
	// DefaultMaxSessions caps live sessions; each holds a few KiB until closed.
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerPrincipal caps the live sessions of one principal.
	DefaultMaxSessionsPerPrincipal = 100
	// DefaultSessionIdle closes a session after this long without a request.
	DefaultSessionIdle = 30 * time.Minute
)

const headerSessionID = "Mcp-Session-Id"

// msgTooManySessions is the refusal of an initialize that would need another principal's session (or a session
// of the caller's that is in use) to be closed.
const msgTooManySessions = "too many MCP sessions are open; close one (DELETE /mcp) or retry after sessions idle out"

// sessionCap bounds the sessions of a stateful StreamableHTTPHandler, which itself keeps every session until it
// idles out. It remembers the sessions it has seen opened, with the principal that opened them, in
// least-recently-used order. An initialize that would take the principal over its own cap, or the server over the
// total cap, first closes the principal's own least recently used session that has no request in flight (the SDK
// then answers that session's next request 404, and its client initializes again). It never closes another
// principal's session: when the caller has none to give up, the initialize is refused with 429
// too_many_sessions.
type sessionCap struct {
	next         http.Handler
	server       *sdk.Server
	max          int
	perPrincipal int

	mu           sync.Mutex
	order        *list.List // of *capEntry, most recent first
	byID         map[string]*list.Element
	owned        map[string]int // tracked sessions by principal key
	pending      map[string]int // initializes in flight by principal key
	pendingTotal int
}

type capEntry struct {
	id, owner string
	busy      int // requests in flight (an open event stream counts)
}

func newSessionCap(next http.Handler, server *sdk.Server, max, perPrincipal int) *sessionCap {
	return &sessionCap{next: next, server: server, max: max, perPrincipal: perPrincipal, order: list.New(),
		byID: map[string]*list.Element{}, owned: map[string]int{}, pending: map[string]int{}}
}

// principalKey names the principal a session or stream is counted against: the token's principal, or "" for
// every client of a server without tokens (loopback only).
func principalKey(r *http.Request) string {
	if p := auth.FromContext(r.Context()); p != nil {
		return "p:" + p.Name
	}
	return ""
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(headerSessionID); id != "" {
		// Only the session's own principal keeps it recent and busy, or ends it (the SDK answers anyone else 403).
		owned := c.begin(id, principalKey(r))
		if owned {
			defer c.end(id)
		}
		c.next.ServeHTTP(w, r)
		if owned && r.Method == http.MethodDelete {
			c.forget(id)
		}
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r)
		return
	}
	if !initializes(r) {
		writeError(w, http.StatusBadRequest, "invalid_request", "this request needs an Mcp-Session-Id header; send initialize first")
		return
	}
	owner := principalKey(r)
	if !c.reserve(owner) {
		writeError(w, http.StatusTooManyRequests, limitCodes["sessions"], msgTooManySessions)
		return
	}
	defer func() { c.added(owner, w.Header().Get(headerSessionID)) }()
	c.next.ServeHTTP(w, r)
}

// begin marks a request of the session's owner in flight and the session most recently used.
func (c *sessionCap) begin(id, owner string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok || el.Value.(*capEntry).owner != owner {
		return false
	}
	el.Value.(*capEntry).busy++
	c.order.MoveToFront(el)
	return true
}

func (c *sessionCap) end(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		el.Value.(*capEntry).busy--
	}
}

func (c *sessionCap) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
}

// remove drops a tracked session (c.mu held).
func (c *sessionCap) remove(el *list.Element) {
	e := el.Value.(*capEntry)
	c.order.Remove(el)
	delete(c.byID, e.id)
	if c.owned[e.owner]--; c.owned[e.owner] <= 0 {
		delete(c.owned, e.owner)
	}
}

// reserve makes room for one more session of owner, closing the owner's least recently used idle sessions as
// needed, and counts it as pending; false when room would need someone else's session.
func (c *sessionCap) reserve(owner string) bool {
	c.mu.Lock()
	full := func() bool {
		return c.owned[owner]+c.pending[owner] >= c.perPrincipal || c.order.Len()+c.pendingTotal >= c.max
	}
	var evict []string
	if full() {
		c.prune()
		for el := c.order.Back(); el != nil && full(); {
			prev := el.Prev()
			if e := el.Value.(*capEntry); e.owner == owner && e.busy == 0 {
				evict = append(evict, e.id)
				c.remove(el)
			}
			el = prev
		}
		if full() {
			c.mu.Unlock()
			return false
		}
	}
	c.pending[owner]++
	c.pendingTotal++
	c.mu.Unlock()
	c.close(evict)
	return true
}

// added ends a reservation, recording the session the initialize opened (none when it failed).
func (c *sessionCap) added(owner, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[owner]--; c.pending[owner] <= 0 {
		delete(c.pending, owner)
	}
	c.pendingTotal--
	if _, ok := c.byID[id]; ok || id == "" {
		return
	}
	c.byID[id] = c.order.PushFront(&capEntry{id: id, owner: owner})
	c.owned[owner]++
}

// prune drops the tracked sessions that already ended (idle timeout, DELETE, failed initialize) (c.mu held).
func (c *sessionCap) prune() {
	live := map[string]bool{}
	for ss := range c.server.Sessions() {
		live[ss.ID()] = true
	}
	for el := c.order.Back(); el != nil; {
		prev := el.Prev()
		if !live[el.Value.(*capEntry).id] {
			c.remove(el)
		}
		el = prev
	}
}

// close closes sessions by id, outside c.mu: Close calls back into the SDK's own bookkeeping.
func (c *sessionCap) close(ids []string) {
	if len(ids) == 0 {
		return
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var sessions []*sdk.ServerSession
	for ss := range c.server.Sessions() {
		if want[ss.ID()] {
			sessions = append(sessions, ss)
		}
	}
	for _, ss := range sessions {
		_ = ss.Close()
	}
}

// initializes reports whether a POST without a session may go to the SDK: an initialize request, or a body that is
// not one JSON-RPC object (the SDK refuses it as malformed). Only initialize may open a session; the SDK would
// answer any other method with HTTP 200 and a JSON-RPC error of code 0. The body is restored for the SDK (its size
// is bounded by the HTTP layer's body limit).
func initializes(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return true
	}
	var msg struct {
		Method *string `json:"method"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &msg) != nil || msg.Method == nil {
		return true
	}
	return *msg.Method == "initialize"
}
