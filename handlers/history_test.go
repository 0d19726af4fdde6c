package handlers

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

func TestMemoryHistoryRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/memory/diff?scope_id=h")
	r.requireError(t, http.StatusNotFound, CodeRevisionNotFound)
	for i, content := range []string{"Staging uses PostgreSQL 16.", "Alice owns billing.", "Staging uses PostgreSQL 16."} {
		e.capture("h", content, nil)
		e.enqueueMemory("h")
		require.Equal(t, 1, e.step(nil), "flush %d", i)
	}

	r = e.get("/v1/memory/revisions?scope_id=h&limit=2")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	items := m["items"].([]any)
	require.Len(t, items, 2)
	first := items[0].(map[string]any)
	require.Equal(t, float64(3), first["revision"])
	require.Equal(t, float64(2), first["entry_count"])
	require.Equal(t, float64(2), first["window_after"])
	require.Equal(t, float64(3), first["window_through"])
	require.Regexp(t, timeRE, first["created_at"])
	require.NotEmpty(t, first["operation_id"])
	require.Equal(t, "2", m["next_cursor"])
	require.Equal(t, map[string]any{"count": float64(0), "entry_ids": []any{}}, first["evicted"])
	r = e.get("/v1/memory/revisions?scope_id=h&limit=2&cursor=2")
	m = r.json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Nil(t, m["next_cursor"])
	// The operation id is the flush that wrote it.
	r = e.get("/v1/operations/" + first["operation_id"].(string))
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, "memory_flush", r.json(t)["kind"])

	r = e.get("/v1/memory?scope_id=h&revision=1")
	require.Equal(t, http.StatusOK, r.Code)
	m = r.json(t)
	require.Equal(t, float64(1), m["revision"])
	require.Len(t, m["entries"].([]any), 1)
	require.Equal(t, float64(1), m["entries"].([]any)[0].(map[string]any)["entry_id"])
	require.Equal(t, map[string]any{"count": float64(0), "entry_ids": []any{}}, m["evicted"])
	e.get("/v1/memory?scope_id=h&revision=9").requireError(t, http.StatusNotFound, CodeRevisionNotFound)
	e.get("/v1/memory?scope_id=h&revision=0").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)

	// Default diff: the current revision against the one before it (a restated fact cites one more Source).
	r = e.get("/v1/memory/diff?scope_id=h")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m = r.json(t)
	require.Equal(t, float64(2), m["from"])
	require.Equal(t, float64(3), m["to"])
	require.Empty(t, m["added"])
	require.Empty(t, m["removed"])
	changed := m["changed"].([]any)
	require.Len(t, changed, 1)
	ch := changed[0].(map[string]any)
	require.Equal(t, []any{float64(1)}, ch["from"].(map[string]any)["source_positions"])
	require.Equal(t, []any{float64(1), float64(3)}, ch["to"].(map[string]any)["source_positions"])
	require.Equal(t, float64(1), ch["from"].(map[string]any)["entry_id"], "matched by id")
	require.Equal(t, float64(1), ch["to"].(map[string]any)["entry_id"])

	r = e.get("/v1/memory/diff?scope_id=h&from=0&to=2")
	m = r.json(t)
	require.Len(t, m["added"].([]any), 2)
	require.Empty(t, m["changed"])
	e.get("/v1/memory/diff?scope_id=h&from=1&to=7").requireError(t, http.StatusNotFound, CodeRevisionNotFound)

	// A revision an older build wrote: its entries have no id and it records no eviction.
	require.NoError(t, e.store.InTx(context.Background(), func(ctx context.Context, q db.Queries) error {
		now, err := q.DBNow(ctx)
		require.NoError(t, err)
		require.NoError(t, q.MemoryRevisionInsert(ctx, db.MemoryRevision{ScopeID: "h", Revision: 4, WorkID: uuid.NewString(),
			CursorGeneration: 1, WindowAfter: 3, WindowThrough: 3, EntryCount: 1, CreatedAt: now}))
		return q.MemoryEntryInsert(ctx, db.MemoryEntry{ScopeID: "h", Revision: 4, EntryNo: 1, Content: "Alice owns billing.",
			SourcePositions: []byte(`[2]`), CreatedAt: now})
	}))
	m = e.get("/v1/memory?scope_id=h").json(t)
	require.Nil(t, m["evicted"])
	require.Nil(t, m["entries"].([]any)[0].(map[string]any)["entry_id"])
	require.Contains(t, m["entries"].([]any)[0].(map[string]any), "entry_id")
	require.Nil(t, e.get("/v1/memory/revisions?scope_id=h&limit=1").json(t)["items"].([]any)[0].(map[string]any)["evicted"])
	m = e.get("/v1/memory/diff?scope_id=h").json(t)
	require.Len(t, m["removed"].([]any), 1, "matched by text: only the Staging fact left")
	require.Empty(t, m["added"])
	item := e.get("/v1/context?scope_id=h").json(t)["items"].([]any)[0].(map[string]any)
	require.NotContains(t, item, "entry_id")
	e.get("/v1/memory/diff?scope_id=h&to=x").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	e.get("/v1/memory/revisions?scope_id=h&cursor=abc").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	e.get("/v1/memory/revisions?scope_id=").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
}

func TestContextRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	items := e.incubate("c", "Retrying the flaky staging test twice hid a real race.", "Pinning the base image fixed the drifting build.")
	require.Len(t, items, 2)
	approved := items[0].(map[string]any)["candidate_id"].(string)
	r := e.post("/v1/experience/candidates/"+approved+"/approve", `{"expected_version":1}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	e.capture("c", "Staging uses PostgreSQL 17.", nil)
	e.enqueueMemory("c")
	require.Equal(t, 1, e.step(nil))

	r = e.get("/v1/context?scope_id=c&q=staging&max_tokens=500")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, float64(500), m["max_tokens"])
	require.LessOrEqual(t, m["used_tokens"].(float64), 500.0)
	got := m["items"].([]any)
	first := got[0].(map[string]any)
	require.Equal(t, "memory", first["type"])
	require.Contains(t, first["content"], "Staging uses PostgreSQL 17")
	require.Greater(t, first["score"], 0.0)
	require.Equal(t, float64(3), first["entry_id"], "after the two task outcomes, which Memory read first")
	var lessons []string
	for _, it := range got {
		if it := it.(map[string]any); it["type"] == "lesson" {
			lessons = append(lessons, it["candidate_id"].(string))
			require.NotEmpty(t, it["source_positions"])
		}
	}
	require.Equal(t, []string{approved}, lessons, "the pending candidate is not context")

	r = e.get("/v1/context?scope_id=c&max_tokens=3")
	m = r.json(t)
	require.LessOrEqual(t, m["used_tokens"].(float64), 3.0)
	require.Positive(t, m["omitted"])
	e.get("/v1/context?scope_id=c&max_tokens=0").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	e.get("/v1/context?scope_id=").requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
}
