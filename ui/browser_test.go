package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/auth"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/memory"
	"github.com/powercontext/powercontext/portability"
	"github.com/powercontext/powercontext/provider"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
	"github.com/powercontext/powercontext/ui"
)

const (
	chromiumPath = "/usr/bin/chromium"
	// EnvRequireBrowser=1 turns a missing Chromium into a failure instead of a skip (CI sets it).
	envRequireBrowser = "PC_TEST_REQUIRE_BROWSER"
	// envTestOutputDir, when set, receives the screenshots; otherwise they go to t.TempDir().
	envTestOutputDir = "TEST_OUTPUT_DIR"
	// leadScreenshot is a fixed copy of the final screenshot for a human to look at.
	leadScreenshot = "/tmp/pc-ui-screenshot.png"
)

// firstTryFails is a memory handler that fails non-retryably in the first recovery generation and runs the real
// handler after an operator retry: every new window becomes a blocked lane, and Retry then succeeds.
type firstTryFails struct{ inner *memory.Handler }

func (h firstTryFails) Kind() string                              { return h.inner.Kind() }
func (h firstTryFails) PayloadVersions() coordinator.VersionRange { return h.inner.PayloadVersions() }
func (h firstTryFails) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	if item.RecoveryGeneration == 0 {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryProvider, coordinator.CodeInvalidOutput, false)
	}
	return h.inner.Prepare(ctx, item)
}

// TestBrowserBlockedLaneRetryAndConflict runs the dashboard and the API in one real HTTP server with a real
// worker, and drives headless Chromium: a failed operation shows in the blocked-lanes view, Retry makes it queued
// and then succeeded, Cancel on a page whose version went stale shows the conflict message, and an Experience
// candidate is reviewed from the navigation: its escaped lesson runs no script, Approve changes its status, and a
// stale Reject shows the conflict. On the Skills page a published skill shows its state, Unpublish and Publish
// change it, Unpublish on a page gone stale shows the conflict, Revoke shows the target revoked, and the export
// link downloads the scope's export.
func TestBrowserBlockedLaneRetryAndConflict(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv(envRequireBrowser) == "1" {
			t.Fatalf("%s is missing and %s=1: install chromium (apt-get install -y chromium)", chromiumPath, envRequireBrowser)
		}
		t.Skipf("%s is missing (set %s=1 to require it)", chromiumPath, envRequireBrowser)
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a deadline against hangs, not a speed claim
	defer cancel()

	// --- the service: API + dashboard on one server, a worker, a member and a scheduler leader ---
	store := enginetest.Open(t, db.EngineSQLite)
	ledger := coordinator.NewLedger(store)
	sessions := ui.NewSessions(ui.SessionConfig{Store: store, Principals: auth.AdminToken("tok")})
	dash := ui.New(ui.Deps{Ledger: ledger, Store: store, Logger: zerolog.Nop(), AuthToken: "tok", Sessions: sessions})
	api := handlers.New(handlers.Deps{Journal: sources.NewJournal(store), Memory: memory.Reader{Store: store},
		Experience: experience.Reviews{Store: store}, Ledger: ledger, Store: store, Role: "all", Logger: zerolog.Nop(), AuthToken: "tok",
		UI: dash, UISessions: sessions})
	srv := httptest.NewServer(api)
	defer srv.Close()

	worker, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "browser-worker-1", Concurrency: 2,
		Poll: 20 * time.Millisecond, Lease: 30 * time.Second, Heartbeat: 5 * time.Second, ShutdownGrace: 2 * time.Second,
		Logger: zerolog.Nop()}, firstTryFails{&memory.Handler{Store: store, Provider: provider.NewLocal()}})
	require.NoError(t, err)
	wctx, stopWorker := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = worker.Run(wctx) })
	defer func() { stopWorker(); wg.Wait() }()

	member := coordinator.NewMembership(store, db.RuntimeMember{MemberID: "browser-worker-1", Role: "all",
		BuildVersion: "v0.0.0-test", SchemaMin: 1, SchemaMax: 1, PayloadMin: 1, PayloadMax: 1, BehaviorRevision: "r1"},
		time.Second, time.Minute, zerolog.Nop())
	require.NoError(t, member.Beat(ctx))
	lead, err := ledger.AcquireLease(ctx, coordinator.LeaseWorkDiscovery, "browser-worker-1", time.Minute)
	require.NoError(t, err)
	require.True(t, lead.Acquired)

	// --- two failed operations (blocked lanes) whose Sources carry the canary ---
	blockedOp := func(scope string) db.WorkItem {
		body, _ := json.Marshal(map[string]any{"scope_id": scope, "content": canary})
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sources", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, res.StatusCode)
		_ = res.Body.Close()
		enq, err := ledger.Enqueue(ctx, memory.Consumer(3).EnqueueRequest(scope))
		require.NoError(t, err)
		worker.Wake()
		var w db.WorkItem
		require.Eventually(t, func() bool {
			w, err = ledger.Get(ctx, enq.Item.WorkID)
			return err == nil && w.Status == db.StatusFailed
		}, 10*time.Second, 10*time.Millisecond)
		return w
	}
	opA := blockedOp("team-alpha/blocked")
	opB := blockedOp("team-beta/blocked")

	// --- the browser ---
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	outDir := os.Getenv(envTestOutputDir)
	if outDir == "" {
		outDir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	shot := func(name string) string {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		path := filepath.Join(outDir, name)
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot: %s", path)
		return path
	}
	html := func() string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		require.NoError(t, err)
		require.NotContains(t, s, "CANARY-3f9e1c", "no Source content on any page")
		return s
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return s
	}

	// Overview: the queue shows the failed work, the member and the leader with its fence.
	// Sign in through the form: /ui without a session shows it (its stylesheet loaded), the post opens a session.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`))))
	bg, err := chromedp.Run(bctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	require.NoError(t, err)
	require.NotEqual(t, "rgba(0, 0, 0, 0)", bg, "app.css loaded before sign-in")
	shot("00-sign-in.png")
	require.NoError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), "tok"),
		chromedp.Click(chromedp.CSS(`form[action="/ui/login"] button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#leader-fence"))))
	cookies, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.NotContains(t, cookies, ui.CookieName, "the session cookie is HttpOnly")
	page := html()
	require.Contains(t, page, "2 blocked lanes")
	require.Contains(t, page, "browser-worker-1")
	require.Equal(t, "1", strings.TrimSpace(text("#leader-fence")))
	shot("00-overview.png")

	// Blocked lanes: both failed heads; Retry A.
	rowA := `tr[data-op-id="` + opA.WorkID + `"]`
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/blocked"), chromedp.WaitVisible(chromedp.CSS(rowA))))
	page = html()
	require.Contains(t, page, opB.WorkID)
	require.Contains(t, text(rowA), "provider/invalid_output")
	shot("01-blocked-lanes.png")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(rowA+` button[data-action="retry"]`))))
	// Success reloads the page and shows the outcome in the flash banner; A is no longer blocked.
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#flash"))))
	flash := text("#flash")
	require.Contains(t, flash, "Retry accepted: operation "+opA.WorkID[:8]+" is now queued")
	require.Contains(t, flash, "(version ")

	// A's page: queued → succeeded (the page refreshes itself while the operation is in motion).
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/operations/"+opA.WorkID)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := chromedp.Run(bctx, chromedp.Evaluate[string](
			`(document.getElementById('op-status') || {dataset: {}}).dataset.status || ''`))
		if err == nil && st == db.StatusSucceeded {
			break
		}
		require.True(t, time.Now().Before(deadline), "operation A did not succeed after Retry (status %q, err %v)", st, err)
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS("#result"))))
	page = html()
	require.Contains(t, page, "out-succeeded")
	require.Contains(t, page, "provider/invalid_output") // the first attempt stays in the timeline

	// B: open its page (failed, version v), let another operator retry it behind the page's back, then Cancel.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/operations/"+opB.WorkID),
		chromedp.WaitVisible(chromedp.CSS(`#op-status[data-status="failed"]`))))
	_, err = ledger.Retry(ctx, opB.WorkID, opB.StateVersion)
	require.NoError(t, err)
	cancelBtn := chromedp.CSS(`.toolbar button[data-action="cancel"]`)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(cancelBtn))) // arms
	require.Equal(t, "Confirm cancel", text(`.toolbar button[data-action="cancel"]`))
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(cancelBtn), chromedp.WaitVisible(chromedp.CSS(".msg.conflict"))))
	msg := text(".msg.conflict")
	require.Contains(t, msg, "This operation changed (now ")
	require.Contains(t, msg, ", version ")
	require.Contains(t, msg, "reload to act on its current state")
	html()
	final := shot("02-operation-conflict.png")
	if data, err := os.ReadFile(final); err == nil {
		_ = os.WriteFile(leadScreenshot, data, 0o644)
	}

	// The stale page changed nothing: B went on from the other operator's retry, not cancelled.
	w, err := ledger.Get(ctx, opB.WorkID)
	require.NoError(t, err)
	require.NotEqual(t, db.StatusCancelled, w.Status)

	// Experience review: two pending candidates, one whose lesson is markup that would run if it were not escaped.
	now, err := store.DBNow(ctx)
	require.NoError(t, err)
	candA := db.ExperienceCandidate{CandidateID: "aaaaaaaa-0000-4000-8000-000000000001", ScopeID: "team-alpha/lessons",
		WorkID: opA.WorkID, Title: "Check <b>staging</b> first",
		Lesson:         "Before a deploy, check staging.\n<script>window.pcInjected = 1</script><img src=x onerror=\"window.pcInjected = 2\">",
		CitedPositions: []byte(`[1,4]`), Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}
	candB := candA
	candB.CandidateID, candB.Title, candB.Lesson = "bbbbbbbb-0000-4000-8000-000000000002", "Pin the toolchain", "Pin Go."
	candB.CreatedAt = now.Add(-time.Second)
	candB.UpdatedAt = candB.CreatedAt
	for _, c := range []db.ExperienceCandidate{candA, candB} {
		require.NoError(t, store.ExperienceCandidateInsert(ctx, c))
	}
	// From the navigation to the scope's list (through the filter form), then to A's page.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`header nav a[href="/ui/experience"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.filters input[name="scope_id"]`)),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name="scope_id"]`), "team-alpha/lessons"),
		chromedp.Submit(chromedp.CSS(`form.filters input[name="scope_id"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-candidate-id="`+candA.CandidateID+`"]`))))
	page = html()
	require.Contains(t, page, candB.CandidateID)
	require.NotContains(t, page, "Before a deploy", "the list shows no lesson text")
	shot("03-experience-candidates.png")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`tr[data-candidate-id="`+candA.CandidateID+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#lesson-text"))))
	require.Equal(t, "Check <b>staging</b> first", text("#lesson-title"))
	require.Contains(t, text("#lesson-text"), `<script>window.pcInjected = 1</script><img src=x onerror="window.pcInjected = 2">`,
		"the markup is shown as text")
	injected, err := chromedp.Run(bctx, chromedp.Evaluate[string](`String(window.pcInjected)`))
	require.NoError(t, err)
	require.Equal(t, "undefined", injected, "no script from the lesson ran")
	require.Equal(t, "pending", text("#candidate-status"))
	shot("04-experience-candidate.png")
	// Approve: the page comes back with the new status.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#review-flash"))))
	require.Equal(t, "approved", text("#candidate-status"))
	require.Contains(t, text("#review-flash"), "Approved: the candidate is now approved (version 2).")
	gotA, err := store.ExperienceCandidateGet(ctx, candA.CandidateID)
	require.NoError(t, err)
	require.Equal(t, experience.StatusApproved, gotA.Status)
	// B's page goes stale (another reviewer approves it), then Reject: the conflict message, B stays approved.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/experience/"+candB.CandidateID), chromedp.WaitVisible(chromedp.CSS("#reject"))))
	_, err = experience.Reviews{Store: store}.Review(ctx, candB.CandidateID, 1, true)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#reject")), chromedp.WaitVisible(chromedp.CSS("#review-conflict"))))
	require.Contains(t, text("#review-conflict"), "it is now approved (version 2; the page showed version 1). Nothing was changed.")
	gotB, err := store.ExperienceCandidateGet(ctx, candB.CandidateID)
	require.NoError(t, err)
	require.Equal(t, experience.StatusApproved, gotB.Status)
	shot("05-experience-conflict.png")
	// The list shows A's new status.
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/experience?scope_id=team-alpha/lessons"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-candidate-id="`+candA.CandidateID+`"]`))))
	require.Contains(t, text(`tr[data-candidate-id="`+candA.CandidateID+`"] .badge`), "approved")

	// Skills: a skill with two revisions published to an enrolled laptop that reports holding it, and a CI runner.
	const skill = "check-staging-first"
	seedSkillRevision(t, store, "team-alpha/lessons", skill, 1)
	rev2 := seedSkillRevision(t, store, "team-alpha/lessons", skill, 2)
	svc := skills.Service{Store: store}
	laptop := enrolledTarget(t, svc, "team-alpha/lessons", "laptop <b>bold</b>")
	ciRunner := enrolledTarget(t, svc, "team-alpha/lessons", "ci-runner")
	_, err = svc.Publish(ctx, laptop.TargetID, skill, 0, false)
	require.NoError(t, err)
	_, err = svc.Report(ctx, laptop, skill, skills.Report{ObservedRevision: 2, ObservedTreeDigest: rev2.TreeDigest})
	require.NoError(t, err)
	laptopRow := `tr[data-target-id="` + laptop.TargetID + `"][data-skill="` + skill + `"]`
	stateIs := func(row, state string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(chromedp.CSS(row + ` .pub-state[data-state="` + state + `"]`))
	}
	// From the navigation, through the scope form, to the scope's page: the laptop holds the current revision.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`header nav a[href="/ui/skills"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.filters input[name="scope_id"]`)),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name="scope_id"]`), "team-alpha/lessons"),
		chromedp.Submit(chromedp.CSS(`form.filters input[name="scope_id"]`)),
		stateIs(laptopRow, "current")))
	require.Equal(t, "2", strings.TrimSpace(text(`tr[data-skill="`+skill+`"] .current-revision`)))
	require.Equal(t, "2", strings.TrimSpace(text(`tr[data-skill="`+skill+`"] .revision-count`)))
	require.Equal(t, "laptop <b>bold</b>", text(`section[data-target-id="`+laptop.TargetID+`"] .target-name`), "the name is text")
	require.NotContains(t, html(), "SKILL-LESSON", "no package content")
	shot("06-skills.png")
	// Unpublish: the page comes back confirming it; the agent still holds the folder, so the state is pending.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(laptopRow+` button.unpublish`)),
		chromedp.WaitVisible(chromedp.CSS("#skills-flash")), stateIs(laptopRow, "pending")))
	require.Contains(t, text("#skills-flash"), "Unpublished: "+skill+" is to be removed from laptop <b>bold</b>")
	require.Contains(t, text(laptopRow+` .desired`), "unpublished")
	// Publish it again: the agent's folder is the current revision, so the state is current at once.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(laptopRow+` button.publish`)),
		chromedp.WaitVisible(chromedp.CSS("#skills-flash")), stateIs(laptopRow, "current")))
	require.Contains(t, text("#skills-flash"), "Published: "+skill+" on laptop <b>bold</b> follows the current revision 2")
	p, err := store.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: laptop.TargetID, SkillName: skill})
	require.NoError(t, err)
	require.Equal(t, skills.DesiredPublished, p.DesiredState)
	// Another operator rolls the laptop back behind the page's back; Unpublish on the stale page is refused.
	_, err = svc.Publish(ctx, laptop.TargetID, skill, 1, false)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(laptopRow+` button.unpublish`)),
		chromedp.WaitVisible(chromedp.CSS("#skills-conflict"))))
	require.Contains(t, text("#skills-conflict"), "it is now published at revision 1, state update_available")
	require.Contains(t, text("#skills-conflict"), "Nothing was changed.")
	require.Equal(t, "update_available", strings.TrimSpace(text(laptopRow+` .pub-state`)), "the page at the current state")
	p, err = store.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: laptop.TargetID, SkillName: skill})
	require.NoError(t, err)
	require.Equal(t, skills.DesiredPublished, p.DesiredState)
	require.EqualValues(t, 1, p.DesiredRevision)
	shot("07-skills-conflict.png")
	// Revoke the CI runner: its card says revoked and offers no form any more.
	ciCard := `section[data-target-id="` + ciRunner.TargetID + `"]`
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(ciCard+` button.revoke`)),
		chromedp.WaitVisible(chromedp.CSS(ciCard+` .target-status[data-status="revoked"]`))))
	require.Contains(t, text("#skills-flash"), "Revoked: target ci-runner receives nothing from now on.")
	forms, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('`+ciCard+` form').length`))
	require.NoError(t, err)
	require.Equal(t, 0, forms)
	tg, err := svc.Target(ctx, ciRunner.TargetID)
	require.NoError(t, err)
	require.False(t, tg.RevokedAt.IsZero())
	shot("08-skills-revoked.png")
	// The export download, fetched the way the link would be: an attachment whose first line is the export header.
	dl, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]string](`fetch(document.getElementById('export-download').href).then(async r => ({
		status: String(r.status), disposition: r.headers.get('Content-Disposition') || '', type: r.headers.get('Content-Type') || '',
		first: (await r.text()).split('\n')[0]}))`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, "200", dl["status"])
	require.Equal(t, `attachment; filename="scope-team-alpha-lessons.jsonl"`, dl["disposition"])
	require.Equal(t, "application/x-ndjson", dl["type"])
	require.Contains(t, dl["first"], `"format":"powercontext.scope-export"`)
	require.Contains(t, dl["first"], `"scope_id":"team-alpha/lessons"`)
	exports, err := ledger.List(ctx, coordinator.ListParams{Kinds: []string{portability.KindExport}, ScopeID: "team-alpha/lessons", Limit: 10})
	require.NoError(t, err)
	require.Len(t, exports, 1, "the download is recorded as a scope_export operation")

	// Sign out: the session is deleted, and the dashboard shows the sign-in form again.
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`form.signout button`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`))))
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/blocked"), chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`))))
	require.NotContains(t, html(), "Blocked lanes</h1>")
}
