//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// load captures Sources into many scopes through every API replica and keeps calling flush (async and waiting) on
// them. Captures carry client-chosen source ids so a request lost to a killed API can be retried on the other
// replica without creating a second Source.
type load struct {
	apis   []*proc
	scopes []string
	client *http.Client

	mu       sync.Mutex
	next     map[string]int             // next source number per scope
	acked    map[string]map[string]bool // source ids the API confirmed (200/201) per scope
	tried    map[string]map[string]bool // source ids ever sent per scope
	statuses map[string]int             // "capture 201", "flush 202", "flush 409 operation_blocked", …

	captures, flushes, connErrors, serverErrors atomic.Int64
	rec                                         *apiRecorder // every answer with its timing (database round)
	hist                                        *history     // every client-visible operation (history_test.go)
}

func newLoad(apis []*proc, scopes []string) *load {
	return &load{apis: apis, scopes: scopes, client: &http.Client{Timeout: 15 * time.Second},
		next: map[string]int{}, acked: map[string]map[string]bool{}, tried: map[string]map[string]bool{}, statuses: map[string]int{},
		hist: &history{}}
}

func (l *load) count(key string) {
	l.mu.Lock()
	l.statuses[key]++
	l.mu.Unlock()
}

// run starts n load goroutines until ctx is done and returns a func that waits for them. Each is one client of
// the history: it captures, flushes, reads the operation of its last flush answered 202 and reads the latest Memory
// revision, one request at a time.
func (l *load) run(ctx context.Context, n int) (wait func()) {
	var wg sync.WaitGroup
	for client := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			type opRef struct {
				id, scope string
				due       time.Time
				reads     int
			}
			var pending []opRef // operations of flushes answered 202, each read (up to 3 times) until it is finished
			for ctx.Err() == nil {
				var keep []opRef
				for _, p := range pending {
					switch {
					case time.Now().Before(p.due):
						keep = append(keep, p)
					case !l.readOperation(ctx, client, p.scope, p.id) && p.reads < 2:
						p.reads++
						p.due = time.Now().Add(time.Second)
						keep = append(keep, p)
					}
				}
				pending = keep
				scope := l.scopes[rand.IntN(len(l.scopes))]
				// Now and then only a flush, so some find nothing pending (an idle answer must then cover every
				// Source captured before it).
				captures := 1 + rand.IntN(4)
				if rand.IntN(4) == 0 {
					captures = 0
				}
				for range captures {
					l.capture(ctx, client, scope)
				}
				if rand.IntN(3) < 2 {
					if op := l.flush(ctx, client, scope, rand.IntN(2) == 0); op != "" && len(pending) < 4 {
						pending = append(pending, opRef{id: op, scope: scope, due: time.Now().Add(500 * time.Millisecond)})
					}
				}
				if rand.IntN(3) == 0 {
					l.readRevision(ctx, client, scope)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(20+rand.IntN(60)) * time.Millisecond):
				}
			}
		}()
	}
	return wg.Wait
}

// post sends body to path on a random API replica, moving to the other replicas on connection errors and 5xx
// (a killed or restarting API). It returns the status and body of the first answer below 500.
func (l *load) post(ctx context.Context, path string, body []byte, header http.Header) (int, []byte, bool) {
	return l.send(ctx, http.MethodPost, path, body, header)
}

// send is post for any method (a GET has no body).
func (l *load) send(ctx context.Context, method, path string, body []byte, header http.Header) (int, []byte, bool) {
	start := rand.IntN(len(l.apis))
	for try := range 8 {
		api := l.apis[(start+try)%len(l.apis)]
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, api.baseURL()+path, rd)
		if err != nil {
			return 0, nil, false
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		sent := time.Now()
		resp, err := l.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return 0, nil, false
			}
			l.rec.add(apiSample{path: path, start: sent, end: time.Now(), err: err})
			l.connErrors.Add(1)
			time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		l.rec.add(apiSample{path: path, start: sent, end: time.Now(), status: resp.StatusCode, body: b})
		if resp.StatusCode >= 500 {
			l.serverErrors.Add(1)
			l.count(fmt.Sprintf("%s %d %s", path, resp.StatusCode, errorCode(b)))
			time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
			continue
		}
		return resp.StatusCode, b, true
	}
	return 0, nil, false
}

func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

// capture sends one Source with a new source id (retried on the other replicas under the same id) and records it in
// the history: with its position when answered, else as unknown (the checks look it up in the database).
func (l *load) capture(ctx context.Context, client int, scope string) {
	l.mu.Lock()
	l.next[scope]++
	n := l.next[scope]
	id := fmt.Sprintf("src-%06d", n)
	if l.tried[scope] == nil {
		l.tried[scope], l.acked[scope] = map[string]bool{}, map[string]bool{}
	}
	l.tried[scope][id] = true
	l.mu.Unlock()
	body, _ := json.Marshal(map[string]any{
		"scope_id": scope, "source_id": id, "source_type": "message",
		"content":  fmt.Sprintf("Source %d of %s: the team decided step %d works.", n, scope, n),
		"metadata": map[string]any{"kind": "task-outcome", "n": n},
	})
	call := time.Now()
	status, resp, ok := l.post(ctx, "/v1/sources", body, nil)
	op := histOp{Kind: hCapture, Scope: scope, Client: client, Call: call, Return: time.Now(), Note: id}
	if ok && (status == http.StatusCreated || status == http.StatusOK) {
		var r struct {
			Position int64 `json:"journal_position"`
		}
		_ = json.Unmarshal(resp, &r)
		op.Pos = r.Position
	}
	l.hist.add(op) // Pos 0: no answer with a position; it may still have landed
	if !ok {
		return
	}
	l.captures.Add(1)
	l.count(fmt.Sprintf("capture %d %s", status, errorCode(resp)))
	if status == http.StatusCreated || status == http.StatusOK {
		l.mu.Lock()
		l.acked[scope][id] = true
		l.mu.Unlock()
	}
}

// flush asks for the scope's next Memory window (waiting or async) and records a 200 answer in the history; it
// returns the operation id of a 202 answer.
func (l *load) flush(ctx context.Context, client int, scope string, async bool) (operationID string) {
	h := http.Header{}
	mode := "wait"
	if async {
		h.Set("Prefer", "respond-async")
		mode = "async"
	} else {
		h.Set("Prefer", "wait=5")
	}
	body, _ := json.Marshal(map[string]string{"scope_id": scope})
	call := time.Now()
	status, resp, ok := l.post(ctx, "/v1/memory/flush", body, h)
	if !ok {
		return ""
	}
	ret := time.Now()
	l.flushes.Add(1)
	key := fmt.Sprintf("flush-%s %d", mode, status)
	switch status {
	case http.StatusOK:
		var r flushAnswer
		_ = json.Unmarshal(resp, &r)
		key += " " + r.Status
		op := histOp{Scope: scope, Client: client, Call: call, Return: ret, Note: r.OperationID}
		switch r.Status {
		case "idle":
			op.Kind = hFlushIdle
			l.hist.add(op)
		case "processed":
			op.Kind, op.Prev, op.Cur, op.HW = hFlushProcessed, r.PreviousCursor, r.CurrentCursor, r.HighWatermark
			if r.Memory != nil {
				op.Rev = r.Memory.Revision
			}
			l.hist.add(op)
		}
	case http.StatusAccepted:
		var r struct {
			OperationID string `json:"operation_id"`
		}
		_ = json.Unmarshal(resp, &r)
		operationID = r.OperationID
		key += " " + errorCode(resp)
	default:
		key += " " + errorCode(resp)
	}
	l.count(key)
	return operationID
}

// flushAnswer is a flush's 200 body, and a memory_flush operation's result.
type flushAnswer struct {
	Status         string `json:"status"`
	PreviousCursor int64  `json:"previous_cursor"`
	CurrentCursor  int64  `json:"current_cursor"`
	HighWatermark  int64  `json:"high_watermark"`
	Memory         *struct {
		Revision int64 `json:"revision"`
	} `json:"memory"`
	OperationID string `json:"operation_id"`
}

// readOperation reads a flush's operation and records it in the history when it has succeeded; it tells whether
// the operation is finished (or cannot be read).
func (l *load) readOperation(ctx context.Context, client int, scope, id string) (finished bool) {
	call := time.Now()
	status, resp, ok := l.send(ctx, http.MethodGet, "/v1/operations/"+url.PathEscape(id), nil, nil)
	if !ok {
		return true
	}
	var r struct {
		Kind   string       `json:"kind"`
		Status string       `json:"status"`
		Result *flushAnswer `json:"result"`
	}
	if status != http.StatusOK || json.Unmarshal(resp, &r) != nil {
		l.count(fmt.Sprintf("operation-read %d %s", status, errorCode(resp)))
		return true
	}
	l.count(fmt.Sprintf("operation-read %d %s", status, r.Status))
	switch r.Status {
	case "succeeded":
	case "failed", "cancelled":
		return true
	default:
		return false
	}
	if r.Kind != "memory_flush" || r.Result == nil {
		return true
	}
	op := histOp{Kind: hOperationRead, Scope: scope, Client: client, Call: call, Return: time.Now(), Note: id, Cur: r.Result.CurrentCursor}
	if r.Result.Memory != nil {
		op.Rev = r.Result.Memory.Revision
	}
	l.hist.add(op)
	return true
}

// readRevision reads the scope's latest Memory revision with its window and records it in the history.
func (l *load) readRevision(ctx context.Context, client int, scope string) {
	call := time.Now()
	status, resp, ok := l.send(ctx, http.MethodGet, "/v1/memory/revisions?limit=1&scope_id="+url.QueryEscape(scope), nil, nil)
	if !ok {
		return
	}
	l.count(fmt.Sprintf("revision-read %d %s", status, errorCode(resp)))
	var r struct {
		Items []struct {
			Revision      int64 `json:"revision"`
			WindowThrough int64 `json:"window_through"`
		} `json:"items"`
	}
	if status != http.StatusOK || json.Unmarshal(resp, &r) != nil {
		return
	}
	op := histOp{Kind: hRevisionRead, Scope: scope, Client: client, Call: call, Return: time.Now()}
	if len(r.Items) > 0 {
		op.Rev, op.Through = r.Items[0].Revision, r.Items[0].WindowThrough
	}
	l.hist.add(op)
}

// sourceCounts returns, per scope, how many distinct source ids were acknowledged and how many were ever sent.
func (l *load) sourceCounts() (acked, tried map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	acked, tried = map[string]int{}, map[string]int{}
	for s, ids := range l.acked {
		acked[s] = len(ids)
	}
	for s, ids := range l.tried {
		tried[s] = len(ids)
	}
	return acked, tried
}

func (l *load) statusCounts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.statuses))
	for k, v := range l.statuses {
		out[k] = v
	}
	return out
}
