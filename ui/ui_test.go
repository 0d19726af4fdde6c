package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
	"github.com/powercontext/powercontext/ui"
)

// canary is Source content that must never appear on any dashboard page.
const canary = "CANARY-3f9e1c The deploy key lives in vault path secret/ops."

// fixture is the dashboard over a fresh migrated SQLite store.
type fixture struct {
	t       testing.TB
	store   db.Store
	ledger  *coordinator.Ledger
	journal *sources.Journal
	h       http.Handler
}

func newFixture(t testing.TB, mutate ...func(*ui.Deps)) *fixture {
	t.Helper()
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	d := ui.Deps{Ledger: ledger, Store: store, Logger: zerolog.Nop()}
	for _, m := range mutate {
		m(&d)
	}
	return &fixture{t: t, store: store, ledger: ledger, journal: sources.NewJournal(store), h: ui.New(d)}
}

func (f *fixture) capture(scope, content string, metadata map[string]any) {
	f.t.Helper()
	var md json.RawMessage
	if metadata != nil {
		b, err := json.Marshal(metadata)
		require.NoError(f.t, err)
		md = b
	}
	_, err := f.journal.Capture(context.Background(), sources.CaptureRequest{ScopeID: scope, Content: content, Metadata: md})
	require.NoError(f.t, err)
}

func (f *fixture) enqueue(req coordinator.EnqueueRequest) db.WorkItem {
	f.t.Helper()
	res, err := f.ledger.Enqueue(context.Background(), req)
	require.NoError(f.t, err)
	require.False(f.t, res.Idle)
	return res.Item
}

func (f *fixture) enqueueMemory(scope string) db.WorkItem {
	return f.enqueue(memory.Consumer(3).EnqueueRequest(scope))
}

func (f *fixture) enqueueExperience(scope string) db.WorkItem {
	return f.enqueue(experience.Consumer(3).EnqueueRequest(scope))
}

// step claims every due head and completes it with the real handler, or fails it with fail.
func (f *fixture) step(owner string, fail *coordinator.Failure) int {
	f.t.Helper()
	hs := map[string]coordinator.Handler{
		memory.Kind:     &memory.Handler{Store: f.store, Provider: provider.NewLocal()},
		experience.Kind: &experience.Handler{Store: f.store, Provider: provider.NewLocal()},
	}
	sup := coordinator.Supported{}
	for k, h := range hs {
		sup[k] = h.PayloadVersions()
	}
	ctx := context.Background()
	res, err := f.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: owner, Supported: sup, Slots: 16, Lease: time.Minute})
	require.NoError(f.t, err)
	for _, c := range res.Claims {
		if fail != nil {
			_, err := f.ledger.Fail(ctx, c, *fail, 0)
			require.NoError(f.t, err)
			continue
		}
		p, err := hs[c.Item.Kind].Prepare(ctx, c.Item)
		require.NoError(f.t, err)
		_, err = f.ledger.Complete(ctx, c, p.Result, p.Commit)
		require.NoError(f.t, err)
	}
	return len(res.Claims)
}

func (f *fixture) item(id string) db.WorkItem {
	f.t.Helper()
	w, err := f.ledger.Get(context.Background(), id)
	require.NoError(f.t, err)
	return w
}

type resp struct {
	Code   int
	Header http.Header
	Body   string
}

func (f *fixture) do(method, target string, headers map[string]string, cookies ...*http.Cookie) resp {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return resp{Code: rec.Code, Header: rec.Header(), Body: string(b)}
}

func (f *fixture) get(target string) resp { return f.do(http.MethodGet, target, nil) }

// page GETs target and requires an HTML page with the given status.
func (f *fixture) page(target string, status int) string {
	f.t.Helper()
	r := f.get(target)
	require.Equal(f.t, status, r.Code, "GET %s: %s", target, r.Body)
	require.Equal(f.t, "text/html; charset=utf-8", r.Header.Get("Content-Type"))
	require.Contains(f.t, r.Header.Get("Content-Security-Policy"), "script-src 'self'")
	return r.Body
}

var (
	fail      = &coordinator.Failure{Category: coordinator.CategoryPayload, Code: coordinator.CodeInvalidPayload}
	retryable = &coordinator.Failure{Category: coordinator.CategoryProvider, Code: coordinator.CodeUnavailable, Retryable: true}
	rowRE     = regexp.MustCompile(`<tr data-op-id="([0-9a-f-]{36})"`)
	nextRE    = regexp.MustCompile(`id="next-page" href="([^"]+)"`)
)

func rows(body string) []string {
	var ids []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestPagesRenderWithoutContent drives every state a page can show with Sources whose content is a canary, and
// checks that every page renders and none contains the canary (nor internal work).
func TestPagesRenderWithoutContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	// succeeded memory flush and experience incubation (their Memory entries and candidates hold the canary)
	f.capture("done", canary, map[string]any{"kind": "task-outcome"})
	done := f.enqueueMemory("done")
	inc := f.enqueueExperience("done")
	require.Equal(t, 2, f.step("worker-a", nil))
	mem, err := memory.Reader{Store: f.store}.Current(ctx, "done")
	require.NoError(t, err)
	require.NotEmpty(t, mem.Entries)
	require.Contains(t, mem.Entries[0].Content, "CANARY-3f9e1c", "the canary must be in Memory for this test to mean anything")

	// failed after a retryable attempt: a blocked lane with a two-attempt timeline
	f.capture("blocked", canary, nil)
	failed := f.enqueueMemory("blocked")
	require.Equal(t, 1, f.step("worker-a", retryable))
	require.Equal(t, db.StatusRetryWait, f.item(failed.WorkID).Status) // due at once: the backoff was 0
	require.Eventually(t, func() bool { return f.step("worker-b", fail) == 1 }, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, db.StatusFailed, f.item(failed.WorkID).Status)

	// running, then queued
	f.capture("running", canary, nil)
	running := f.enqueueMemory("running")
	_, err = f.ledger.Claim(ctx, coordinator.ClaimRequest{Owner: "worker-c",
		Supported: coordinator.Supported{memory.Kind: {Min: 1, Max: 1}}, Slots: 1, Lease: time.Minute})
	require.NoError(t, err)
	require.Equal(t, db.StatusRunning, f.item(running.WorkID).Status)
	f.capture("queued", canary, nil)
	queued := f.enqueueMemory("queued")

	// a maintenance run (system work), a live member and a scheduler leader
	maint := f.enqueue(coordinator.MaintenanceRequest())
	m := coordinator.NewMembership(f.store, db.RuntimeMember{MemberID: "member-api-1", Role: "all", BuildVersion: "v9.8.7",
		SchemaMin: 1, SchemaMax: 3, PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "rev-42"}, time.Second, time.Minute, zerolog.Nop())
	require.NoError(t, m.Beat(ctx))
	lease, err := f.ledger.AcquireLease(ctx, coordinator.LeaseWorkDiscovery, "member-api-1", time.Minute)
	require.NoError(t, err)
	require.True(t, lease.Acquired)

	var all []string
	check := func(target string, status int, want ...string) string {
		t.Helper()
		body := f.page(target, status)
		for _, s := range want {
			require.Contains(t, body, s, "GET %s", target)
		}
		all = append(all, body)
		return body
	}

	over := check("/ui", http.StatusOK, "memory_flush", "queued", "failed", "member-api-1", "v9.8.7", "rev-42",
		`id="leader-owner">member-api-1<`, fmt.Sprintf(`id="leader-fence">%d<`, lease.Token.Fence), "1 blocked lane")
	require.Contains(t, over, `data-autorefresh="15"`)
	require.Contains(t, over, `href="/ui/operations?kind=memory_flush&amp;status=failed"`)
	check("/ui/", http.StatusOK, "member-api-1")
	check("/ui/operations", http.StatusOK, done.WorkID, inc.WorkID, failed.WorkID, queued.WorkID, running.WorkID, maint.WorkID)
	maintList := check("/ui/operations?kind=maintenance", http.StatusOK, maint.WorkID, coordinator.MaintenanceScope)
	require.Equal(t, []string{maint.WorkID}, rows(maintList))
	check("/ui/operations?scope_id=done", http.StatusOK, done.WorkID)
	blocked := check("/ui/blocked", http.StatusOK, failed.WorkID, "payload/invalid_payload")
	require.Equal(t, []string{failed.WorkID}, rows(blocked))

	fw := f.item(failed.WorkID)
	op := check("/ui/operations/"+failed.WorkID, http.StatusOK,
		`data-status="failed"`, "memory-source-window", "after 0 through 1", "worker-a", "worker-b",
		"provider/unavailable", "payload/invalid_payload", "out-retry_wait", "out-failed", "lane head", "lane is blocked",
		fmt.Sprintf(`data-action="retry" data-op-id="%s" data-version="%d"`, failed.WorkID, fw.StateVersion),
		fmt.Sprintf(`data-action="cancel" data-op-id="%s" data-version="%d"`, failed.WorkID, fw.StateVersion),
		fmt.Sprintf(`data-action="skip" data-op-id="%s" data-version="%d"`, failed.WorkID, fw.StateVersion))
	require.Less(t, strings.Index(op, "worker-b"), strings.Index(op, ">worker-a<"), "attempts are newest first")

	succ := check("/ui/operations/"+done.WorkID, http.StatusOK, `data-status="succeeded"`, "processed",
		"processed_source_count", "memory.revision", "current_cursor")
	require.NotContains(t, succ, `data-action=`, "a succeeded operation has no actions")
	check("/ui/operations/"+inc.WorkID, http.StatusOK, "experience_incubation", "candidate_count", "experience-incubation")
	check("/ui/operations/"+queued.WorkID, http.StatusOK, `data-autorefresh="2"`)
	check("/ui/operations/"+running.WorkID, http.StatusOK, "worker-c", "in progress")

	// Maintenance is visible to the dashboard's admins like the Operation API shows it to them.
	check("/ui/operations/"+maint.WorkID, http.StatusOK, "maintenance", `data-status="queued"`)
	// The Experience list shows the scope's candidates (whose lessons hold the canary) without their text.
	check("/ui/experience", http.StatusOK, `href="/ui/experience?scope_id=done"`)
	require.NotEmpty(t, candRows(check("/ui/experience?scope_id=done", http.StatusOK)), "the incubation proposed a candidate")
	// The Skills page shows a skill packaged from a lesson holding the canary, and its publication, without content.
	now, err := f.store.DBNow(ctx)
	require.NoError(t, err)
	pkg, err := skills.Build("canary-skill", []skills.Lesson{{CandidateID: "c1", Title: "Canary", Lesson: canary, CitedPositions: []int64{1}, ApprovedAt: now}})
	require.NoError(t, err)
	require.Contains(t, string(pkg.Files[0].Content), "CANARY-3f9e1c", "the canary must be in the package for this to mean anything")
	require.NoError(t, f.store.SkillRevisionInsert(ctx, db.SkillRevision{ScopeID: "done", SkillName: "canary-skill", Revision: 1,
		TreeDigest: pkg.TreeDigest, ArchiveDigest: pkg.ArchiveDigest, FileCount: int32(len(pkg.Files)), ByteSize: pkg.ByteSize,
		Archive: pkg.Archive, SourceCandidateIDs: []byte(`["00000000-0000-4000-8000-0000000000c1"]`), CreatedAt: now}))
	require.NoError(t, f.store.SkillInsert(ctx, db.Skill{ScopeID: "done", SkillName: "canary-skill", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	svc := skills.Service{Store: f.store}
	tg, _, err := svc.RegisterTarget(ctx, "done", "claude_code", "laptop")
	require.NoError(t, err)
	_, err = svc.Publish(ctx, tg.TargetID, "canary-skill", 0, false)
	require.NoError(t, err)
	check("/ui/skills", http.StatusOK, "No skill packaging on record")
	check("/ui/skills?scope_id=done", http.StatusOK, `<td class="skill-name">canary-skill</td>`, pkg.TreeDigest, `data-state="pending"`,
		`href="/ui/scopes/done/export"`)
	check("/ui/operations/not-a-uuid", http.StatusNotFound)
	check("/ui/nope", http.StatusNotFound)
	for _, body := range all {
		require.NotContains(t, body, "CANARY-3f9e1c")
		require.NotContains(t, body, "vault path")
		require.NotContains(t, body, coordinator.KindMaintenance, "kinds are shown by their public names")
	}
}

func TestOperationsFiltersAndPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string // creation order
	kinds := map[string]string{}
	for i := range 7 {
		scope := fmt.Sprintf("s%d", i)
		f.capture(scope, "The queue is durable.", map[string]any{"kind": "task-outcome"})
		var w db.WorkItem
		if i%3 == 0 {
			w = f.enqueueExperience(scope)
			kinds[w.WorkID] = experience.PublicKind
		} else {
			w = f.enqueueMemory(scope)
			kinds[w.WorkID] = memory.PublicKind
		}
		ids = append(ids, w.WorkID)
		testutil.WaitDBPast(t, f.store, w.CreatedAt) // distinct created_at makes "newest first" observable
	}
	maint := f.enqueue(coordinator.MaintenanceRequest())
	ids = append(ids, maint.WorkID)
	kinds[maint.WorkID] = coordinator.PublicKindMaintenance
	newest := make([]string, len(ids))
	for i, id := range ids {
		newest[len(ids)-1-i] = id
	}

	// keyset paging, newest first, following the rendered "Older" link
	var seen []string
	target := "/ui/operations?limit=3"
	for pages := 0; target != ""; pages++ {
		require.Less(t, pages, 5)
		body := f.page(target, http.StatusOK)
		got := rows(body)
		require.LessOrEqual(t, len(got), 3)
		seen = append(seen, got...)
		if pages > 0 {
			require.Contains(t, body, "« Newest")
		}
		target = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			target = html.UnescapeString(m[1])
			require.Contains(t, target, "limit=3")
		}
	}
	require.Equal(t, newest, seen)

	// filters
	body := f.page("/ui/operations?kind=experience_incubation", http.StatusOK)
	for _, id := range rows(body) {
		require.Equal(t, experience.PublicKind, kinds[id])
	}
	require.Len(t, rows(body), 3)
	require.Equal(t, []string{ids[2]}, rows(f.page("/ui/operations?scope_id=s2", http.StatusOK)))
	require.Empty(t, rows(f.page("/ui/operations?scope_id=nope", http.StatusOK)))

	require.Equal(t, 7, f.step("w", fail))
	require.Len(t, rows(f.page("/ui/operations?status=failed&kind=memory_flush", http.StatusOK)), 4)
	require.Equal(t, []string{maint.WorkID}, rows(f.page("/ui/operations?status=queued", http.StatusOK)), "only maintenance is left queued")
	require.Len(t, rows(f.page("/ui/blocked?kind=experience_incubation", http.StatusOK)), 3)
	b := f.page("/ui/blocked?limit=2", http.StatusOK)
	require.Equal(t, newest[1:3], rows(b), "newest[0] is the queued maintenance run")
	next := html.UnescapeString(nextRE.FindStringSubmatch(b)[1])
	require.True(t, strings.HasPrefix(next, "/ui/blocked?"), next)
	require.NotContains(t, next, "status=")
	require.Equal(t, newest[3:5], rows(f.page(next, http.StatusOK)))

	// invalid filters are a 422 page with a message, not a 500
	for target, msg := range map[string]string{
		"/ui/operations?cursor=***":                           "cursor is malformed",
		"/ui/operations?cursor=bm90OmFjdXJzb3I":               "cursor is malformed",
		"/ui/operations?kind=powercontext.maint":              "kind must be one of",
		"/ui/operations?status=done":                          "status must be one of",
		"/ui/operations?limit=0":                              "limit must be 1..100",
		"/ui/blocked?limit=101":                               "limit must be 1..100",
		"/ui/operations?scope_id=" + strings.Repeat("x", 257): "scope must be",
	} {
		body := f.page(target, http.StatusUnprocessableEntity)
		require.Contains(t, body, msg, target)
		require.Empty(t, rows(body))
	}
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	scope := `<script>alert("x")</script>&'"`
	f.capture(scope, "x.", nil)
	w := f.enqueueMemory(scope)
	for _, target := range []string{"/ui/operations", "/ui/operations/" + w.WorkID} {
		body := f.page(target, http.StatusOK)
		require.NotContains(t, body, "<script>alert")
		require.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;&#34;")
	}
	body := f.page("/ui/operations?scope_id="+strings.ReplaceAll(scope, "&", "%26"), http.StatusOK)
	require.Equal(t, []string{w.WorkID}, rows(body))
	require.NotContains(t, body, "<script>alert")
}

func TestStaticAndMethods(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.get("/ui/static/app.js")
	require.Equal(t, http.StatusOK, r.Code)
	require.Contains(t, r.Header.Get("Content-Type"), "javascript")
	require.Contains(t, r.Body, "expected_version")
	require.Contains(t, r.Body, "X-PowerContext-UI")
	r = f.get("/ui/static/app.css")
	require.Equal(t, http.StatusOK, r.Code)
	require.Contains(t, r.Header.Get("Content-Type"), "text/css")
	require.Equal(t, http.StatusNotFound, f.get("/ui/static/").Code)
	require.Equal(t, http.StatusNotFound, f.get("/ui/static/nope.js").Code)
	require.Equal(t, http.StatusMethodNotAllowed, f.do(http.MethodPost, "/ui/operations", nil).Code)
	require.Equal(t, http.StatusMethodNotAllowed, f.do(http.MethodDelete, "/ui", nil).Code)
	h := f.do(http.MethodHead, "/ui/blocked", nil)
	require.Equal(t, http.StatusOK, h.Code)
	require.Empty(t, h.Body)
}
