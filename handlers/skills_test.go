package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
)

// TestSkillsRoutes: an approval over the API becomes a skill; an operator registers a target and publishes to it;
// the agent enrolls, pulls its desired state and the archive, and reports; a revoked target is refused (403), an
// unknown credential is 401, and every exchange matches api/openapi.yaml.
func TestSkillsRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		pk := &skills.Packager{Ledger: d.Ledger, MaxAttempts: 3}
		d.Experience = experience.Reviews{Store: d.Store, OnApproved: pk.Approved}
		d.Skills = &skills.Service{Store: d.Store}
	})
	w, err := coordinator.NewWorker(e.ledger, coordinator.WorkerConfig{Owner: "w-skills", Concurrency: 1, Poll: 10 * time.Millisecond,
		Logger: zerolog.Nop()}, &skills.Handler{Store: e.store})
	require.NoError(t, err)
	testutil.RunWorker(t, w)
	ctx := context.Background()
	now, err := e.store.DBNow(ctx)
	require.NoError(t, err)
	id := uuid.NewString()
	require.NoError(t, e.store.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: "s", WorkID: uuid.NewString(),
		Title: "Pin the base image", Lesson: "Pinning the base image fixed the drifting build.", CitedPositions: []byte("[1]"),
		Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}))
	r := e.post("/v1/experience/candidates/"+id+"/approve", `{"expected_version":1}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)

	const name = "pin-the-base-image"
	testutil.Eventually(t, 30*time.Second, func() bool {
		r := e.get("/v1/skills?scope_id=s")
		require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
		return len(r.json(t)["items"].([]any)) == 1
	}, "the approval was never packaged")
	r = e.get("/v1/skills/" + name + "/revisions?scope_id=s")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	rev := r.json(t)["items"].([]any)[0].(map[string]any)
	require.Equal(t, float64(1), rev["revision"])
	require.Equal(t, []any{id}, rev["source_candidate_ids"])

	r = e.post("/v1/skill-targets", `{"scope_id":"s","agent_kind":"claude_code","display_name":"laptop"}`)
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
	reg := r.json(t)
	token := reg["enrollment_token"].(string)
	target := reg["target"].(map[string]any)["target_id"].(string)
	require.Equal(t, false, reg["target"].(map[string]any)["enrolled"])
	e.post("/v1/skill-targets", `{"scope_id":"s","agent_kind":"Claude Code","display_name":"x"}`).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	e.post("/v1/skill-targets", `{"scope_id":"s","agent_kind":"claude_code","display_name":"a\u0000b"}`).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)

	e.post("/v1/skill-agent/enroll", `{"enrollment_token":"pcse_nope"}`).requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	r = e.post("/v1/skill-agent/enroll", `{"enrollment_token":"`+token+`"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	cred := r.json(t)["credential"].(string)
	e.post("/v1/skill-agent/enroll", `{"enrollment_token":"`+token+`"}`).requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	agent := hdr{"Authorization": "Bearer " + cred}

	put := func(body string) resp {
		return e.do(http.MethodPut, "/v1/skill-targets/"+target+"/publications/"+name, strings.NewReader(body), jsonCT)
	}
	put(`{"desired_state":"maybe"}`).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	e.do(http.MethodPut, "/v1/skill-targets/"+uuid.NewString()+"/publications/"+name, strings.NewReader(`{"desired_state":"published"}`), jsonCT).
		requireError(t, http.StatusNotFound, CodeNotFound)
	r = put(`{"desired_state":"published"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "pending", r.json(t)["state"])

	e.get("/v1/skill-agent/desired").requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	r = e.do(http.MethodGet, "/v1/skill-agent/desired", nil, agent)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	d := r.json(t)["items"].([]any)[0].(map[string]any)
	require.Equal(t, name, d["skill_name"])
	tree := d["tree_digest"].(string)
	r = e.do(http.MethodGet, "/v1/skill-agent/skills/"+name+"/revisions/1/archive", nil, agent)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "application/x-tar", r.Header.Get("Content-Type"))
	require.Equal(t, tree, r.Header.Get("X-Tree-Digest"))
	e.do(http.MethodGet, "/v1/skill-agent/skills/"+name+"/revisions/2/archive", nil, agent).requireError(t, http.StatusNotFound, CodeNotFound)

	report := func(body string) resp {
		return e.do(http.MethodPost, "/v1/skill-agent/skills/"+name+"/report", strings.NewReader(body),
			hdr{"Authorization": "Bearer " + cred, "Content-Type": "application/json"})
	}
	r = report(`{"observed_revision":1,"observed_tree_digest":"` + tree + `"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "current", r.json(t)["state"])
	report(`{"observed_revision":1,"observed_tree_digest":"xyz"}`).requireError(t, http.StatusUnprocessableEntity, CodeInvalidRequest)
	r = report(`{"error_code":"conflict"}`)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "conflict", r.json(t)["state"])
	r = e.get("/v1/skill-targets/" + target + "/publications")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, "conflict", r.json(t)["items"].([]any)[0].(map[string]any)["state"])
	r = e.get("/v1/skill-targets?scope_id=s")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Equal(t, true, r.json(t)["items"].([]any)[0].(map[string]any)["enrolled"])

	r = e.post("/v1/skill-targets/"+target+"/revoke", "")
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.NotNil(t, r.json(t)["revoked_at"])
	e.do(http.MethodGet, "/v1/skill-agent/desired", nil, agent).requireError(t, http.StatusForbidden, CodeForbidden)
	report(`{"observed_revision":1,"observed_tree_digest":"`+tree+`"}`).requireError(t, http.StatusForbidden, CodeForbidden)
	put(`{"desired_state":"published"}`).requireError(t, http.StatusConflict, CodeSkillConflict)
}

// TestSkillsRoutesWithPrincipals: with tokens configured, targets are an admin's; the agent routes take the skill
// credential, not an API token (an API token there is 401).
func TestSkillsRoutesWithPrincipals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *Deps) {
		d.Principals = principals(t)
		d.Skills = &skills.Service{Store: d.Store}
	})
	body := `{"scope_id":"team-a/x","agent_kind":"codex","display_name":"ci"}`
	e.do(http.MethodPost, "/v1/skill-targets", strings.NewReader(body), withJSON(authz(agentTok))).requireError(t, http.StatusForbidden, CodeForbidden)
	r := e.do(http.MethodPost, "/v1/skill-targets", strings.NewReader(body), withJSON(authz(adminTok)))
	require.Equal(t, http.StatusCreated, r.Code, "body: %s", r.Body)
	token := r.json(t)["enrollment_token"].(string)
	r = e.do(http.MethodPost, "/v1/skill-agent/enroll", strings.NewReader(`{"enrollment_token":"`+token+`"}`), jsonCT)
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	cred := r.json(t)["credential"].(string)
	r = e.do(http.MethodGet, "/v1/skill-agent/desired", nil, authz(cred))
	require.Equal(t, http.StatusOK, r.Code, "body: %s", r.Body)
	require.Empty(t, r.json(t)["items"])
	e.do(http.MethodGet, "/v1/skill-agent/desired", nil, authz(adminTok)).requireError(t, http.StatusUnauthorized, CodeUnauthorized)
	e.do(http.MethodGet, "/v1/skills?scope_id=team-b/x", nil, authz(agentTok)).requireError(t, http.StatusForbidden, CodeForbidden)
}
