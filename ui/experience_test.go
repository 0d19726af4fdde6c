package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"sort"
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
	"github.com/powercontext/powercontext/sources"
	"github.com/powercontext/powercontext/ui"
)

var candRowRE = regexp.MustCompile(`<tr data-candidate-id="([0-9a-f-]{36})"`)

func candRows(body string) []string {
	var ids []string
	for _, m := range candRowRE.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// fixtureOn is the dashboard over a given migrated store (newFixture's, for any engine).
func fixtureOn(t testing.TB, store db.Store) *fixture {
	ledger := coordinator.NewLedger(store)
	return &fixture{t: t, store: store, ledger: ledger, journal: sources.NewJournal(store),
		h: ui.New(ui.Deps{Ledger: ledger, Store: store, Logger: zerolog.Nop()})}
}

// candidate inserts one candidate created at at (state version 1) and returns it.
func (f *fixture) candidate(scope, status string, at time.Time, title, lesson string, cited ...int64) db.ExperienceCandidate {
	f.t.Helper()
	positions := "["
	for i, p := range cited {
		if i > 0 {
			positions += ","
		}
		positions += fmt.Sprint(p)
	}
	c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(), Title: title,
		Lesson: lesson, CitedPositions: []byte(positions + "]"), Status: status, StateVersion: 1,
		CreatedAt: at.UTC().Truncate(time.Microsecond), UpdatedAt: at.UTC().Truncate(time.Microsecond)}
	require.NoError(f.t, f.store.ExperienceCandidateInsert(context.Background(), c))
	return c
}

func (f *fixture) candidateNow(id string) db.ExperienceCandidate {
	f.t.Helper()
	c, err := f.store.ExperienceCandidateGet(context.Background(), id)
	require.NoError(f.t, err)
	return c
}

func (f *fixture) post(target, form string, headers map[string]string, cookie *http.Cookie) resp {
	return serveUI(f.h, exchange{method: http.MethodPost, target: target, form: form, headers: headers, cookie: cookie})
}

// reviewOrder is the list's order: pending first, then the rest; newest first (created_at, then id) within each.
func reviewOrder(cs []db.ExperienceCandidate) []string {
	cs = append([]db.ExperienceCandidate(nil), cs...)
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if pa, pb := a.Status == experience.StatusPending, b.Status == experience.StatusPending; pa != pb {
			return pa
		}
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return bytes.Compare([]byte(a.CandidateID), []byte(b.CandidateID)) > 0
	})
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.CandidateID
	}
	return ids
}

// follow pages through target by its "More" links and returns every row in order.
func (f *fixture) follow(target string, maxPages int) []string {
	f.t.Helper()
	var seen []string
	for pages := 0; target != ""; pages++ {
		require.Less(f.t, pages, maxPages, "too many pages")
		body := f.page(target, http.StatusOK)
		seen = append(seen, candRows(body)...)
		target = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			target = html.UnescapeString(m[1])
		}
	}
	return seen
}

// TestExperienceListPendingFirstAndPaging: a scope's candidates, pending first and newest first within each
// section (ties on created_at broken by id, as the database orders them — on every engine), paged by the "More"
// link without gaps or repeats, even when new candidates arrive between pages; status and scope filter; the list
// shows no lesson text; bad filters are a 422 page.
func TestExperienceListPendingFirstAndPaging(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		f := fixtureOn(t, s)
		now, err := s.DBNow(context.Background())
		require.NoError(t, err)
		base := now.Add(-time.Hour)
		statuses := []string{experience.StatusPending, experience.StatusApproved, experience.StatusPending,
			experience.StatusRejected, experience.StatusWithdrawn, experience.StatusPending, experience.StatusApproved}
		var all []db.ExperienceCandidate
		for i := range 14 {
			at := base.Add(time.Duration(i/3) * time.Second) // three candidates share each created_at, like one commit's
			all = append(all, f.candidate("team-a/x", statuses[i%len(statuses)], at, fmt.Sprintf("LESSON-TITLE-%d", i),
				"LESSON-TEXT do not list", int64(i+1)))
		}
		other := f.candidate("team-a/y", experience.StatusPending, now, "other scope", "other", 1)
		want := reviewOrder(all)

		first := f.page("/ui/experience?scope_id=team-a/x", http.StatusOK)
		require.Equal(t, want, candRows(first), "pending first, then newest first")
		require.NotContains(t, first, "LESSON-TITLE", "the list shows no content")
		require.NotContains(t, first, "LESSON-TEXT")
		require.NotContains(t, first, other.CandidateID)
		require.Contains(t, first, `aria-current="page">Experience<`)

		for _, limit := range []int{1, 2, 3, 5} {
			got := f.follow(fmt.Sprintf("/ui/experience?scope_id=team-a/x&limit=%d", limit), 20)
			require.Equal(t, want, got, "limit %d", limit)
		}
		// status filter
		var pending []db.ExperienceCandidate
		for _, c := range all {
			if c.Status == experience.StatusPending {
				pending = append(pending, c)
			}
		}
		require.Equal(t, reviewOrder(pending), f.follow("/ui/experience?scope_id=team-a/x&status=pending&limit=2", 10))
		for _, st := range []string{experience.StatusApproved, experience.StatusWithdrawn} {
			for _, id := range candRows(f.page("/ui/experience?scope_id=team-a/x&status="+st, http.StatusOK)) {
				require.Equal(t, st, f.candidateNow(id).Status)
			}
		}

		// New candidates arrive between pages: newer ones stay behind the cursor (they are on the first page of a
		// fresh list), older ones come up in their place; nothing already shown repeats.
		body := f.page("/ui/experience?scope_id=team-a/x&limit=2", http.StatusOK)
		shown := candRows(body)
		require.Equal(t, want[:2], shown)
		for range 5 {
			all = append(all, f.candidate("team-a/x", experience.StatusPending, now.Add(time.Minute), "new", "new", 1))
		}
		late := f.candidate("team-a/x", experience.StatusApproved, base.Add(-time.Hour), "oldest", "oldest", 1)
		next := html.UnescapeString(nextRE.FindStringSubmatch(body)[1])
		rest := f.follow(next, 20)
		require.Equal(t, want[2:], rest[:len(rest)-1])
		require.Equal(t, late.CandidateID, rest[len(rest)-1])

		// invalid filters: a 422 page with the reason, no rows
		for target, msg := range map[string]string{
			"/ui/experience?scope_id=team-a/x&status=done":               "status must be one of pending, approved, rejected, withdrawn",
			"/ui/experience?scope_id=team-a/x&limit=0":                   "limit must be 1..100",
			"/ui/experience?scope_id=team-a/x&limit=101":                 "limit must be 1..100",
			"/ui/experience?scope_id=team-a/x&cursor=***":                "cursor is malformed",
			"/ui/experience?scope_id=team-a/x&cursor=e30":                "cursor is malformed",
			"/ui/experience?scope_id=" + strings.Repeat("x", 257):        "scope must be",
			"/ui/experience?scope_id=team-a/x&status=pending&cursor=e30": "cursor is malformed",
		} {
			body := f.page(target, http.StatusUnprocessableEntity)
			require.Contains(t, body, msg, target)
			require.Empty(t, candRows(body), target)
		}
		require.Empty(t, candRows(f.page("/ui/experience?scope_id=nobody", http.StatusOK)))
	})
}

// TestExperienceListOffersRecentScopes: without a scope the page lists the scopes of recent incubations with their
// pending counts (and no candidate rows).
func TestExperienceListOffersRecentScopes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body := f.page("/ui/experience", http.StatusOK)
	require.Contains(t, body, "No experience incubations on record")
	for _, scope := range []string{"alpha", "beta"} {
		f.capture(scope, "The queue is durable.", map[string]any{"kind": "task-outcome"})
		w := f.enqueueExperience(scope)
		testutil.WaitDBPast(t, f.store, w.CreatedAt) // distinct created_at makes "newest first" observable
	}
	now := time.Now()
	for range 3 {
		f.candidate("beta", experience.StatusPending, now, "t", "l", 1)
	}
	f.candidate("beta", experience.StatusApproved, now, "t", "l", 1)
	body = f.page("/ui/experience", http.StatusOK)
	require.Empty(t, candRows(body))
	require.Regexp(t, `href="/ui/experience\?scope_id=beta"[^>]*>beta</a></td>\s*<td class="num">3</td>`, body)
	require.Regexp(t, `href="/ui/experience\?scope_id=alpha"[^>]*>alpha</a></td>\s*<td class="num">0</td>`, body)
	require.Less(t, strings.Index(body, ">beta<"), strings.Index(body, ">alpha<"), "newest incubation first")

	// An incubation's operation page links to its scope's candidates.
	op := f.page("/ui/operations?kind=experience_incubation&scope_id=beta", http.StatusOK)
	id := rows(op)[0]
	require.Contains(t, f.page("/ui/operations/"+id, http.StatusOK), `id="review-link" href="/ui/experience?scope_id=beta"`)
}

// TestExperienceDetailApproveReject: the candidate page shows the lesson, its cited positions and the two forms
// carrying expected_version; approve and reject change the candidate and redirect to its page, which says so; a
// stale or already used version is a 409 page naming the current state and changes nothing; bad input is 4xx.
func TestExperienceDetailApproveReject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := time.Now()
	a := f.candidate("team-a/x", experience.StatusPending, now, "Check the staging database first",
		"Before a Friday deploy,\ncheck that staging-db-1 is up.", 3, 7, 12)
	b := f.candidate("team-a/x", experience.StatusPending, now, "Pin the toolchain", "Pin Go in go.mod.", 4)

	body := f.page("/ui/experience/"+a.CandidateID, http.StatusOK)
	require.Contains(t, body, `<h2 id="lesson-title">Check the staging database first</h2>`)
	require.Contains(t, body, "Before a Friday deploy,\ncheck that staging-db-1 is up.")
	require.Contains(t, body, `<li class="mono">3</li><li class="mono">7</li><li class="mono">12</li>`)
	require.Contains(t, body, `data-status="pending"`)
	require.Contains(t, body, `href="/ui/operations/`+a.WorkID+`"`)
	require.Contains(t, body, `<title>Experience candidate `+a.CandidateID[:8]+` · PowerContext operations</title>`,
		"the page title names the candidate, not its lesson")
	for _, act := range []string{"approve", "reject"} {
		require.Contains(t, body, `<form method="post" action="/ui/experience/`+a.CandidateID+`/`+act+`"><input type="hidden" name="expected_version" value="1">`)
	}
	require.Equal(t, "no-store", f.get("/ui/experience/"+a.CandidateID).Header.Get("Cache-Control"))

	// Approve A with the version the page showed.
	r := f.post("/ui/experience/"+a.CandidateID+"/approve", "expected_version=1", nil, nil)
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
	require.Equal(t, "/ui/experience/"+a.CandidateID+"?reviewed=approved", r.Header.Get("Location"))
	got := f.candidateNow(a.CandidateID)
	require.Equal(t, experience.StatusApproved, got.Status)
	require.Equal(t, int64(2), got.StateVersion)
	body = f.page(r.Header.Get("Location"), http.StatusOK)
	require.Contains(t, body, `id="review-flash"`)
	require.Contains(t, body, "Approved: the candidate is now approved (version 2).")
	require.NotContains(t, body, `action="/ui/experience/`+a.CandidateID+`/approve"`, "a reviewed candidate has no forms")
	require.NotContains(t, f.page("/ui/experience/"+b.CandidateID+"?reviewed=approved", http.StatusOK), "review-flash",
		"the flash never claims a review that did not happen")

	// The same (now stale) page approves or rejects again: 409 with the current state, nothing changes.
	for _, act := range []string{"approve", "reject"} {
		r = f.post("/ui/experience/"+a.CandidateID+"/"+act, "expected_version=1", nil, nil)
		require.Equal(t, http.StatusConflict, r.Code, act)
		require.Contains(t, r.Body, `id="review-conflict"`)
		require.Contains(t, r.Body, "This candidate changed since the page was loaded: it is now approved (version 2; the page showed version 1). Nothing was changed.")
		require.Contains(t, r.Body, `data-status="approved"`)
	}
	require.Equal(t, int64(2), f.candidateNow(a.CandidateID).StateVersion)

	// A version the candidate never had is a conflict too, and B stays pending.
	r = f.post("/ui/experience/"+b.CandidateID+"/reject", "expected_version=7", nil, nil)
	require.Equal(t, http.StatusConflict, r.Code)
	require.Contains(t, r.Body, "it is now pending (version 1; the page showed version 7)")
	require.Contains(t, r.Body, `name="expected_version" value="1"`, "the conflict page offers the current version")
	require.Equal(t, experience.StatusPending, f.candidateNow(b.CandidateID).Status)

	// Reject B.
	r = f.post("/ui/experience/"+b.CandidateID+"/reject", "expected_version=1", nil, nil)
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
	require.Equal(t, "/ui/experience/"+b.CandidateID+"?reviewed=rejected", r.Header.Get("Location"))
	require.Equal(t, experience.StatusRejected, f.candidateNow(b.CandidateID).Status)
	require.Contains(t, f.page(r.Header.Get("Location"), http.StatusOK), "Rejected: the candidate is now rejected (version 2).")

	// Bad input: 4xx pages, never a 500, nothing changes.
	c := f.candidate("team-a/x", experience.StatusPending, now, "t", "l", 1)
	for _, form := range []string{"", "expected_version=", "expected_version=0", "expected_version=-1", "expected_version=abc",
		"expected_version=99999999999999999999"} {
		r = f.post("/ui/experience/"+c.CandidateID+"/approve", form, nil, nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.Code, form)
		require.Contains(t, r.Body, "expected_version")
	}
	r = f.post("/ui/experience/"+c.CandidateID+"/approve", "expected_version="+strings.Repeat("1", 5000), nil, nil)
	require.Equal(t, http.StatusBadRequest, r.Code, "an oversized form")
	require.Equal(t, experience.StatusPending, f.candidateNow(c.CandidateID).Status)
	for _, id := range []string{uuid.NewString(), "not-a-uuid", strings.ToUpper(c.CandidateID) + "x"} {
		f.page("/ui/experience/"+id, http.StatusNotFound)
		require.Equal(t, http.StatusNotFound, f.post("/ui/experience/"+id+"/approve", "expected_version=1", nil, nil).Code, id)
	}
	require.Equal(t, http.StatusNotFound, f.get("/ui/experience/"+c.CandidateID+"/approve").Code, "a GET never reviews")
	require.Equal(t, http.StatusMethodNotAllowed, f.do(http.MethodPost, "/ui/experience/"+c.CandidateID, nil).Code)
	require.Equal(t, experience.StatusPending, f.candidateNow(c.CandidateID).Status)
}

// TestExperienceEscaping: a lesson and title holding markup render as text (html/template's contextual escaping)
// under the dashboard's script-src 'self' policy; a withdrawn candidate's page says why it has no text.
func TestExperienceEscaping(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	title := `<img src=x onerror="alert(1)">Title`
	lesson := `<script>alert("pwned")</script></div><a href="javascript:alert(2)">x</a>&amp;`
	c := f.candidate(`scope<script>`, experience.StatusPending, time.Now(), title, lesson, 1)
	r := f.get("/ui/experience/" + c.CandidateID)
	require.Equal(t, http.StatusOK, r.Code)
	require.Contains(t, r.Header.Get("Content-Security-Policy"), "script-src 'self'")
	require.NotContains(t, r.Header.Get("Content-Security-Policy"), "unsafe-inline")
	require.NotContains(t, r.Body, "<script>alert")
	require.NotContains(t, r.Body, "<img src=x")
	require.NotContains(t, r.Body, `<a href="javascript:`)
	require.Contains(t, r.Body, "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;&lt;/div&gt;&lt;a href=&#34;javascript:alert(2)&#34;&gt;x&lt;/a&gt;&amp;amp;")
	require.Contains(t, r.Body, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Title")
	require.Equal(t, 1, strings.Count(r.Body, "<script"), "only the layout's /ui/static/app.js")
	require.Contains(t, r.Body, `<script src="/ui/static/app.js" defer></script>`)
	list := f.page("/ui/experience?scope_id="+url.QueryEscape(`scope<script>`), http.StatusOK)
	require.Equal(t, []string{c.CandidateID}, candRows(list))
	require.NotContains(t, list, "scope<script>")

	w := f.candidate("s", experience.StatusWithdrawn, time.Now(), "", "", 1)
	require.Contains(t, f.page("/ui/experience/"+w.CandidateID, http.StatusOK), "a Source it cited was forgotten")
}

// TestExperienceAccess: the review pages need what every dashboard page needs — an admin without scope
// restriction. An agent, an admin restricted to scope prefixes (even one that would cover the candidate's scope)
// and an anonymous request are refused on the list, the candidate page and the review forms, which change nothing;
// a form posted from another site is refused even with a valid session.
func TestExperienceAccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set, err := auth.NewSet([]auth.TokenSpec{{Name: "ops", Role: auth.RoleAdmin, Token: adminToken},
		{Name: "bot", Role: auth.RoleAgent, Token: agentToken},
		{Name: "team-a-ops", Role: auth.RoleAdmin, Token: "team-a-admin-token-0123456789abcdef", Scopes: []string{"team-a/"}}})
	require.NoError(t, err)
	h := sessionHandler(f, set, ui.SessionConfig{})
	c := f.candidate("team-a/x", experience.StatusPending, time.Now(), "SECRET-LESSON-TITLE", "SECRET-LESSON-TEXT", 1)
	targets := []exchange{
		{method: http.MethodGet, target: "/ui/experience?scope_id=team-a/x"},
		{method: http.MethodGet, target: "/ui/experience"},
		{method: http.MethodGet, target: "/ui/experience/" + c.CandidateID},
		{method: http.MethodPost, target: "/ui/experience/" + c.CandidateID + "/approve", form: "expected_version=1"},
		{method: http.MethodPost, target: "/ui/experience/" + c.CandidateID + "/reject", form: "expected_version=1"},
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
			require.NotContains(t, r.Body, "SECRET-LESSON")
		}
	}
	require.Equal(t, experience.StatusPending, f.candidateNow(c.CandidateID).Status)
	require.Equal(t, http.StatusForbidden, login(h, "team-a-admin-token-0123456789abcdef").Code, "no session for a restricted admin")

	// The admin's session reads the page; a cross-site post with it is refused, a same-origin one reviews.
	ck := sessionCookieOf(login(h, adminToken))
	require.NotNil(t, ck)
	r := serveUI(h, exchange{method: http.MethodGet, target: "/ui/experience/" + c.CandidateID, cookie: ck})
	require.Equal(t, http.StatusOK, r.Code)
	require.Contains(t, r.Body, "SECRET-LESSON-TEXT")
	for _, hd := range []map[string]string{{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://other.example.com"}} {
		r = serveUI(h, exchange{method: http.MethodPost, target: "/ui/experience/" + c.CandidateID + "/approve",
			form: "expected_version=1", cookie: ck, headers: hd})
		require.Equal(t, http.StatusForbidden, r.Code, "%v", hd)
		require.Contains(t, r.Body, "posted from another site")
	}
	require.Equal(t, experience.StatusPending, f.candidateNow(c.CandidateID).Status)
	r = serveUI(h, exchange{method: http.MethodPost, target: "/ui/experience/" + c.CandidateID + "/approve",
		form: "expected_version=1", cookie: ck, headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}})
	require.Equal(t, http.StatusSeeOther, r.Code, r.Body)
	require.Equal(t, experience.StatusApproved, f.candidateNow(c.CandidateID).Status)
}

// TestExperienceListTooDeep: a page whose cursor lies deeper than the list may read is a 422 page asking for a
// narrower filter, not a 500 (the bound is lowered to 6 rows here; it is 10000). Not parallel: it changes the bound.
func TestExperienceListTooDeep(t *testing.T) {
	defer ui.SetCandidateScanMax(6)()
	f := newFixture(t)
	now := time.Now()
	for i := range 10 {
		f.candidate("deep", experience.StatusPending, now.Add(-time.Duration(i)*time.Second), "t", "l", 1)
	}
	target, pages := "/ui/experience?scope_id=deep&limit=2", 0
	for {
		r := f.get(target)
		if r.Code == http.StatusUnprocessableEntity {
			require.Contains(t, r.Body, "too deep in the list to read; choose a status to narrow it")
			require.Empty(t, candRows(r.Body))
			break
		}
		require.Equal(t, http.StatusOK, r.Code, r.Body)
		require.Len(t, candRows(r.Body), 2)
		pages++
		require.Less(t, pages, 5)
		m := nextRE.FindStringSubmatch(r.Body)
		require.NotNil(t, m, "the bound is reached before the last page")
		target = html.UnescapeString(m[1])
	}
	require.Equal(t, 2, pages, "the pages whose rows and the next one fit in 6 rows are served")
}
