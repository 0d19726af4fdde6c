package ui_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/ui"
)

// skillLesson is lesson text packaged into every skill these tests store: it is content and never appears on a page.
const skillLesson = "SKILL-LESSON-7c1d Restart the flaky runner before the release build."

// seedSkillRevision stores revision rev of skill name in scope (a package built from one lesson), makes it the
// skill's current revision and returns it.
func seedSkillRevision(t testing.TB, s db.Store, scope, name string, rev int64) db.SkillRevision {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	pkg, err := skills.Build(name, []skills.Lesson{{CandidateID: uuid.NewString(), Title: name,
		Lesson: skillLesson + " (revision " + string(rune('0'+rev)) + ")", CitedPositions: []int64{1}, ApprovedAt: now}})
	require.NoError(t, err)
	r := db.SkillRevision{ScopeID: scope, SkillName: name, Revision: rev, TreeDigest: pkg.TreeDigest, ArchiveDigest: pkg.ArchiveDigest,
		FileCount: int32(len(pkg.Files)), ByteSize: pkg.ByteSize, Archive: pkg.Archive, SourceCandidateIDs: []byte("[]"), CreatedAt: now}
	require.NoError(t, s.SkillRevisionInsert(ctx, r))
	if rev == 1 {
		require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: name, CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	} else {
		n, err := s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: rev, UpdatedAt: now, ScopeID: scope,
			SkillName: name, ExpectedRevision: rev - 1})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	return r
}

// enrolledTarget registers a target of scope and enrolls it; it returns the target as the agent sees it.
func enrolledTarget(t testing.TB, svc skills.Service, scope, display string) db.SkillTarget {
	t.Helper()
	ctx := context.Background()
	_, tok, err := svc.RegisterTarget(ctx, scope, "claude_code", display)
	require.NoError(t, err)
	tg, _, err := svc.Enroll(ctx, tok)
	require.NoError(t, err)
	return tg
}

func (f *fixture) publication(targetID, name string) db.SkillPublication {
	f.t.Helper()
	p, err := f.store.SkillPublicationGet(context.Background(), db.SkillPublicationGetParams{TargetID: targetID, SkillName: name})
	require.NoError(f.t, err)
	return p
}

// withoutFragment is a redirect's location as a browser requests it: without its #fragment.
func withoutFragment(loc string) string {
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		return loc[:i]
	}
	return loc
}

// pubRow is the publication row of (target, skill) on a Skills page.
func pubRow(t testing.TB, body, targetID, skill string) string {
	t.Helper()
	start := strings.Index(body, `<tr data-target-id="`+targetID+`" data-skill="`+skill+`">`)
	require.GreaterOrEqual(t, start, 0, "no row for %s on %s", skill, targetID)
	end := strings.Index(body[start:], "</tr>")
	return body[start : start+end]
}

var pubStateRE = regexp.MustCompile(`class="[^"]*pub-state[^"]*" data-state="([a-z_]*)"`)

func pubState(t testing.TB, row string) string {
	t.Helper()
	m := pubStateRE.FindStringSubmatch(row)
	require.NotNil(t, m, row)
	return m[1]
}

// TestSkillsPagePublishUnpublishRollbackRevoke: the Skills page lists a scope's skills (current revision, digests,
// revision count) and, per target, each publication's state; Publish, Roll back, Unpublish and Revoke act through
// the Skills service like the API and redirect to the page, which confirms the action; a stale page (the
// generation moved on, the target was revoked meanwhile) is a 409 page naming the current state and changes
// nothing; bad input is 4xx. No package content is shown. On every engine.
func TestSkillsPagePublishUnpublishRollbackRevoke(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		f := fixtureOn(t, s)
		ctx := context.Background()
		svc := skills.Service{Store: s}
		seedSkillRevision(t, s, "team-a/x", "pin-the-base-image", 1)
		r2 := seedSkillRevision(t, s, "team-a/x", "pin-the-base-image", 2)
		other := seedSkillRevision(t, s, "team-a/x", "log-the-seed", 1)
		seedSkillRevision(t, s, "team-b", "elsewhere", 1)
		laptop := enrolledTarget(t, svc, "team-a/x", "laptop")
		ci := enrolledTarget(t, svc, "team-a/x", "ci-runner")
		const name = "pin-the-base-image"

		body := f.page("/ui/skills?scope_id=team-a/x", http.StatusOK)
		require.Contains(t, body, `aria-current="page">Skills<`)
		require.NotContains(t, body, "SKILL-LESSON", "no package content")
		require.NotContains(t, body, "elsewhere", "another scope's skill")
		require.Regexp(t, `<tr data-skill="pin-the-base-image">\s*<td class="skill-name">pin-the-base-image</td>\s*<td class="num current-revision">2</td>\s*<td class="mono" title="`+r2.TreeDigest+`">`+r2.TreeDigest[:8]+`</td>\s*<td class="mono" title="`+r2.ArchiveDigest+`">`, body)
		require.Regexp(t, `<tr data-skill="log-the-seed">[\s\S]*?title="`+other.TreeDigest+`"[\s\S]*?<td class="num revision-count">1</td>`, body)
		require.Regexp(t, `<tr data-skill="pin-the-base-image">[\s\S]*?<td class="num revision-count">2</td>`, body)
		row := pubRow(t, body, laptop.TargetID, name)
		require.Equal(t, "", pubState(t, row), "not published yet")
		require.Contains(t, row, `action="/ui/skills/targets/`+laptop.TargetID+`/publish"><input type="hidden" name="skill_name" value="pin-the-base-image"><input type="hidden" name="expected_generation" value="0">`)
		require.NotContains(t, row, "/unpublish")
		require.Contains(t, row, `<option value="1">revision 1</option>`, "a rollback may pin revision 1")
		require.Contains(t, body, `href="/ui/scopes/team-a%2Fx/export"`)

		// Publish the current revision to the laptop: pending until the agent reports.
		r := f.post("/ui/skills/targets/"+laptop.TargetID+"/publish", "skill_name="+name+"&expected_generation=0", nil, nil)
		require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
		loc := r.Header.Get("Location")
		require.Equal(t, "/ui/skills?done=published&scope_id=team-a%2Fx&skill_name="+name+"&target_id="+laptop.TargetID+"#target-"+laptop.TargetID, loc)
		p := f.publication(laptop.TargetID, name)
		require.Equal(t, skills.DesiredPublished, p.DesiredState)
		require.EqualValues(t, 2, p.DesiredRevision)
		require.EqualValues(t, 1, p.Generation)
		body = f.page(withoutFragment(loc), http.StatusOK)
		require.Contains(t, body, `id="skills-flash"`)
		require.Contains(t, body, "Published: pin-the-base-image on laptop follows the current revision 2 (generation 1).")
		row = pubRow(t, body, laptop.TargetID, name)
		require.Equal(t, skills.StatePending, pubState(t, row))
		require.Contains(t, row, "/unpublish")
		require.NotContains(t, row, `class="act publish"`, "already follows the current revision")

		// The agent reports the desired revision: current.
		_, err := svc.Report(ctx, laptop, name, skills.Report{ObservedRevision: 2, ObservedTreeDigest: r2.TreeDigest})
		require.NoError(t, err)
		row = pubRow(t, f.page("/ui/skills?scope_id=team-a/x", http.StatusOK), laptop.TargetID, name)
		require.Equal(t, skills.StateCurrent, pubState(t, row))
		require.Contains(t, row, `name="expected_generation" value="2"`)

		// Roll back to revision 1 at the generation shown: pinned, and the agent now holds another revision.
		r = f.post("/ui/skills/targets/"+laptop.TargetID+"/publish", "skill_name="+name+"&revision=1&expected_generation=2", nil, nil)
		require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
		body = f.page(withoutFragment(r.Header.Get("Location")), http.StatusOK)
		require.Contains(t, body, "Rolled back: pin-the-base-image on laptop is pinned to revision 1 (generation 3).")
		row = pubRow(t, body, laptop.TargetID, name)
		require.Equal(t, skills.StateUpdateAvailable, pubState(t, row))
		require.Contains(t, row, "pinned")
		require.Contains(t, row, `class="act publish"`, "a pinned publication may follow the current revision again")

		// A stale page (it showed generation 2) unpublishes: 409, the current state, nothing changes.
		for _, act := range []string{"unpublish", "publish"} {
			r = f.post("/ui/skills/targets/"+laptop.TargetID+"/"+act, "skill_name="+name+"&expected_generation=2", nil, nil)
			require.Equal(t, http.StatusConflict, r.Code, act)
			require.Contains(t, r.Body, `id="skills-conflict"`)
			require.Contains(t, r.Body, "This publication of pin-the-base-image changed since the page was loaded: it is now published at revision 1, state update_available (generation 3; the page showed generation 2). Nothing was changed.")
			require.Equal(t, skills.StateUpdateAvailable, pubState(t, pubRow(t, r.Body, laptop.TargetID, name)), "the page at its current state")
		}
		// A page that showed no publication yet, when one exists now.
		r = f.post("/ui/skills/targets/"+laptop.TargetID+"/publish", "skill_name="+name+"&expected_generation=0", nil, nil)
		require.Equal(t, http.StatusConflict, r.Code)
		p = f.publication(laptop.TargetID, name)
		require.EqualValues(t, 3, p.Generation)
		require.EqualValues(t, 1, p.DesiredRevision)

		// Unpublish at the current generation.
		r = f.post("/ui/skills/targets/"+laptop.TargetID+"/unpublish", "skill_name="+name+"&expected_generation=3", nil, nil)
		require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
		body = f.page(withoutFragment(r.Header.Get("Location")), http.StatusOK)
		require.Contains(t, body, "Unpublished: pin-the-base-image is to be removed from laptop (generation 4).")
		require.Equal(t, skills.DesiredUnpublished, f.publication(laptop.TargetID, name).DesiredState)
		require.Equal(t, skills.StatePending, pubState(t, pubRow(t, body, laptop.TargetID, name)), "the agent still holds it")

		// Revoke the CI runner; its card says revoked and offers no action; a second revoke from the stale page
		// is a conflict, and so is publishing to it.
		r = f.post("/ui/skills/targets/"+ci.TargetID+"/revoke", "expected_generation=2", nil, nil)
		require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
		body = f.page(withoutFragment(r.Header.Get("Location")), http.StatusOK)
		require.Contains(t, body, "Revoked: target ci-runner receives nothing from now on.")
		require.Regexp(t, `data-target-id="`+ci.TargetID+`">\s*<h2><span class="target-name">ci-runner</span>[\s\S]*?data-status="revoked"`, body)
		ciRow := pubRow(t, body, ci.TargetID, name)
		require.NotContains(t, ciRow, "<form")
		require.NotContains(t, body, `action="/ui/skills/targets/`+ci.TargetID+`/revoke"`)
		tg, err := svc.Target(ctx, ci.TargetID)
		require.NoError(t, err)
		require.False(t, tg.RevokedAt.IsZero())
		r = f.post("/ui/skills/targets/"+ci.TargetID+"/revoke", "expected_generation=2", nil, nil)
		require.Equal(t, http.StatusConflict, r.Code)
		require.Contains(t, r.Body, "This target was already revoked at ")
		require.Contains(t, r.Body, "(generation 3; the page showed generation 2). Nothing was changed.")
		r = f.post("/ui/skills/targets/"+ci.TargetID+"/publish", "skill_name="+name+"&expected_generation=0", nil, nil)
		require.Equal(t, http.StatusConflict, r.Code)
		require.Contains(t, r.Body, "This target was revoked since the page was loaded; nothing can be published to it. Nothing was changed.")
		_, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: ci.TargetID, SkillName: name})
		require.ErrorIs(t, err, db.ErrNotFound)

		// Bad input: 4xx pages, never a 500, nothing changes.
		before := f.publication(laptop.TargetID, name)
		for form, code := range map[string]int{
			"":                   http.StatusUnprocessableEntity,
			"skill_name=" + name: http.StatusUnprocessableEntity,
			"skill_name=" + name + "&expected_generation=-1":                           http.StatusUnprocessableEntity,
			"skill_name=Bad Name&expected_generation=4":                                http.StatusUnprocessableEntity,
			"skill_name=" + name + "&expected_generation=4&revision=0":                 http.StatusUnprocessableEntity,
			"skill_name=" + name + "&expected_generation=4&revision=9":                 http.StatusUnprocessableEntity,
			"skill_name=no-such-skill&expected_generation=0":                           http.StatusNotFound,
			"skill_name=" + name + "&expected_generation=" + strings.Repeat("1", 5000): http.StatusBadRequest,
		} {
			r = f.post("/ui/skills/targets/"+laptop.TargetID+"/publish", form, nil, nil)
			require.Equal(t, code, r.Code, "%.80s: %s", form, r.Body)
		}
		r = f.post("/ui/skills/targets/"+laptop.TargetID+"/unpublish", "skill_name="+name+"&expected_generation=4&revision=1", nil, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Code)
		for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
			require.Equal(t, http.StatusNotFound, f.post("/ui/skills/targets/"+id+"/publish", "skill_name="+name+"&expected_generation=0", nil, nil).Code)
			require.Equal(t, http.StatusNotFound, f.post("/ui/skills/targets/"+id+"/revoke", "expected_generation=1", nil, nil).Code)
		}
		require.Equal(t, before, f.publication(laptop.TargetID, name))
		require.Equal(t, http.StatusNotFound, f.do(http.MethodGet, "/ui/skills/targets/"+laptop.TargetID+"/publish", nil).Code,
			"a GET never publishes")
		f.page("/ui/skills?scope_id="+strings.Repeat("x", 257), http.StatusUnprocessableEntity)
		require.Contains(t, f.page("/ui/skills?scope_id=nobody", http.StatusOK), "This scope has no skills yet")
	})
}

// TestSkillsPageRecentScopesAndEscaping: without a scope the page offers the scopes of recent skill packaging with
// their export downloads; a target's display name and a scope holding markup render as text, and no script but
// the layout's is on the page.
func TestSkillsPageRecentScopesAndEscaping(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.Contains(t, f.page("/ui/skills", http.StatusOK), "No skill packaging on record")
	scope := `team<script>alert(1)</script>`
	f.enqueue(skills.PackageRequest(scope, uuid.NewString(), 3))
	seedSkillRevision(t, f.store, scope, "escape-me", 1)
	svc := skills.Service{Store: f.store}
	tg := enrolledTarget(t, svc, scope, `<img src=x onerror="alert(2)">laptop`)

	body := f.page("/ui/skills", http.StatusOK)
	require.Contains(t, body, `href="/ui/skills?scope_id=team%3Cscript%3Ealert%281%29%3C%2Fscript%3E"`)
	require.Contains(t, body, `href="/ui/scopes/team%3Cscript%3Ealert%281%29%3C%2Fscript%3E/export"`)
	require.NotContains(t, body, "<script>alert")

	r := f.get("/ui/skills?scope_id=" + url.QueryEscape(scope))
	require.Equal(t, http.StatusOK, r.Code)
	require.NotContains(t, r.Body, "<script>alert")
	require.NotContains(t, r.Body, "<img src=x")
	require.Contains(t, r.Body, `&lt;img src=x onerror=&#34;alert(2)&#34;&gt;laptop`)
	require.Contains(t, r.Body, `team&lt;script&gt;alert(1)&lt;/script&gt;`)
	require.Equal(t, 1, strings.Count(r.Body, "<script"), "only the layout's /ui/static/app.js")
	require.NotContains(t, r.Body, "SKILL-LESSON")
	require.Contains(t, r.Body, `data-target-id="`+tg.TargetID+`"`)

	// The flash names the target as text too.
	rr := f.post("/ui/skills/targets/"+tg.TargetID+"/revoke", "expected_generation=2", nil, nil)
	require.Equal(t, http.StatusSeeOther, rr.Code, rr.Body)
	body = f.page(withoutFragment(rr.Header.Get("Location")), http.StatusOK)
	require.Contains(t, body, "Revoked: target &lt;img src=x onerror=&#34;alert(2)&#34;&gt;laptop receives nothing from now on.")
}

// TestSkillsAccess: the Skills page and its forms need what every dashboard page needs — an admin without scope
// restriction; an agent, a restricted admin and an anonymous request are refused and change nothing; a form posted
// from another site is refused even with a valid session.
func TestSkillsAccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set, err := auth.NewSet([]auth.TokenSpec{{Name: "ops", Role: auth.RoleAdmin, Token: adminToken},
		{Name: "bot", Role: auth.RoleAgent, Token: agentToken},
		{Name: "team-a-ops", Role: auth.RoleAdmin, Token: "team-a-admin-token-0123456789abcdef", Scopes: []string{"team-a/"}}})
	require.NoError(t, err)
	h := sessionHandler(f, set, ui.SessionConfig{})
	seedSkillRevision(t, f.store, "team-a/x", "guarded-skill", 1)
	svc := skills.Service{Store: f.store}
	tg := enrolledTarget(t, svc, "team-a/x", "SECRET-TARGET-NAME")
	targets := []exchange{
		{method: http.MethodGet, target: "/ui/skills?scope_id=team-a/x"},
		{method: http.MethodGet, target: "/ui/skills"},
		{method: http.MethodPost, target: "/ui/skills/targets/" + tg.TargetID + "/publish", form: "skill_name=guarded-skill&expected_generation=0"},
		{method: http.MethodPost, target: "/ui/skills/targets/" + tg.TargetID + "/unpublish", form: "skill_name=guarded-skill&expected_generation=1"},
		{method: http.MethodPost, target: "/ui/skills/targets/" + tg.TargetID + "/revoke", form: "expected_generation=2"},
	}
	for _, tc := range []struct {
		name, token string
		code        int
	}{
		{"anonymous", "", http.StatusUnauthorized},
		{"agent", agentToken, http.StatusForbidden},
		{"scope-restricted admin", "team-a-admin-token-0123456789abcdef", http.StatusForbidden},
		{"wrong token", "wrong-token-0123456789abcdef0123456789", http.StatusUnauthorized},
	} {
		for _, x := range targets {
			if tc.token != "" {
				x.headers = map[string]string{"Authorization": "Bearer " + tc.token}
			}
			r := serveUI(h, x)
			require.Equal(t, tc.code, r.Code, "%s %s %s", tc.name, x.method, x.target)
			require.NotContains(t, r.Body, "SECRET-TARGET-NAME")
		}
	}
	unchanged := func() {
		t.Helper()
		_, err := f.store.SkillPublicationGet(context.Background(), db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: "guarded-skill"})
		require.ErrorIs(t, err, db.ErrNotFound)
		got, err := svc.Target(context.Background(), tg.TargetID)
		require.NoError(t, err)
		require.True(t, got.RevokedAt.IsZero())
	}
	unchanged()

	ck := sessionCookieOf(login(h, adminToken))
	require.NotNil(t, ck)
	r := serveUI(h, exchange{method: http.MethodGet, target: "/ui/skills?scope_id=team-a/x", cookie: ck})
	require.Equal(t, http.StatusOK, r.Code)
	require.Contains(t, r.Body, "SECRET-TARGET-NAME")
	for _, x := range targets[2:] {
		for _, hd := range []map[string]string{{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
			x.cookie, x.headers = ck, hd
			r = serveUI(h, x)
			require.Equal(t, http.StatusForbidden, r.Code, "%v %s", hd, x.target)
			require.Contains(t, r.Body, "posted from another site")
		}
	}
	unchanged()
	r = serveUI(h, exchange{method: http.MethodPost, target: targets[2].target, form: targets[2].form, cookie: ck,
		headers: map[string]string{"Sec-Fetch-Site": "same-origin"}})
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
}

// exportOps are the scope_export operations of scope, newest first.
func exportOps(t testing.TB, f *fixture, scope string) []db.WorkItem {
	t.Helper()
	items, err := f.ledger.List(context.Background(), coordinator.ListParams{Kinds: []string{portability.KindExport}, ScopeID: scope, Limit: 100})
	require.NoError(t, err)
	return items
}

// TestExportDownload: GET /ui/scopes/{scope_id}/export streams the scope's export as an attachment — the same
// stream as the API's route, Source content included — and records a scope_export operation naming the principal;
// the Skills page links to it and shows none of the content. Who may: an admin, or a token whose scopes include
// the scope (403 otherwise, 401 without a credential); a download another site started is refused; nothing is
// recorded for a refused request. On every engine.
func TestExportDownload(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		f := fixtureOn(t, s)
		set, err := auth.NewSet([]auth.TokenSpec{{Name: "ops", Role: auth.RoleAdmin, Token: adminToken},
			{Name: "bot", Role: auth.RoleAgent, Token: agentToken},
			{Name: "team-a-bot", Role: auth.RoleAgent, Token: "team-a-agent-token-0123456789abcdef", Scopes: []string{"team-a/"}}})
		require.NoError(t, err)
		h := sessionHandler(f, set, ui.SessionConfig{})
		f.capture("team-a/x", canary, nil)
		f.capture("team-b", canary, nil)
		ck := sessionCookieOf(login(h, adminToken))
		require.NotNil(t, ck)

		page := serveUI(h, exchange{method: http.MethodGet, target: "/ui/skills?scope_id=team-a/x", cookie: ck})
		require.Equal(t, http.StatusOK, page.Code)
		require.NotContains(t, page.Body, "CANARY")
		require.Contains(t, page.Body, `id="export-download" href="/ui/scopes/team-a%2Fx/export" download`)

		r := serveUI(h, exchange{method: http.MethodGet, target: "/ui/scopes/team-a%2Fx/export", cookie: ck,
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}})
		require.Equal(t, http.StatusOK, r.Code, r.Body)
		require.Equal(t, "application/x-ndjson", r.Header.Get("Content-Type"))
		require.Equal(t, `attachment; filename="scope-team-a-x.jsonl"`, r.Header.Get("Content-Disposition"))
		require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		lines := strings.Split(strings.TrimSuffix(r.Body, "\n"), "\n")
		var header, trailer map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &header))
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &trailer))
		require.Equal(t, "powercontext.scope-export", header["format"])
		require.Equal(t, "team-a/x", header["scope_id"])
		require.Equal(t, "trailer", trailer["type"])
		require.Contains(t, r.Body, `"content":"`+canary+`"`, "the download carries the content")
		ops := exportOps(t, f, "team-a/x")
		require.Len(t, ops, 1)
		require.JSONEq(t, `{"type":"scope_export","requested_by":"ops","embeddings":false}`, string(ops[0].Payload))

		// The same stream as the API's exporter writes (the header apart, which names the time).
		var direct strings.Builder
		_, err = portability.Exporter{Store: s}.Export(context.Background(), "team-a/x", &direct, portability.Options{})
		require.NoError(t, err)
		want := strings.Split(strings.TrimSuffix(direct.String(), "\n"), "\n")
		require.Equal(t, want[1:len(want)-1], lines[1:len(lines)-1])

		bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
		for _, tc := range []struct {
			name    string
			x       exchange
			code    int
			message string
		}{
			{"restricted token, its scope", exchange{target: "/ui/scopes/team-a%2Fx/export", headers: bearer("team-a-agent-token-0123456789abcdef")}, http.StatusOK, ""},
			{"restricted token, another scope", exchange{target: "/ui/scopes/team-b/export", headers: bearer("team-a-agent-token-0123456789abcdef")}, http.StatusForbidden, "needs the admin role or a token whose scopes include it"},
			{"unrestricted agent", exchange{target: "/ui/scopes/team-b/export", headers: bearer(agentToken)}, http.StatusForbidden, "needs the admin role"},
			{"anonymous", exchange{target: "/ui/scopes/team-b/export"}, http.StatusUnauthorized, "Sign in"},
			{"cross-site", exchange{target: "/ui/scopes/team-b/export", cookie: ck, headers: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden, "started from another site"},
			{"other origin", exchange{target: "/ui/scopes/team-b/export", cookie: ck, headers: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden, "started from another site"},
			{"bad embeddings", exchange{target: "/ui/scopes/team-b/export?embeddings=maybe", cookie: ck}, http.StatusUnprocessableEntity, "embeddings must be true or false"},
			{"bad scope", exchange{target: "/ui/scopes/" + strings.Repeat("x", 257) + "/export", cookie: ck}, http.StatusUnprocessableEntity, "scope must be"},
		} {
			tc.x.method = http.MethodGet
			r := serveUI(h, tc.x)
			require.Equal(t, tc.code, r.Code, tc.name)
			if tc.code != http.StatusOK {
				require.Contains(t, html.UnescapeString(r.Body), tc.message, tc.name)
				require.NotContains(t, r.Body, "CANARY", tc.name)
				require.Equal(t, "text/html; charset=utf-8", r.Header.Get("Content-Type"), tc.name)
			} else {
				require.Contains(t, r.Body, canary, tc.name)
			}
		}
		require.Equal(t, http.StatusMethodNotAllowed, serveUI(h, exchange{method: http.MethodHead, target: "/ui/scopes/team-b/export", cookie: ck}).Code)
		require.Empty(t, exportOps(t, f, "team-b"), "a refused download records nothing")
		ops = exportOps(t, f, "team-a/x")
		require.Len(t, ops, 2)
		require.JSONEq(t, `{"type":"scope_export","requested_by":"team-a-bot","embeddings":false}`, string(ops[0].Payload))
	})
}
