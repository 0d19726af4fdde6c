package handlers

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
)

func TestGetOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("s", "The cache is warmed at boot.", nil)
	item := e.enqueueMemory("s")

	r := e.get("/v1/operations/" + item.WorkID)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, item.WorkID, m["operation_id"])
	require.Equal(t, "memory_flush", m["kind"])
	require.Equal(t, "s", m["scope_id"])
	require.Equal(t, "queued", m["status"])
	require.Equal(t, float64(0), m["attempt_count"])
	require.Equal(t, float64(item.StateVersion), m["state_version"])
	for _, k := range []string{"created_at", "updated_at", "available_at"} {
		require.Regexp(t, timeRE, m[k], k)
	}
	require.Nil(t, m["completed_at"])
	require.Nil(t, m["result"])
	require.Nil(t, m["error"])
	require.Len(t, m, 12)

	require.Equal(t, 1, e.step(nil))
	m = e.get("/v1/operations/" + item.WorkID).json(t)
	require.Equal(t, "succeeded", m["status"])
	require.Equal(t, float64(1), m["attempt_count"])
	require.Regexp(t, timeRE, m["completed_at"])
	require.Equal(t, map[string]any{"type": "memory_flush", "previous_cursor": float64(0), "current_cursor": float64(1),
		"high_watermark": float64(1), "processed_source_count": float64(1), "memory": map[string]any{"revision": float64(1)},
		"embeddings": map[string]any{"model": provider.LocalEmbeddingModel, "computed": float64(1), "reused": float64(0), "missing": float64(0)}},
		m["result"], "the test worker embeds entries with the local embedder")

	// Experience incubation is public too, with its own result.
	e.capture("s", "Never deploy on Fridays.", map[string]any{"kind": "task-outcome"})
	inc := e.enqueueExperience("s")
	require.Equal(t, 1, e.step(nil))
	m = e.get("/v1/operations/" + inc.WorkID).json(t)
	require.Equal(t, "experience_incubation", m["kind"])
	res := m["result"].(map[string]any)
	require.Equal(t, "experience_incubation", res["type"])
	require.Contains(t, res, "candidate_count")

	// Failed: error {category, code}.
	e.capture("f", "x is y.", nil)
	failed := e.enqueueMemory("f")
	require.Equal(t, 1, e.step(poison))
	m = e.get("/v1/operations/" + failed.WorkID).json(t)
	require.Equal(t, "failed", m["status"])
	require.Equal(t, map[string]any{"category": "payload", "code": "invalid_payload"}, m["error"])

	// Unknown operations are not found; maintenance is a system operation, shown (here there are no principals).
	maint := e.enqueueMaintenance()
	for _, id := range []string{uuid.NewString(), "nope", url.PathEscape("ü")} {
		e.get("/v1/operations/"+id).requireError(t, http.StatusNotFound, CodeOperationNotFound)
	}
	m = e.get("/v1/operations/" + maint.WorkID).json(t)
	require.Equal(t, "maintenance", m["kind"])
	require.Equal(t, "powercontext:maintenance", m["scope_id"])
}

func TestListOperations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []string // creation order
	for i := range 5 {
		scope := fmt.Sprintf("s%d", i)
		e.capture(scope, "The queue is durable.", map[string]any{"kind": "task-outcome"})
		if i%2 == 0 {
			ids = append(ids, e.enqueueMemory(scope).WorkID)
		} else {
			ids = append(ids, e.enqueueExperience(scope).WorkID)
		}
	}
	maint := e.enqueueMaintenance()

	r := e.get("/v1/operations")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Nil(t, m["next_cursor"])
	items := m["items"].([]any)
	require.Len(t, items, 6) // maintenance is listed too (no principals: everyone is an admin)
	listed := map[string]bool{}
	for _, it := range items {
		listed[it.(map[string]any)["operation_id"].(string)] = true
	}
	require.True(t, listed[maint.WorkID])
	m = e.get("/v1/operations?kind=maintenance").json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Equal(t, "maintenance", m["items"].([]any)[0].(map[string]any)["kind"])
	ids = append(ids, maint.WorkID)

	// Page through with limit=2: newest first, every item once.
	var seen, keys []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 6)
		target := "/v1/operations?limit=2"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		m := e.get(target).json(t)
		for _, it := range m["items"].([]any) {
			rec := it.(map[string]any)
			seen = append(seen, rec["operation_id"].(string))
			keys = append(keys, rec["created_at"].(string)+"/"+rec["operation_id"].(string))
		}
		next, _ := m["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, seen, 6)
	require.ElementsMatch(t, ids, seen)
	// Newest first: (created_at, work_id) strictly descending (the fixed-width times sort as text).
	for i := 1; i < len(keys); i++ {
		require.Greater(t, keys[i-1], keys[i])
	}

	// Filters.
	m = e.get("/v1/operations?kind=memory_flush").json(t)
	require.Len(t, m["items"].([]any), 3)
	m = e.get("/v1/operations?kind=experience_incubation&scope_id=s1").json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Equal(t, ids[1], m["items"].([]any)[0].(map[string]any)["operation_id"])
	m = e.get("/v1/operations?status=succeeded").json(t)
	require.Empty(t, m["items"])
	m = e.get("/v1/operations?status=queued&scope_id=s0").json(t)
	require.Len(t, m["items"].([]any), 1)

	// Invalid queries are 422 with the field.
	badCursors := []string{"!!!", "bm90LWEtY3Vyc29y", base64.RawURLEncoding.EncodeToString([]byte("123:not-a-uuid")),
		base64.RawURLEncoding.EncodeToString([]byte("x:" + uuid.NewString())),
		base64.RawURLEncoding.EncodeToString([]byte("-5:" + uuid.NewString())), "%FF"}
	for _, tc := range []struct{ q, field string }{
		{"kind=powercontext.maintenance.operations", "kind"},
		{"kind=powercontext.memory.source-window", "kind"},
		{"kind=bogus", "kind"},
		{"status=done", "status"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=ten", "limit"},
		{"scope_id=%FF", "scope_id"},
		{"scope_id=" + strings.Repeat("s", 257), "scope_id"},
	} {
		d := e.get("/v1/operations?"+tc.q).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.q)
	}
	for _, c := range badCursors {
		d := e.get("/v1/operations?cursor="+c).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, "cursor", d["field"], c)
	}
	require.Len(t, e.get("/v1/operations?limit=100").json(t)["items"].([]any), 6)
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	w := db.WorkItem{WorkID: uuid.NewString(), CreatedAt: mustTime("2026-12-02T13:00:00.123456Z")}
	at, id, ok := coordinator.DecodeListCursor(coordinator.EncodeListCursor(w))
	require.True(t, ok)
	require.Equal(t, w.WorkID, id)
	require.True(t, at.Equal(w.CreatedAt))
}

func TestCancelAndRetryOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("s", "x is y.", nil)
	item := e.enqueueMemory("s")
	v := item.StateVersion

	// Stale version: 409 with the actual state.
	r := e.post("/v1/operations/"+item.WorkID+"/cancel", mustJSON(map[string]any{"expected_version": v + 1}))
	d := r.requireError(t, http.StatusConflict, CodeOperationConflict)
	require.Equal(t, map[string]any{"operation_id": item.WorkID, "status": "queued", "actual_version": float64(v)}, d)

	// Retry of a queued item is an illegal transition.
	r = e.post("/v1/operations/"+item.WorkID+"/retry", mustJSON(map[string]any{"expected_version": v}))
	r.requireError(t, http.StatusConflict, CodeOperationConflict)

	r = e.post("/v1/operations/"+item.WorkID+"/cancel", mustJSON(map[string]any{"expected_version": v}))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, "cancelled", m["status"])
	require.Equal(t, float64(v+1), m["state_version"])
	require.Regexp(t, timeRE, m["completed_at"])

	// Cancelling a cancelled item conflicts.
	r = e.post("/v1/operations/"+item.WorkID+"/cancel", mustJSON(map[string]any{"expected_version": v + 1}))
	d = r.requireError(t, http.StatusConflict, CodeOperationConflict)
	require.Equal(t, "cancelled", d["status"])

	// Retry of a failed item queues it again; then cancel of a running one is cancelling.
	failed := e.enqueueMemory("s")
	require.Equal(t, 1, e.step(poison))
	failed = e.item(failed.WorkID)
	require.Equal(t, db.StatusFailed, failed.Status)
	r = e.post("/v1/operations/"+failed.WorkID+"/retry", mustJSON(map[string]any{"expected_version": failed.StateVersion}))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m = r.json(t)
	require.Equal(t, "queued", m["status"])
	require.Nil(t, m["error"])

	claimed, err := e.ledger.Claim(context.Background(), coordinator.ClaimRequest{Owner: testOwner,
		Supported: coordinator.Supported{memory.Kind: {Min: 1, Max: 1}}, Slots: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed.Claims, 1)
	running := e.item(failed.WorkID)
	require.Equal(t, db.StatusRunning, running.Status)
	r = e.post("/v1/operations/"+failed.WorkID+"/cancel", mustJSON(map[string]any{"expected_version": running.StateVersion}))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "cancelling", r.json(t)["status"])

	// Unknown and malformed operations: 404. An admin may cancel a maintenance run like any operation.
	for _, id := range []string{uuid.NewString(), "nope"} {
		for _, op := range []string{"cancel", "retry"} {
			e.post("/v1/operations/"+id+"/"+op, `{"expected_version":1}`).requireError(t, http.StatusNotFound, CodeOperationNotFound)
		}
	}
	maint := e.enqueueMaintenance()
	r = e.post("/v1/operations/"+maint.WorkID+"/cancel", `{"expected_version":1}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, db.StatusCancelled, e.item(maint.WorkID).Status)

	// Invalid bodies.
	for _, body := range []string{`{}`, `{"expected_version":0}`, `{"expected_version":-1}`, `{"expected_version":"1"}`,
		`{"expected_version":1.5}`, `{"expected_version":null}`, `{"expected_version":1e40}`} {
		d := e.post("/v1/operations/"+item.WorkID+"/cancel", body).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, "expected_version", d["field"], body)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestMaintenanceIsShownToAdminsOnly: the system kind is listed and readable for an admin; an agent — even one
// allowed every scope — neither sees it listed nor reads it (404 as for any operation it may not see).
func TestMaintenanceIsShownToAdminsOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.Principals = principals(t) })
	maint := e.enqueueMaintenance()
	admin, other := authz(adminTok), authz(otherTok)

	r := e.do(http.MethodGet, "/v1/operations/"+maint.WorkID, nil, admin)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "maintenance", r.json(t)["kind"])
	items := e.do(http.MethodGet, "/v1/operations?kind=maintenance", nil, admin).json(t)["items"].([]any)
	require.Len(t, items, 1)

	e.do(http.MethodGet, "/v1/operations/"+maint.WorkID, nil, other).requireError(t, http.StatusNotFound, CodeOperationNotFound)
	require.Empty(t, e.do(http.MethodGet, "/v1/operations", nil, other).json(t)["items"])
	require.Empty(t, e.do(http.MethodGet, "/v1/operations?kind=maintenance", nil, other).json(t)["items"])
}

// TestSkipOperation: an admin skips a failed window over HTTP (the lane moves on); an agent may not; a stale
// version, a non-failed operation and a maintenance run are 409.
func TestSkipOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.Principals = principals(t) })
	admin, other := withJSON(authz(adminTok)), withJSON(authz(otherTok))
	e.captureDirect("team-a/x", "The API lives in Go.")
	op := e.enqueueMemory("team-a/x")
	body := func(v int64) *strings.Reader { return strings.NewReader(fmt.Sprintf(`{"expected_version":%d}`, v)) }

	e.do(http.MethodPost, "/v1/operations/"+op.WorkID+"/skip", body(op.StateVersion), admin).
		requireError(t, http.StatusConflict, CodeOperationConflict) // queued, not failed
	require.Equal(t, 1, e.step(poison))
	failed := e.item(op.WorkID)
	require.Equal(t, db.StatusFailed, failed.Status)

	e.do(http.MethodPost, "/v1/operations/"+op.WorkID+"/skip", body(failed.StateVersion), other).
		requireError(t, http.StatusForbidden, CodeForbidden)
	e.do(http.MethodPost, "/v1/operations/"+op.WorkID+"/skip", body(failed.StateVersion-1), admin).
		requireError(t, http.StatusConflict, CodeOperationConflict)
	r := e.do(http.MethodPost, "/v1/operations/"+op.WorkID+"/skip", body(failed.StateVersion), admin)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	rec := r.json(t)
	require.Equal(t, "succeeded", rec["status"])
	require.Equal(t, float64(1), rec["result"].(map[string]any)["skipped_source_count"])
	require.Equal(t, map[string]any{"category": "payload", "code": "invalid_payload"}, rec["error"], "the failure is kept")

	maint := e.enqueueMaintenance()
	d := e.do(http.MethodPost, "/v1/operations/"+maint.WorkID+"/skip", body(1), admin).
		requireError(t, http.StatusConflict, CodeOperationConflict)
	require.Equal(t, "not_a_window", d["reason"])
}
