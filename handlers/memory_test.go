package handlers

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func TestFlushIdle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/v1/memory/flush", `{"scope_id":"empty"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, map[string]any{"status": "idle", "previous_cursor": float64(0), "current_cursor": float64(0),
		"high_watermark": float64(0), "processed_source_count": float64(0), "memory": nil, "operation_id": nil}, r.json(t))
}

func TestFlushRespondAsync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("s", "The build uses Go 1.26.", nil)
	for _, prefer := range []string{"respond-async", "wait=0", "Respond-Async, wait=20", "wait=-3"} {
		r := e.post("/v1/memory/flush", `{"scope_id":"s"}`, hdr{"Prefer": prefer})
		require.Equal(t, http.StatusAccepted, r.Code, "prefer %q body: %s", prefer, r.Body)
		m := r.json(t)
		id := m["operation_id"].(string)
		require.Equal(t, "queued", m["status"])
		require.Equal(t, "/v1/operations/"+id, m["status_url"])
		require.Equal(t, "/v1/operations/"+id, r.Header.Get("Location"))
		require.Equal(t, "2", r.Header.Get("Retry-After"))
	}
	// The answers joined one operation (one logical window).
	r := e.get("/v1/operations?scope_id=s")
	require.Len(t, r.json(t)["items"].([]any), 1)
}

func TestFlushProcessedWithinWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flusher.Wake = func() { go e.step(nil) }
	e.capture("s", "The deploy pipeline uses blue-green releases.", nil)
	e.capture("s", "Staging runs on Fridays.", nil)

	r := e.post("/v1/memory/flush", `{"scope_id":"s"}`, hdr{"Prefer": "wait=5"})
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, "processed", m["status"])
	require.Equal(t, float64(0), m["previous_cursor"])
	require.Equal(t, float64(2), m["current_cursor"])
	require.Equal(t, float64(2), m["high_watermark"])
	require.Equal(t, float64(2), m["processed_source_count"])
	require.Equal(t, map[string]any{"revision": float64(1)}, m["memory"])
	id := m["operation_id"].(string)
	require.Equal(t, db.StatusSucceeded, e.item(id).Status)

	// Nothing new: idle, with the committed revision.
	r = e.post("/v1/memory/flush", `{"scope_id":"s"}`)
	m = r.json(t)
	require.Equal(t, "idle", m["status"])
	require.Equal(t, float64(2), m["current_cursor"])
	require.Equal(t, map[string]any{"revision": float64(1)}, m["memory"])
	require.Nil(t, m["operation_id"])

	// GET /v1/memory shows the revision and its entries.
	r = e.get("/v1/memory?scope_id=s")
	require.Equal(t, http.StatusOK, r.Code)
	m = r.json(t)
	require.Equal(t, float64(1), m["revision"])
	require.Regexp(t, timeRE, m["created_at"])
	entries := m["entries"].([]any)
	require.NotEmpty(t, entries)
	entry := entries[0].(map[string]any)
	require.Contains(t, entry, "entry_no")
	require.Contains(t, entry, "content")
	require.IsType(t, []any{}, entry["source_positions"])

	// Search finds matching entries of the current revision.
	r = e.get("/v1/memory/search?scope_id=s&q=BLUE-GREEN&limit=5")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	found := r.json(t)["entries"].([]any)
	require.Len(t, found, 1)
	require.Contains(t, found[0].(map[string]any)["content"], "blue-green")
	require.Greater(t, found[0].(map[string]any)["score"], 0.0)
	require.NotContains(t, entry, "score", "only search entries carry a score")
	r = e.get("/v1/memory/search?scope_id=s&q=nothing-like-this")
	require.Empty(t, r.json(t)["entries"])
}

func TestFlushBlockedFailedCancelled(t *testing.T) {
	t.Parallel()
	t.Run("failed during the wait", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.flusher.Wake = func() { go e.step(poison) }
		e.capture("s", "x is y.", nil)
		r := e.post("/v1/memory/flush", `{"scope_id":"s"}`, hdr{"Prefer": "wait=5"})
		d := r.requireError(t, http.StatusConflict, CodeOperationFailed)
		id := d["operation_id"].(string)
		require.Equal(t, db.StatusFailed, e.item(id).Status)

		// The failed item now holds the window: the next flush is blocked at once.
		e.flusher.Wake = nil
		r = e.post("/v1/memory/flush", `{"scope_id":"s"}`)
		d = r.requireError(t, http.StatusConflict, CodeOperationBlocked)
		require.Equal(t, id, d["operation_id"])
	})
	t.Run("cancelled during the wait", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.flusher.Wake = func() {
			go func() {
				items, err := e.ledger.List(context.Background(), db.WorkItemListParams{Kinds: []string{"powercontext.memory.source-window"}, Limit: 1})
				if err == nil && len(items) == 1 {
					_, _ = e.ledger.Cancel(context.Background(), items[0].WorkID, items[0].StateVersion)
				}
			}()
		}
		e.capture("s", "x is y.", nil)
		r := e.post("/v1/memory/flush", `{"scope_id":"s"}`, hdr{"Prefer": "wait=5"})
		d := r.requireError(t, http.StatusConflict, CodeOperationCancelled)
		require.NotEmpty(t, d["operation_id"])
	})
}

func TestFlushValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, body := range []string{`{}`, `{"scope_id":""}`, `{"scope_id":7}`, `{"scope_id":"\u0000"}`} {
		r := e.post("/v1/memory/flush", body)
		d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, "scope_id", d["field"], body)
	}
}

func TestFlushWaitPreference(t *testing.T) {
	t.Parallel()
	def, max := 10*time.Second, 30*time.Second
	cases := []struct {
		prefer []string
		want   time.Duration
	}{
		{nil, def},
		{[]string{"respond-async"}, 0},
		{[]string{"wait=5"}, 5 * time.Second},
		{[]string{"wait=0.5"}, 500 * time.Millisecond},
		{[]string{`wait="3"`}, 3 * time.Second},
		{[]string{"wait=100"}, max},
		{[]string{"wait=-1"}, 0},
		{[]string{"wait=abc"}, def},
		{[]string{"wait=NaN"}, def},
		{[]string{"wait"}, def},
		{[]string{"handling=lenient, wait=4"}, 4 * time.Second},
		{[]string{"wait=4", "respond-async"}, 0},
		{[]string{"respond-async=1"}, def},
		{[]string{"return=minimal"}, def},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, flushWait(tc.prefer, def, max), "%q", tc.prefer)
	}
}

func TestMemoryReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/memory?scope_id=nothing")
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, map[string]any{"scope_id": "nothing", "revision": nil, "created_at": nil, "evicted": nil, "entries": []any{}}, r.json(t))

	for _, tc := range []struct{ target, field string }{
		{"/v1/memory", "scope_id"},
		{"/v1/memory?scope_id=%FF%FE", "scope_id"},
		{"/v1/memory/search?q=x", "scope_id"},
		{"/v1/memory/search?scope_id=s", "q"},
		{"/v1/memory/search?scope_id=s&q=%FF", "q"},
		{"/v1/memory/search?scope_id=s&q=x&limit=0", "limit"},
		{"/v1/memory/search?scope_id=s&q=x&limit=101", "limit"},
	} {
		r := e.get(tc.target)
		d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.target)
	}
}
