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
}

func newLoad(apis []*proc, scopes []string) *load {
	return &load{apis: apis, scopes: scopes, client: &http.Client{Timeout: 15 * time.Second},
		next: map[string]int{}, acked: map[string]map[string]bool{}, tried: map[string]map[string]bool{}, statuses: map[string]int{}}
}

func (l *load) count(key string) {
	l.mu.Lock()
	l.statuses[key]++
	l.mu.Unlock()
}

// run starts n load goroutines until ctx is done and returns a func that waits for them.
func (l *load) run(ctx context.Context, n int) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				scope := l.scopes[rand.IntN(len(l.scopes))]
				for range 1 + rand.IntN(4) {
					l.capture(ctx, scope)
				}
				if rand.IntN(3) < 2 {
					l.flush(ctx, scope, rand.IntN(2) == 0)
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
	start := rand.IntN(len(l.apis))
	for try := range 8 {
		api := l.apis[(start+try)%len(l.apis)]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.baseURL()+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, false
		}
		req.Header.Set("Content-Type", "application/json")
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

func (l *load) capture(ctx context.Context, scope string) {
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
	status, resp, ok := l.post(ctx, "/v1/sources", body, nil)
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

func (l *load) flush(ctx context.Context, scope string, async bool) {
	h := http.Header{}
	mode := "wait"
	if async {
		h.Set("Prefer", "respond-async")
		mode = "async"
	} else {
		h.Set("Prefer", "wait=5")
	}
	body, _ := json.Marshal(map[string]string{"scope_id": scope})
	status, resp, ok := l.post(ctx, "/v1/memory/flush", body, h)
	if !ok {
		return
	}
	l.flushes.Add(1)
	key := fmt.Sprintf("flush-%s %d", mode, status)
	if status == http.StatusOK {
		var r struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(resp, &r)
		key += " " + r.Status
	} else {
		key += " " + errorCode(resp)
	}
	l.count(key)
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
