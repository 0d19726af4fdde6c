package handlers

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForgetSource: DELETE /v1/sources/{id}?scope_id= erases the Source (202 with the memory_redact operation once
// Memory consumed it, 200 with operation_id null before), 404 source_not_found for an unknown one.
func TestForgetSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, body := range []string{`{"scope_id":"team/x","source_id":"m 1","content":"Releases ship on Tuesdays."}`,
		`{"scope_id":"team/x","source_id":"m2","content":"The deploy script lives in ops/deploy.sh."}`} {
		require.Equal(t, http.StatusCreated, e.post("/v1/sources", body).Code)
	}
	e.enqueueMemory("team/x")
	require.Equal(t, 1, e.step(nil))

	r := e.do(http.MethodDelete, "/v1/sources/m%201?scope_id=team%2Fx", nil, nil)
	require.Equal(t, http.StatusAccepted, r.Code, "body: %s", r.Body)
	m := r.json(t)
	id := m["operation_id"].(string)
	require.Equal(t, "/v1/operations/"+id, r.Header.Get("Location"))
	require.Equal(t, map[string]any{"scope_id": "team/x", "source_id": "m 1", "journal_position": float64(1), "operation_id": id,
		"status": "queued", "status_url": "/v1/operations/" + id}, m)
	require.Equal(t, "memory_redact", e.get("/v1/operations/" + id).json(t)["kind"])
	require.Equal(t, 1, e.step(nil))
	op := e.get("/v1/operations/" + id).json(t)
	require.Equal(t, "succeeded", op["status"])
	require.Equal(t, map[string]any{"type": "memory_redact", "source_position": float64(1), "removed_entries": float64(1),
		"updated_entries": float64(0), "scrubbed_entries": float64(1), "memory": map[string]any{"revision": float64(2)}}, op["result"])
	mem := e.get("/v1/memory?scope_id=team%2Fx").json(t)
	require.Len(t, mem["entries"], 1)
	src := e.get("/v1/sources?scope_id=team%2Fx").json(t)["items"].([]any)[0].(map[string]any)
	require.Equal(t, "", src["content"], "a tombstone")

	r = e.do(http.MethodDelete, "/v1/sources/m%201?scope_id=team%2Fx", nil, nil)
	require.Equal(t, http.StatusAccepted, r.Code, "idempotent: the redaction runs again")
	require.Equal(t, 1, e.step(nil))
	require.Equal(t, "nothing_to_redact", e.item(r.json(t)["operation_id"].(string)).ResultCode)

	// A Source Memory has not consumed: nothing to redact, 200.
	require.Equal(t, http.StatusCreated, e.post("/v1/sources", `{"scope_id":"team/x","source_id":"m3","content":"Not flushed yet."}`).Code)
	r = e.do(http.MethodDelete, "/v1/sources/m3?scope_id=team%2Fx", nil, nil)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, map[string]any{"scope_id": "team/x", "source_id": "m3", "journal_position": float64(3), "operation_id": nil,
		"status": "forgotten", "status_url": nil}, r.json(t))

	e.do(http.MethodDelete, "/v1/sources/nope?scope_id=team%2Fx", nil, nil).requireError(t, http.StatusNotFound, CodeSourceNotFound)
	e.do(http.MethodDelete, "/v1/sources/m2?scope_id=other", nil, nil).requireError(t, http.StatusNotFound, CodeSourceNotFound)
	d := e.do(http.MethodDelete, "/v1/sources/m2", nil, nil).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	require.Equal(t, "scope_id", d["field"])
}

// TestEraseScope: DELETE /v1/scopes/{scope_id} answers 202 with the scope_erase operation (joined while live), a
// capture meanwhile is 409 scope_erasing, and afterwards the scope reads empty and starts a fresh journal.
func TestEraseScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.capture("team/x", "Releases ship on Tuesdays.", nil)
	e.capture("kept", "Deploys are blue-green.", nil)
	e.enqueueMemory("team/x")
	require.Equal(t, 1, e.step(nil))

	r := e.do(http.MethodDelete, "/v1/scopes/team%2Fx", nil, nil)
	require.Equal(t, http.StatusAccepted, r.Code, "body: %s", r.Body)
	m := r.json(t)
	id := m["operation_id"].(string)
	require.Equal(t, map[string]any{"scope_id": "team/x", "operation_id": id, "status": "queued", "status_url": "/v1/operations/" + id}, m)
	require.Equal(t, id, e.do(http.MethodDelete, "/v1/scopes/team%2Fx", nil, nil).json(t)["operation_id"], "joined")
	e.post("/v1/sources", `{"scope_id":"team/x","content":"late"}`).requireError(t, http.StatusConflict, CodeScopeErasing)

	require.Equal(t, 1, e.step(nil))
	op := e.get("/v1/operations/" + id).json(t)
	require.Equal(t, "scope_erase", op["kind"])
	require.Equal(t, "succeeded", op["status"])
	res := op["result"].(map[string]any)
	require.Equal(t, "anonymous", res["requested_by"])
	require.Equal(t, float64(1), res["deleted_sources"])
	require.Empty(t, e.get("/v1/sources?scope_id=team%2Fx").json(t)["items"])
	require.Nil(t, e.get("/v1/memory?scope_id=team%2Fx").json(t)["revision"])
	require.Equal(t, int64(1), e.capture("team/x", "A new beginning.", nil), "a fresh journal")
	require.Len(t, e.get("/v1/sources?scope_id=kept").json(t)["items"], 1)
	list := e.get("/v1/operations?kind=scope_erase").json(t)["items"].([]any)
	require.Len(t, list, 1)

	d := e.do(http.MethodDelete, "/v1/scopes/a%00b", nil, nil).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	require.Equal(t, "scope_id", d["field"])
}

// TestLifecycleRoles: agents may forget and erase only within their allowed scope prefixes.
func TestLifecycleRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) { d.Principals = principals(t) })
	agent := authz(agentTok)
	e.captureDirect("team-b/y", "Secret plans of team b.")
	e.do(http.MethodDelete, "/v1/scopes/team-b%2Fy", nil, agent).requireError(t, http.StatusForbidden, CodeForbidden)
	e.do(http.MethodDelete, "/v1/sources/x?scope_id=team-b%2Fy", nil, agent).requireError(t, http.StatusForbidden, CodeForbidden)
	r := e.do(http.MethodDelete, "/v1/scopes/team-a%2Fx", nil, agent)
	require.Equal(t, http.StatusAccepted, r.Code, "body: %s", r.Body)
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/operations/"+r.json(t)["operation_id"].(string), nil, agent).Code,
		"the agent sees its own scope's erase")
	r = e.do(http.MethodDelete, "/v1/scopes/team-b%2Fy", nil, authz(adminTok))
	require.Equal(t, http.StatusAccepted, r.Code)
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/v1/operations/"+r.json(t)["operation_id"].(string), nil, authz(adminTok)).Code)
	require.Equal(t, 2, e.step(nil))
	require.JSONEq(t, `{"requested_by":"ops"}`, string(e.item(r.json(t)["operation_id"].(string)).Payload), "who asked")
}
