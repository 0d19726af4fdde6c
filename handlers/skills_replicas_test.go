package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

// skillReplica is one API server with its own store (connection pool) on a shared database, serving the Skills
// routes; its approvals enqueue packaging through its own ledger.
func skillReplica(t *testing.T, s db.Store) *httptest.Server {
	l := coordinator.NewLedger(s)
	pk := &skills.Packager{Ledger: l, MaxAttempts: 3, Failed: func(err error) { t.Errorf("packaging not enqueued: %v", err) }}
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Journal: sources.NewJournal(s), Experience: experience.Reviews{Store: s, OnApproved: pk.Approved}, Ledger: l, Store: s,
		Skills: &skills.Service{Store: s}, FlushDefaultWait: time.Second, FlushMaxWait: 5 * time.Second, Role: "api",
		Logger: zerolog.Nop(),
	}))
	t.Cleanup(srv.Close)
	return srv
}

// archive fetches a revision's archive with an agent credential and checks it against its X-Archive-Digest.
func archive(t *testing.T, base, cred, name string, revision int) (status int, tree string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/v1/skill-agent/skills/"+name+"/revisions/"+strconv.Itoa(revision)+"/archive", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+cred)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode == http.StatusOK {
		sum := sha256.Sum256(b)
		require.Equal(t, hex.EncodeToString(sum[:]), resp.Header.Get("X-Archive-Digest"))
	}
	return resp.StatusCode, resp.Header.Get("X-Tree-Digest")
}

// TestSkillsTwoReplicas: two API servers, each with its own store on one database, serve the operator and the
// agent interchangeably — the token issued by B is spent on A, the agent pulls and reports alternately on A and B,
// each replica reads the publication state the other wrote (current; update_available after a new approval; current
// again after the next sync), and a revoked target is refused (403) by both, on every engine (SQLite with two stores
// on one file, as two processes on one host would have).
func TestSkillsTwoReplicas(t *testing.T) {
	enginetest.Run(t, func(t *testing.T, engine db.Engine) {
		u := enginetest.MigratedDatabase(t, engine)
		sa, sb, sw := enginetest.OpenStore(t, u), enginetest.OpenStore(t, u), enginetest.OpenStore(t, u)
		a, b := skillReplica(t, sa), skillReplica(t, sb)
		w, err := coordinator.NewWorker(coordinator.NewLedger(sw), coordinator.WorkerConfig{Owner: "skills-worker", Concurrency: 1,
			Poll: 20 * time.Millisecond, Logger: zerolog.Nop()}, &skills.Handler{Store: sw})
		require.NoError(t, err)
		testutil.RunWorker(t, w)
		ctx := context.Background()
		const scope, name = "replicas", "pin-the-base-image"

		approve := func(base, lesson string) {
			t.Helper()
			now, err := sw.DBNow(ctx)
			require.NoError(t, err)
			id := uuid.NewString()
			require.NoError(t, sw.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: scope,
				WorkID: uuid.NewString(), Title: "Pin the base image", Lesson: lesson, CitedPositions: []byte("[1]"),
				Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}))
			code, body, _ := call(t, http.MethodPost, base+"/v1/experience/candidates/"+id+"/approve", map[string]any{"expected_version": 1}, nil)
			require.Equal(t, http.StatusOK, code, "%v", body)
		}
		current := func(base string) float64 {
			code, body, _ := call(t, http.MethodGet, base+"/v1/skills?scope_id="+scope, nil, nil)
			require.Equal(t, http.StatusOK, code, "%v", body)
			items := body["items"].([]any)
			if len(items) == 0 {
				return 0
			}
			return items[0].(map[string]any)["current_revision"].(float64)
		}
		publication := func(base, target string) map[string]any {
			code, body, _ := call(t, http.MethodGet, base+"/v1/skill-targets/"+target+"/publications", nil, nil)
			require.Equal(t, http.StatusOK, code, "%v", body)
			items := body["items"].([]any)
			require.Len(t, items, 1)
			return items[0].(map[string]any)
		}

		// Approved on A, packaged by the worker, read on B.
		approve(a.URL, "Pinning the base image fixed the drifting build.")
		testutil.Eventually(t, 30*time.Second, func() bool { return current(b.URL) == 1 }, "the approval was never packaged")

		// The token comes from B and is spent on A; a second use on B finds nothing.
		code, reg, _ := call(t, http.MethodPost, b.URL+"/v1/skill-targets", map[string]any{"scope_id": scope, "agent_kind": "claude_code",
			"display_name": "laptop"}, nil)
		require.Equal(t, http.StatusCreated, code, "%v", reg)
		token := reg["enrollment_token"].(string)
		target := reg["target"].(map[string]any)["target_id"].(string)
		code, enr, _ := call(t, http.MethodPost, a.URL+"/v1/skill-agent/enroll", map[string]any{"enrollment_token": token}, nil)
		require.Equal(t, http.StatusOK, code, "%v", enr)
		require.Equal(t, target, enr["target_id"])
		cred := enr["credential"].(string)
		code, _, _ = call(t, http.MethodPost, b.URL+"/v1/skill-agent/enroll", map[string]any{"enrollment_token": token}, nil)
		require.Equal(t, http.StatusUnauthorized, code)
		agent := map[string]string{"Authorization": "Bearer " + cred}

		code, pub, _ := call(t, http.MethodPut, a.URL+"/v1/skill-targets/"+target+"/publications/"+name,
			map[string]any{"desired_state": "published"}, nil)
		require.Equal(t, http.StatusOK, code, "%v", pub)
		require.Equal(t, "pending", pub["state"])
		require.Equal(t, "pending", publication(b.URL, target)["state"])

		// One sync: desired from B, archive from A, report to B; both replicas read current.
		sync := func(pull, fetch, report string, revision int) {
			t.Helper()
			code, desired, _ := call(t, http.MethodGet, pull+"/v1/skill-agent/desired", nil, agent)
			require.Equal(t, http.StatusOK, code, "%v", desired)
			d := desired["items"].([]any)[0].(map[string]any)
			require.Equal(t, name, d["skill_name"])
			require.EqualValues(t, revision, d["revision"])
			code, tree := archive(t, fetch, cred, name, revision)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, d["tree_digest"], tree)
			code, rep, _ := call(t, http.MethodPost, report+"/v1/skill-agent/skills/"+name+"/report",
				map[string]any{"observed_revision": revision, "observed_tree_digest": tree}, agent)
			require.Equal(t, http.StatusOK, code, "%v", rep)
			require.Equal(t, "current", rep["state"])
		}
		sync(b.URL, a.URL, b.URL, 1)
		require.Equal(t, "current", publication(a.URL, target)["state"])
		require.Equal(t, "current", publication(b.URL, target)["state"])

		// A new approval on B makes revision 2; the publication followed it and reads update_available on both
		// replicas until the agent syncs again, this time the other way round.
		approve(b.URL, "Pinning the base image by digest also fixed the cache misses.")
		testutil.Eventually(t, 30*time.Second, func() bool { return current(a.URL) == 2 }, "the second approval was never packaged")
		for _, base := range []string{a.URL, b.URL} {
			p := publication(base, target)
			require.Equal(t, "update_available", p["state"], "%v", p)
			require.EqualValues(t, 2, p["desired_revision"], "%v", p)
		}
		code, _ = archive(t, b.URL, cred, name, 1)
		require.Equal(t, http.StatusNotFound, code, "only the desired revision is served")
		sync(a.URL, b.URL, a.URL, 2)
		require.Equal(t, "current", publication(b.URL, target)["state"])

		// Revoked on B: both replicas refuse the credential at once, for pulls, archives and reports.
		code, rev, _ := call(t, http.MethodPost, b.URL+"/v1/skill-targets/"+target+"/revoke", nil, nil)
		require.Equal(t, http.StatusOK, code, "%v", rev)
		for _, base := range []string{a.URL, b.URL} {
			code, body, _ := call(t, http.MethodGet, base+"/v1/skill-agent/desired", nil, agent)
			require.Equal(t, http.StatusForbidden, code, "%v", body)
			code, _ = archive(t, base, cred, name, 2)
			require.Equal(t, http.StatusForbidden, code)
			code, body, _ = call(t, http.MethodPost, base+"/v1/skill-agent/skills/"+name+"/report",
				map[string]any{"observed_revision": 2, "observed_tree_digest": publication(base, target)["observed_tree_digest"]}, agent)
			require.Equal(t, http.StatusForbidden, code, "%v", body)
			code, body, _ = call(t, http.MethodGet, base+"/v1/skill-agent/desired", nil,
				map[string]string{"Authorization": "Bearer pcsc_" + hex.EncodeToString(make([]byte, 32))})
			require.Equal(t, http.StatusUnauthorized, code, "%v", body)
		}
		require.Equal(t, "current", publication(a.URL, target)["state"], "a refused report changes nothing")
	})
}
