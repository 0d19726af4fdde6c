package ui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/sources"
)

// The Experience review pages (/ui/experience, /ui/experience/{id}) are the one place the dashboard shows content:
// a candidate's title and lesson, on its own page only, for the admin who approves or rejects it. The list shows
// ids, states and counts, never the text; no page reads Sources or Memory.

const experiencePath = "/ui/experience"

// candidateStatuses in reading order: pending first (the ones waiting for a reviewer), then the final states.
var candidateStatuses = []string{experience.StatusPending, experience.StatusApproved, experience.StatusRejected,
	experience.StatusWithdrawn}

// candidateGroups are the list's sections in order when no status is chosen: pending, then everything else
// (newest first across the final states).
var candidateGroups = [][]string{{experience.StatusPending},
	{experience.StatusApproved, experience.StatusRejected, experience.StatusWithdrawn}}

// candidateScanMax bounds the rows one list page reads (see candidatesAfter): deeper pages ask for a narrower filter.
// A variable only so that a test can lower it.
var candidateScanMax = 10000

// recentScopeCount is how many scopes of recent incubations the list offers when no scope is chosen.
const recentScopeCount = 20

func validCandidateStatus(s string) bool {
	for _, c := range candidateStatuses {
		if s == c {
			return true
		}
	}
	return false
}

// candidateRow is one candidate as the list shows it: no title, no lesson.
type candidateRow struct {
	ID          string
	Scope       string
	ScopeURL    string
	OperationID string
	Status      string
	Version     int64
	CitedCount  int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func toCandidateRow(c db.ExperienceCandidate) candidateRow {
	return candidateRow{ID: c.CandidateID, Scope: c.ScopeID,
		ScopeURL: candidateListURL(candidateFilters{Scope: c.ScopeID}, ""), OperationID: c.WorkID, Status: c.Status,
		Version: c.StateVersion, CitedCount: len(citedPositions(c.CitedPositions)), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// citedPositions decodes a candidate's JSON array of journal positions; nil when it is not one.
func citedPositions(b []byte) []int64 {
	var out []int64
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

type candidateFilters struct {
	Scope  string
	Status string
	Limit  int
}

func candidateListURL(f candidateFilters, cursor string) string {
	q := url.Values{}
	if f.Scope != "" {
		q.Set("scope_id", f.Scope)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Limit != 0 && f.Limit != defaultLimit {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if len(q) == 0 {
		return experiencePath
	}
	return experiencePath + "?" + q.Encode()
}

// recentScope is a scope with recent incubations, offered when the list has no scope yet.
type recentScope struct {
	Scope        string
	URL          string
	Pending      int
	PendingMore  bool // more than maxLimit pending
	LastActivity time.Time
}

type candidatesView struct {
	Filters  candidateFilters
	Statuses []string
	Items    []candidateRow
	Recent   []recentScope
	NextURL  string
	FirstURL string
	Paged    bool
	Invalid  string
}

func (candidatesView) frame() frame { return frame{Title: "Experience candidates", Nav: "experience"} }

// candidateCursor is the list's opaque page cursor: the last row shown — its section, created_at and id (the list's
// order is created_at DESC, candidate_id DESC within a section) — and how many rows of that section came before it
// and it (a hint for the read, never trusted for correctness).
type candidateCursor struct {
	Group int    `json:"g"`
	At    int64  `json:"t"` // created_at, Unix microseconds
	ID    string `json:"id"`
	Depth int    `json:"d"`
}

func encodeCandidateCursor(c candidateCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCandidateCursor(s string, groups int) (candidateCursor, bool) {
	var c candidateCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 256 || json.Unmarshal(b, &c) != nil {
		return c, false
	}
	return c, c.Group >= 0 && c.Group < groups && len(c.ID) == 36 && c.Depth >= 0 && c.Depth <= candidateScanMax
}

// after reports whether c comes strictly after the cursor's row in the list's order (created_at DESC,
// candidate_id DESC; ids are lowercase canonical UUIDs, whose byte order every engine and Go agree on).
func (k candidateCursor) after(c db.ExperienceCandidate) bool {
	at := c.CreatedAt.UnixMicro()
	return at < k.At || (at == k.At && c.CandidateID < k.ID)
}

func newerFirst(a, b db.ExperienceCandidate) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.CandidateID > b.CandidateID
}

var errTooDeep = errors.New("ui: candidate page too deep")

// candidatesAfter returns up to n of a scope's candidates with the given status that come after k (all of them
// from the start when k is nil), newest first. The store's list is newest first with a limit and no cursor, so it
// reads the rows up to the cursor too: starting from the cursor's depth hint and doubling while rows the cursor
// skipped crowd out the ones after it (inserts since the previous page), up to candidateScanMax rows.
func (u *ui) candidatesAfter(ctx context.Context, scope, status string, k *candidateCursor, n int) ([]db.ExperienceCandidate, error) {
	limit := n
	if k != nil {
		limit += k.Depth
	}
	limit = min(max(limit, 1), candidateScanMax)
	for {
		rows, err := u.store.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: scope, Status: status, Limit: int32(limit)})
		if err != nil {
			return nil, err
		}
		out := rows[:0:0]
		for _, r := range rows {
			if k == nil || k.after(r) {
				out = append(out, r)
			}
		}
		if len(out) >= n || len(rows) < limit {
			return out[:min(n, len(out))], nil
		}
		if limit >= candidateScanMax {
			return nil, errTooDeep
		}
		limit = min(limit*2, candidateScanMax)
	}
}

type groupedCandidate struct {
	group int
	db.ExperienceCandidate
}

// candidatePage reads one page: up to n rows and whether more follow (returned as the next cursor).
func (u *ui) candidatePage(ctx context.Context, scope string, groups [][]string, cur *candidateCursor, n int) ([]groupedCandidate, *candidateCursor, error) {
	want := n + 1 // one more tells whether a next page exists
	var out []groupedCandidate
	start := 0
	if cur != nil {
		start = cur.Group
	}
	for g := start; g < len(groups) && len(out) < want; g++ {
		var k *candidateCursor
		if cur != nil && g == cur.Group {
			k = cur
		}
		need := want - len(out)
		var rows []db.ExperienceCandidate
		for _, status := range groups[g] {
			part, err := u.candidatesAfter(ctx, scope, status, k, need)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, part...)
		}
		sort.Slice(rows, func(i, j int) bool { return newerFirst(rows[i], rows[j]) })
		for _, r := range rows[:min(need, len(rows))] {
			out = append(out, groupedCandidate{group: g, ExperienceCandidate: r})
		}
	}
	if len(out) <= n {
		return out, nil, nil
	}
	out = out[:n]
	last := out[n-1]
	next := &candidateCursor{Group: last.group, At: last.CreatedAt.UnixMicro(), ID: last.CandidateID}
	if cur != nil && cur.Group == last.group {
		next.Depth = cur.Depth
	}
	for _, c := range out {
		if c.group == last.group {
			next.Depth++
		}
	}
	next.Depth = min(next.Depth, candidateScanMax)
	return out, next, nil
}

// candidates is GET /ui/experience: a scope's candidates, pending first, then newest first; filters scope_id,
// status and limit; keyset paging with its own cursor. Without a scope it offers the scopes of recent incubations.
func (u *ui) candidates(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	q := r.URL.Query()
	v := candidatesView{Statuses: candidateStatuses,
		Filters: candidateFilters{Scope: q.Get("scope_id"), Status: q.Get("status"), Limit: defaultLimit}}
	groups := candidateGroups
	var problems []string
	if v.Filters.Scope != "" {
		if err := sources.ValidateScope(v.Filters.Scope); err != nil {
			problems = append(problems, "scope must be 1..256 bytes of UTF-8 without NUL")
		}
	}
	if v.Filters.Status != "" {
		if !validCandidateStatus(v.Filters.Status) {
			problems = append(problems, "status must be one of "+strings.Join(candidateStatuses, ", "))
		}
		groups = [][]string{{v.Filters.Status}}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			problems = append(problems, "limit must be 1..100")
		} else {
			v.Filters.Limit = n
		}
	}
	var cur *candidateCursor
	if c := q.Get("cursor"); c != "" {
		k, ok := decodeCandidateCursor(c, len(groups))
		if !ok {
			problems = append(problems, "the page cursor is malformed; start again from the first page")
		}
		cur = &k
		v.Paged = true
	}
	v.FirstURL = candidateListURL(v.Filters, "")
	if len(problems) > 0 {
		v.Invalid = strings.Join(problems, "; ") + "."
		return http.StatusUnprocessableEntity, "candidates", v
	}
	ctx := r.Context()
	if v.Filters.Scope == "" {
		recent, err := u.recentScopes(ctx)
		if err != nil {
			return u.fail(r, err)
		}
		v.Recent = recent
		return http.StatusOK, "candidates", v
	}
	rows, next, err := u.candidatePage(ctx, v.Filters.Scope, groups, cur, v.Filters.Limit)
	if errors.Is(err, errTooDeep) {
		v.Invalid = "This page lies too deep in the list to read; choose a status to narrow it."
		return http.StatusUnprocessableEntity, "candidates", v
	}
	if err != nil {
		return u.fail(r, err)
	}
	for _, c := range rows {
		v.Items = append(v.Items, toCandidateRow(c.ExperienceCandidate))
	}
	if next != nil {
		v.NextURL = candidateListURL(v.Filters, encodeCandidateCursor(*next))
	}
	return http.StatusOK, "candidates", v
}

// recentScopes are the scopes of the newest experience incubations (the ledger's operations; purged ones are gone)
// with their pending candidate counts, newest activity first.
func (u *ui) recentScopes(ctx context.Context) ([]recentScope, error) {
	items, err := u.ledger.List(ctx, coordinator.ListParams{Kinds: []string{experience.Kind}, Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []recentScope
	seen := map[string]bool{}
	for _, w := range items {
		if seen[w.ScopeID] || len(out) == recentScopeCount {
			continue
		}
		seen[w.ScopeID] = true
		pending, err := u.store.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: w.ScopeID,
			Status: experience.StatusPending, Limit: maxLimit + 1})
		if err != nil {
			return nil, err
		}
		out = append(out, recentScope{Scope: w.ScopeID, LastActivity: w.CreatedAt,
			URL:     candidateListURL(candidateFilters{Scope: w.ScopeID}, ""),
			Pending: min(len(pending), maxLimit), PendingMore: len(pending) > maxLimit})
	}
	return out, nil
}

// candidateView is one candidate with its content.
type candidateView struct {
	Row       candidateRow
	Title     string
	Lesson    string
	Cited     []int64
	CanReview bool
	Reviewed  string // the outcome of the review that redirected here ("approved" | "rejected")
	Conflict  string // a stale review's explanation (status 409)
}

// The page title names the candidate, never its lesson (titles stay in browser history).
func (v candidateView) frame() frame {
	return frame{Title: "Experience candidate " + shortID(v.Row.ID), Nav: "experience"}
}

func newCandidateView(c db.ExperienceCandidate) candidateView {
	return candidateView{Row: toCandidateRow(c), Title: c.Title, Lesson: c.Lesson, Cited: citedPositions(c.CitedPositions),
		CanReview: c.Status == experience.StatusPending}
}

// candidate is GET /ui/experience/{id}: the lesson, its cited journal positions and the Approve / Reject forms.
func (u *ui) candidate(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	c, err := experience.Reviews{Store: u.store}.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, db.ErrNotFound) {
		return http.StatusNotFound, "notfound", nil
	}
	if err != nil {
		return u.fail(r, err)
	}
	v := newCandidateView(c)
	if d := r.URL.Query().Get("reviewed"); d == c.Status && (d == experience.StatusApproved || d == experience.StatusRejected) {
		v.Reviewed = d
	}
	return http.StatusOK, "candidate", v
}

// maxReviewForm bounds a review form's body (one small integer field).
const maxReviewForm = 4 << 10

// review is POST /ui/experience/{id}/approve|reject, the forms of the candidate page: expected_version is the
// state_version the page showed. Success redirects (303) to the candidate's page; a stale version or an already
// reviewed candidate renders that page at its current state with a conflict message (409), changing nothing.
func (u *ui) review(approve bool) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, string, any) {
		r.Body = http.MaxBytesReader(w, r.Body, maxReviewForm)
		if err := r.ParseForm(); err != nil {
			return http.StatusBadRequest, "error", errorView{Title: "Bad request", Message: "The review form could not be read."}
		}
		version, err := strconv.ParseInt(r.PostForm.Get("expected_version"), 10, 64)
		if err != nil || version < 1 {
			return http.StatusUnprocessableEntity, "error", errorView{Title: "Bad request",
				Message: "The review form needs expected_version, the candidate's state version (an integer ≥ 1)."}
		}
		id := r.PathValue("id")
		reviews := experience.Reviews{Store: u.store, OnApproved: u.onApproved}
		c, err := reviews.Review(r.Context(), id, version, approve)
		var conflict *experience.ErrCandidateConflict
		switch {
		case errors.Is(err, db.ErrNotFound):
			return http.StatusNotFound, "notfound", nil
		case errors.As(err, &conflict):
			v := newCandidateView(c)
			v.Conflict = "This candidate changed since the page was loaded: it is now " + c.Status + " (version " +
				strconv.FormatInt(c.StateVersion, 10) + "; the page showed version " + strconv.FormatInt(version, 10) +
				"). Nothing was changed."
			return http.StatusConflict, "candidate", v
		case err != nil:
			return u.fail(r, err)
		}
		http.Redirect(w, r, experiencePath+"/"+url.PathEscape(c.CandidateID)+"?reviewed="+c.Status, http.StatusSeeOther)
		return 0, "", nil
	}
}
