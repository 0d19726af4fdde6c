package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCaptureSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	r := e.post("/v1/sources", `{"scope_id":"s1","source_id":"a","content":"The deploy uses blue-green.","metadata":{"k":"v"}}`)
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
	require.Equal(t, map[string]any{"scope_id": "s1", "source_id": "a", "journal_position": float64(1), "created": true}, r.json(t))

	// A repeated (scope_id, source_id) answers 200 with the first position.
	r = e.post("/v1/sources", `{"scope_id":"s1","source_id":"a","content":"different"}`)
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, map[string]any{"scope_id": "s1", "source_id": "a", "journal_position": float64(1), "created": false}, r.json(t))

	// Without a source id one is assigned; positions are dense per scope.
	r = e.post("/v1/sources", `{"scope_id":"s1","content":"second"}`)
	require.Equal(t, http.StatusCreated, r.Code)
	m := r.json(t)
	require.Equal(t, float64(2), m["journal_position"])
	require.NotEmpty(t, m["source_id"])
	r = e.post("/v1/sources", `{"scope_id":"s2","content":"other scope"}`)
	require.Equal(t, float64(1), r.json(t)["journal_position"])

	// Exactly 64 KiB of content is accepted.
	r = e.post("/v1/sources", mustJSON(map[string]any{"scope_id": "s1", "content": strings.Repeat("x", 64*1024)}))
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
}

func TestCaptureSourceValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name, body, field string
	}{
		{"missing scope", `{"content":"x"}`, "scope_id"},
		{"empty scope", `{"scope_id":"","content":"x"}`, "scope_id"},
		{"long scope", mustJSON(map[string]any{"scope_id": strings.Repeat("s", 257), "content": "x"}), "scope_id"},
		{"scope wrong type", `{"scope_id":5,"content":"x"}`, "scope_id"},
		{"scope with NUL", `{"scope_id":"a\u0000b","content":"x"}`, "scope_id"},
		{"missing content", `{"scope_id":"s"}`, "content"},
		{"empty content", `{"scope_id":"s","content":""}`, "content"},
		{"content wrong type", `{"scope_id":"s","content":["x"]}`, "content"},
		{"content too long", mustJSON(map[string]any{"scope_id": "s", "content": strings.Repeat("x", 64*1024+1)}), "content"},
		{"content with NUL", `{"scope_id":"s","content":"a\u0000"}`, "content"},
		{"long source id", mustJSON(map[string]any{"scope_id": "s", "content": "x", "source_id": strings.Repeat("i", 257)}), "source_id"},
		{"source id wrong type", `{"scope_id":"s","content":"x","source_id":1}`, "source_id"},
		{"long source type", mustJSON(map[string]any{"scope_id": "s", "content": "x", "source_type": strings.Repeat("t", 65)}), "source_type"},
		{"metadata not an object", `{"scope_id":"s","content":"x","metadata":[1]}`, "metadata"},
		{"metadata a string", `{"scope_id":"s","content":"x","metadata":"m"}`, "metadata"},
		{"metadata too large", mustJSON(map[string]any{"scope_id": "s", "content": "x", "metadata": map[string]any{"m": strings.Repeat("m", 17*1024)}}), "metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("/v1/sources", tc.body)
			d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
			require.Equal(t, tc.field, d["field"])
		})
	}
}

func TestListSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 1; i <= 5; i++ {
		e.capture("s", fmt.Sprintf("fact %d", i), map[string]any{"i": i})
	}
	e.capture("other", "not mine", nil)

	r := e.get("/v1/sources?scope_id=s&limit=2")
	require.Equal(t, http.StatusOK, r.Code)
	m := r.json(t)
	items := m["items"].([]any)
	require.Len(t, items, 2)
	first := items[0].(map[string]any)
	require.Equal(t, float64(1), first["journal_position"])
	require.Equal(t, "fact 1", first["content"])
	require.Equal(t, "content", first["source_type"])
	require.Equal(t, map[string]any{"i": float64(1)}, first["metadata"])
	require.Regexp(t, timeRE, first["created_at"])
	require.Equal(t, float64(2), m["next_after"])

	r = e.get("/v1/sources?scope_id=s&after=4&limit=2")
	m = r.json(t)
	require.Len(t, m["items"].([]any), 1)
	require.Nil(t, m["next_after"])

	r = e.get("/v1/sources?scope_id=nobody")
	require.Equal(t, map[string]any{"items": []any{}, "next_after": nil}, r.json(t))

	for _, tc := range []struct{ q, field string }{
		{"", "scope_id"},
		{"scope_id=s&limit=0", "limit"},
		{"scope_id=s&limit=501", "limit"},
		{"scope_id=s&limit=x", "limit"},
		{"scope_id=s&after=-1", "after"},
		{"scope_id=s&after=1.5", "after"},
		{"scope_id=%FF", "scope_id"},
		{"scope_id=a&scope_id=b", "scope_id"},
	} {
		r := e.get("/v1/sources?" + tc.q)
		d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.q)
	}
}
