package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListResponsesHaveAByteCap: a page of large Sources ends before the byte cap and says so with next_after;
// following the cursor returns every Source exactly once. A single item larger than the cap still comes alone
// (a page never comes back empty while items remain).
func TestListResponsesHaveAByteCap(t *testing.T) {
	t.Parallel()
	const maxBytes = 256 << 10
	e := newEnv(t, func(d *Deps) { d.MaxListBytes = maxBytes })
	big := strings.Repeat("x", 60<<10)
	const n = 12
	for i := 1; i <= n; i++ {
		e.capture("s", fmt.Sprintf("%02d %s", i, big), nil)
	}
	var seen []float64
	after := 0.0
	for pages := 0; ; pages++ {
		require.Less(t, pages, n+1, "paging does not end")
		r := e.get(fmt.Sprintf("/v1/sources?scope_id=s&limit=500&after=%d", int64(after)))
		require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
		require.LessOrEqual(t, len(r.Body), maxBytes, "page %d is over the byte cap", pages)
		m := r.json(t)
		items := m["items"].([]any)
		require.NotEmpty(t, items)
		for _, it := range items {
			seen = append(seen, it.(map[string]any)["journal_position"].(float64))
		}
		if m["next_after"] == nil {
			break
		}
		require.Less(t, len(items), n, "the first page must end early")
		after = m["next_after"].(float64)
		require.Equal(t, seen[len(seen)-1], after)
	}
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(i + 1)
	}
	require.Equal(t, want, seen)

	// One Source larger than the cap comes alone, with the cursor to continue.
	small := newEnv(t, func(d *Deps) { d.MaxListBytes = 16 << 10 })
	small.capture("s", strings.Repeat("y", 40<<10), nil)
	small.capture("s", "tiny", nil)
	m := small.get("/v1/sources?scope_id=s").json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Equal(t, float64(1), m["next_after"])
	m = small.get("/v1/sources?scope_id=s&after=1").json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Nil(t, m["next_after"])
}

// TestOperationPagesHaveAByteCap: the operation list ends early at the byte cap too, and its cursor walks every
// operation once.
func TestOperationPagesHaveAByteCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.MaxListBytes = 1500 })
	want := map[string]bool{}
	for i := range 6 {
		scope := fmt.Sprintf("s%d", i)
		e.capture(scope, "x", nil)
		want[e.enqueueMemory(scope).WorkID] = true
	}
	got := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 7)
		r := e.get("/v1/operations?limit=100&cursor=" + cursor)
		require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
		require.LessOrEqual(t, len(r.Body), 1500)
		m := r.json(t)
		items := m["items"].([]any)
		require.NotEmpty(t, items)
		require.Less(t, len(items), 6)
		for _, it := range items {
			id := it.(map[string]any)["operation_id"].(string)
			require.False(t, got[id], "operation %s listed twice", id)
			got[id] = true
		}
		if m["next_cursor"] == nil {
			break
		}
		cursor = m["next_cursor"].(string)
	}
	require.Equal(t, want, got)
}
