package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/mcp"
	"github.com/powercontext/powercontext/skills"
)

// approveSkill approves a pending candidate of scope through experience.Reviews, whose OnApproved enqueues its
// packaging, and waits until the skill reaches revision rev.
func approveSkill(t *testing.T, s db.Store, r experience.Reviews, scope, title, lesson, name string, rev int64) {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(), Title: title, Lesson: lesson,
		CitedPositions: []byte("[1]"), Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.ExperienceCandidateInsert(ctx, c))
	_, err = r.Review(ctx, c.CandidateID, 1, true)
	require.NoError(t, err)
	testutil.Eventually(t, 30*time.Second, func() bool {
		sk, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: name})
		if errors.Is(err, db.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return sk.CurrentRevision == rev
	}, "skill %s never reached revision %d", name, rev)
}

// packagingStore runs the skills packager over s until the test ends and returns reviews that enqueue it.
func packagingStore(t *testing.T, s db.Store) experience.Reviews {
	t.Helper()
	l := coordinator.NewLedger(s)
	pk := &skills.Packager{Ledger: l, MaxAttempts: 3}
	w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-mcp-skills", Concurrency: 1, Poll: 10 * time.Millisecond,
		Logger: zerolog.Nop()}, &skills.Handler{Store: s})
	require.NoError(t, err)
	testutil.RunWorker(t, w)
	return experience.Reviews{Store: s, OnApproved: pk.Approved}
}

// TestSkillTools: list_skills names a scope's approved and packaged skills with their current revision and
// digests; get_skill returns the skill file's text and the file list at the current or a given revision, read from the stored
// archive; an unknown skill or revision is a not-found tool error, a bad argument invalid_request, and nothing of
// the skill's text reaches the log.
func TestSkillTools(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		reviews := packagingStore(t, s)
		const scope, name = "team/mcp-skills", "pin-the-toolchain"
		approveSkill(t, s, reviews, scope, "Pin the toolchain", "Pin the Go toolchain in go.mod before upgrading.", name, 1)
		approveSkill(t, s, reviews, scope, "Pin the toolchain", "Record the pinned version in the changelog.", name, 2)

		var logs bytes.Buffer
		srv := httptest.NewServer(mcp.NewHandler(deps(s, zerolog.New(&logs)), true))
		t.Cleanup(srv.Close)
		r := &rpc{t: t}

		var list mcp.ListSkillsOutput
		r.ok(srv.URL, "list_skills", map[string]any{"scope_id": scope}, &list)
		require.Len(t, list.Items, 1)
		it := list.Items[0]
		rev2, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: name, Revision: 2})
		require.NoError(t, err)
		require.Equal(t, mcp.SkillSummary{ScopeID: scope, Name: name, CurrentRevision: 2, TreeDigest: rev2.TreeDigest,
			ArchiveDigest: rev2.ArchiveDigest, FileCount: rev2.FileCount, ByteSize: rev2.ByteSize, CreatedAt: it.CreatedAt,
			UpdatedAt: it.UpdatedAt}, it)
		r.ok(srv.URL, "list_skills", map[string]any{"scope_id": "team/none", "limit": 5}, &list)
		require.Empty(t, list.Items)
		require.NotNil(t, list.Items, "an empty list is [], not null")

		var got mcp.GetSkillOutput
		r.ok(srv.URL, "get_skill", map[string]any{"scope_id": scope, "skill_name": name}, &got)
		require.Equal(t, int64(2), got.Revision)
		require.Equal(t, int64(2), got.CurrentRevision)
		require.Equal(t, rev2.TreeDigest, got.TreeDigest)
		require.Equal(t, rev2.ArchiveDigest, got.ArchiveDigest)
		require.True(t, strings.HasPrefix(got.SkillMD, "---\nname: "+name+"\n"), got.SkillMD)
		require.Contains(t, got.SkillMD, "Record the pinned version")
		require.False(t, got.Truncated)
		require.Len(t, got.Files, int(rev2.FileCount))
		require.Equal(t, skills.SkillFile, got.Files[0].Path)
		require.Equal(t, len(got.SkillMD), got.Files[0].Size)
		files, err := skills.Files(rev2.Archive)
		require.NoError(t, err)
		require.Equal(t, rev2.TreeDigest, skills.TreeDigest(files), "the files read back are the packaged tree")

		r.ok(srv.URL, "get_skill", map[string]any{"scope_id": scope, "skill_name": name, "revision": 1}, &got)
		require.Equal(t, int64(1), got.Revision)
		require.Equal(t, int64(2), got.CurrentRevision)
		require.NotContains(t, got.SkillMD, "Record the pinned version", "revision 1 predates the second lesson")

		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"get_skill", map[string]any{"scope_id": scope, "skill_name": "no-such-skill"}, "skill_not_found: skill_name: "},
			{"get_skill", map[string]any{"scope_id": "team/other", "skill_name": name}, "skill_not_found: skill_name: "},
			{"get_skill", map[string]any{"scope_id": scope, "skill_name": name, "revision": 9}, "revision_not_found: revision: "},
			{"get_skill", map[string]any{"scope_id": scope, "skill_name": "Not A Name"}, "invalid_request: skill_name: "},
			{"get_skill", map[string]any{"scope_id": scope, "skill_name": name, "revision": 0}, "invalid_request: revision: "},
			{"get_skill", map[string]any{"scope_id": scope}, "invalid_request: skill_name: is required"},
			{"get_skill", map[string]any{"scope_id": "", "skill_name": name}, "invalid_request: scope_id: "},
			{"list_skills", map[string]any{"scope_id": scope, "limit": 101}, "invalid_request: limit: must be 1..100"},
			{"list_skills", map[string]any{"scope_id": ""}, "invalid_request: scope_id: "},
			{"list_skills", map[string]any{"scope_id": scope, "surprise": 1}, "invalid_request: surprise: is not an argument of this tool"},
		} {
			res := r.tool(srv.URL, tc.tool, tc.args)
			require.True(t, res.IsError, tc.want)
			require.True(t, strings.HasPrefix(res.Content[0].Text, tc.want), "%s: got %q", tc.want, res.Content[0].Text)
		}
		require.NotContains(t, logs.String(), "Pin the Go toolchain", "a skill's text is never logged")
		require.NotContains(t, logs.String(), "pinned version")
	})
}

// TestSkillToolsOfOtherScopes: a token restricted to team-a/ is refused another scope's skills with the forbidden
// tool error, like every other tool; its own scope answers.
func TestSkillToolsOfOtherScopes(t *testing.T) {
	s := enginetest.Open(t, db.EngineSQLite)
	reviews := packagingStore(t, s)
	approveSkill(t, s, reviews, "team-b/x", "Keep secrets out", "Never paste tokens into tickets.", "keep-secrets-out", 1)
	specs, err := auth.ParseTokens([]byte(`[{"name":"team-a","role":"agent","token":"` + strings.Repeat("a", 32) + `","scopes":["team-a/"]}]`))
	require.NoError(t, err)
	set, err := auth.NewSet(specs)
	require.NoError(t, err)
	teamA, _ := set.ByName("team-a")
	srv := httptest.NewServer(asPrincipal(mcp.NewHandler(deps(s, zerolog.Nop()), true), teamA))
	t.Cleanup(srv.Close)
	r := &rpc{t: t}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"list_skills", map[string]any{"scope_id": "team-b/x"}},
		{"get_skill", map[string]any{"scope_id": "team-b/x", "skill_name": "keep-secrets-out"}},
	} {
		res := r.tool(srv.URL, tc.tool, tc.args)
		require.True(t, res.IsError, tc.tool)
		require.Equal(t, "forbidden: scope_id: this token may not use that scope", res.Content[0].Text, tc.tool)
		require.NotContains(t, res.Content[0].Text, "tokens into tickets")
	}
	var list mcp.ListSkillsOutput
	r.ok(srv.URL, "list_skills", map[string]any{"scope_id": "team-a/x"}, &list)
	require.Empty(t, list.Items)
}

// TestSkillToolsNotReady: without the Skills service the tools answer runtime_not_ready.
func TestSkillToolsNotReady(t *testing.T) {
	srv := httptest.NewServer(mcp.NewHandler(mcp.Deps{}, true))
	t.Cleanup(srv.Close)
	r := &rpc{t: t}
	res := r.tool(srv.URL, "list_skills", map[string]any{"scope_id": "team"})
	require.True(t, res.IsError)
	require.Equal(t, "runtime_not_ready: skills is not available on this process", res.Content[0].Text)
}
