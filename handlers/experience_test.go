package handlers

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// incubate captures task outcomes in scope and runs one incubation; it returns the candidates listed by the API.
func (e *env) incubate(scope string, outcomes ...string) []any {
	e.t.Helper()
	for _, o := range outcomes {
		e.capture(scope, o, map[string]any{"kind": "task-outcome"})
	}
	e.enqueueExperience(scope)
	require.Equal(e.t, 1, e.step(nil))
	r := e.get("/v1/experience/candidates?scope_id=" + scope)
	require.Equal(e.t, http.StatusOK, r.Code, "body: %s", r.Body)
	return r.json(e.t)["items"].([]any)
}

func TestExperienceCandidates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	items := e.incubate("s", "Retrying the flaky test twice hid a real race. Always run with -race.",
		"Pinning the base image fixed the drifting build.")
	require.Len(t, items, 2)
	c := items[0].(map[string]any)
	for _, k := range []string{"candidate_id", "scope_id", "operation_id", "title", "lesson", "cited_positions", "status", "state_version", "created_at", "updated_at"} {
		require.Contains(t, c, k)
	}
	require.Equal(t, "pending", c["status"])
	require.Equal(t, float64(1), c["state_version"])
	require.Regexp(t, timeRE, c["created_at"])
	id := c["candidate_id"].(string)
	other := items[1].(map[string]any)["candidate_id"].(string)

	r := e.post("/v1/experience/candidates/"+id+"/approve", `{"expected_version":1}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, "approved", m["status"])
	require.Equal(t, float64(2), m["state_version"])

	// Stale version / already reviewed: 409 with the actual state.
	r = e.post("/v1/experience/candidates/"+id+"/reject", `{"expected_version":1}`)
	d := r.requireError(t, http.StatusConflict, CodeCandidateConflict)
	require.Equal(t, "approved", d["status"])
	require.Equal(t, float64(2), d["actual_version"])
	require.Equal(t, id, d["candidate_id"])
	r = e.post("/v1/experience/candidates/"+id+"/reject", `{"expected_version":2}`)
	r.requireError(t, http.StatusConflict, CodeCandidateConflict)

	r = e.post("/v1/experience/candidates/"+other+"/reject", `{"expected_version":1}`)
	require.Equal(t, http.StatusOK, r.Code)
	require.Equal(t, "rejected", r.json(t)["status"])

	// Filters.
	r = e.get("/v1/experience/candidates?scope_id=s&status=approved")
	require.Len(t, r.json(t)["items"].([]any), 1)
	r = e.get("/v1/experience/candidates?scope_id=s&status=pending")
	require.Empty(t, r.json(t)["items"])
	r = e.get("/v1/experience/candidates?scope_id=elsewhere")
	require.Equal(t, map[string]any{"items": []any{}}, r.json(t))

	// Not found.
	for _, bad := range []string{uuid.NewString(), "not-a-uuid", "%00"} {
		r = e.post("/v1/experience/candidates/"+bad+"/approve", `{"expected_version":1}`)
		r.requireError(t, http.StatusNotFound, CodeCandidateNotFound)
	}

	// Invalid requests.
	for _, tc := range []struct{ target, body, field string }{
		{"/v1/experience/candidates/" + id + "/approve", `{}`, "expected_version"},
		{"/v1/experience/candidates/" + id + "/approve", `{"expected_version":0}`, "expected_version"},
		{"/v1/experience/candidates/" + id + "/approve", `{"expected_version":"2"}`, "expected_version"},
		{"/v1/experience/candidates/" + id + "/approve", `{"expected_version":2.5}`, "expected_version"},
	} {
		r = e.post(tc.target, tc.body)
		d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.body)
	}
	for _, tc := range []struct{ q, field string }{
		{"", "scope_id"},
		{"scope_id=s&status=maybe", "status"},
		{"scope_id=s&limit=0", "limit"},
		{"scope_id=s&limit=&limit=100000", "limit"}, // given twice, the first empty: not silently the default
	} {
		r = e.get("/v1/experience/candidates?" + tc.q)
		d := r.requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
		require.Equal(t, tc.field, d["field"], tc.q)
	}
}

// TestIncubateExperience: POST /v1/experience/incubate answers like a flush — 200 idle, 200 processed with the
// candidates the window proposed (pending), 202 with Location while queued, one operation for repeated calls, 409
// operation_blocked behind a failed window — and the candidates it proposed are listed for review.
func TestIncubateExperience(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/v1/experience/incubate", `{"scope_id":"s"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, map[string]any{"status": "idle", "previous_cursor": float64(0), "current_cursor": float64(0),
		"high_watermark": float64(0), "processed_source_count": float64(0), "candidate_count": float64(0),
		"operation_id": nil}, r.json(t))

	e.incubator.Wake = func() { go e.step(nil) }
	e.capture("s", "Retrying the flaky test twice hid a real race. Always run with -race.", map[string]any{"kind": "task-outcome"})
	e.capture("s", "The user likes short answers.", nil)
	r = e.post("/v1/experience/incubate", `{"scope_id":"s"}`, hdr{"Prefer": "wait=5"})
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	m := r.json(t)
	require.Equal(t, "processed", m["status"])
	require.Equal(t, float64(2), m["current_cursor"])
	require.Equal(t, float64(2), m["processed_source_count"])
	require.Equal(t, float64(1), m["candidate_count"], "only the task outcome proposes a lesson")
	id := m["operation_id"].(string)
	require.Equal(t, "experience_incubation", e.get("/v1/operations/" + id).json(t)["kind"])
	items := e.get("/v1/experience/candidates?scope_id=s").json(t)["items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, "pending", items[0].(map[string]any)["status"], "never approved automatically")

	e.incubator.Wake = nil
	e.capture("s", "Pinning the base image fixed the drifting build.", map[string]any{"kind": "task-outcome"})
	r = e.post("/v1/experience/incubate", `{"scope_id":"s"}`, hdr{"Prefer": "respond-async"})
	require.Equal(t, http.StatusAccepted, r.Code, "body: %s", r.Body)
	queued := r.json(t)["operation_id"].(string)
	require.Equal(t, "/v1/operations/"+queued, r.Header.Get("Location"))
	r = e.post("/v1/experience/incubate", `{"scope_id":"s"}`, hdr{"Prefer": "wait=0"})
	require.Equal(t, queued, r.json(t)["operation_id"], "a second call joins the same window")

	require.Equal(t, 1, e.step(poison))
	r = e.post("/v1/experience/incubate", `{"scope_id":"s"}`)
	d := r.requireError(t, http.StatusConflict, CodeOperationBlocked)
	require.Equal(t, queued, d["operation_id"])

	r = e.post("/v1/experience/incubate", `{"scope_id":""}`)
	require.Equal(t, http.StatusUnprocessableEntity, r.Code, "body: %s", r.Body)
	none := newEnv(t, func(d *Deps) { d.Incubator = nil })
	r = none.post("/v1/experience/incubate", `{"scope_id":"s"}`)
	r.requireError(t, http.StatusServiceUnavailable, CodeRuntimeNotReady)
}
