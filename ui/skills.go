package ui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/skills"
	"github.com/powercontext/powercontext/sources"
)

// The Skills page (/ui/skills) shows a scope's skill packages and, per target, the state of each publication, with
// the operator's actions: publish the current revision, unpublish, roll back to an earlier revision, revoke a target.
// It shows names, revisions, digests and states — never a package's files. Every action goes through the same
// skills.Service calls as the HTTP API, and names the generation the page was rendered with: a stale page changes
// nothing and says so (docs/skills.md#dashboard).

const skillsPath = "/ui/skills"

// skillListLimit bounds the skills and targets one page lists (the API's default page).
const skillListLimit = 100

// revisionListLimit bounds the revisions read per skill (the Skills service's own bound): a skill with more shows
// "100+" and offers its newest ones for a rollback.
const revisionListLimit = 100

func skillsURL(scope string) string {
	if scope == "" {
		return skillsPath
	}
	return skillsPath + "?" + url.Values{"scope_id": {scope}}.Encode()
}

// exportURL is the dashboard's download of a scope's export (GET /ui/scopes/{scope_id}/export).
func exportURL(scope string) string { return "/ui/scopes/" + url.PathEscape(scope) + "/export" }

// skillRow is one skill of the scope: its current revision's digests and sizes, and how many revisions it has.
type skillRow struct {
	Name          string
	Revision      int64
	TreeDigest    string
	ArchiveDigest string
	FileCount     int32
	ByteSize      int64
	Revisions     int
	RevisionsMore bool // the skill has at least revisionListLimit revisions
	UpdatedAt     time.Time
	all           []int64 // its revision numbers, newest first
}

// publicationRow is one skill on one target: its publication (Exists false: none yet) and the actions it offers.
type publicationRow struct {
	TargetID           string
	Skill              string
	CurrentRevision    int64
	Exists             bool
	DesiredState       string
	DesiredRevision    int64
	Pinned             bool // published at another revision than the current one (a rollback)
	ObservedRevision   int64
	ObservedTreeDigest string
	ErrorCode          string
	State              string
	Generation         int64
	UpdatedAt          time.Time
	CanPublish         bool
	CanUnpublish       bool
	Rollback           []int64 // revisions a rollback may pin, newest first
}

// targetView is one target of the scope with its publications.
type targetView struct {
	ID                  string
	AgentKind           string
	DisplayName         string
	Enrolled            bool
	EnrollmentExpiresAt time.Time
	RevokedAt           time.Time
	Generation          int64
	CreatedAt           time.Time
	Rows                []publicationRow
	Conflict            string // a stale action's explanation (status 409), shown in this target's card
}

func (t targetView) Revoked() bool { return !t.RevokedAt.IsZero() }

// skillScope is a scope with recent skill packaging, offered when the page has no scope yet.
type skillScope struct {
	Scope        string
	URL          string
	ExportURL    string
	LastActivity time.Time
}

type skillsView struct {
	Scope       string
	ExportURL   string
	Invalid     string
	Recent      []skillScope
	Skills      []skillRow
	SkillsMore  bool
	Targets     []targetView
	TargetsMore bool
	Flash       string
	FlashTarget string
	Conflict    string
	StateNames  []string
}

func (skillsView) frame() frame { return frame{Title: "Skills", Nav: "skills"} }

// publicationStates in reading order (docs/skills.md#publications-and-target-states), for the legend.
var publicationStates = skills.States

func validPublicationState(s string) bool {
	for _, st := range publicationStates {
		if s == st {
			return true
		}
	}
	return false
}

// skillsPage is GET /ui/skills[?scope_id=]: the scope's skills and targets, or, without a scope, the scopes of
// recent skill packaging.
func (u *ui) skillsPage(_ http.ResponseWriter, r *http.Request) (int, string, any) {
	q := r.URL.Query()
	scope := q.Get("scope_id")
	if scope == "" {
		v := skillsView{StateNames: publicationStates}
		recent, err := u.recentSkillScopes(r.Context())
		if err != nil {
			return u.fail(r, err)
		}
		v.Recent = recent
		return http.StatusOK, "skills", v
	}
	if sources.ValidateScope(scope) != nil {
		return http.StatusUnprocessableEntity, "skills", skillsView{Scope: scope, StateNames: publicationStates,
			Invalid: "scope must be 1..256 bytes of UTF-8 without NUL."}
	}
	v, err := u.loadSkills(r.Context(), scope)
	if err != nil {
		return u.fail(r, err)
	}
	v.flash(q.Get("done"), q.Get("target_id"), q.Get("skill_name"))
	return http.StatusOK, "skills", v
}

// loadSkills reads what the page shows for scope: its skills with their revisions, its targets with their
// publications.
func (u *ui) loadSkills(ctx context.Context, scope string) (skillsView, error) {
	v := skillsView{Scope: scope, ExportURL: exportURL(scope), StateNames: publicationStates}
	current, err := u.skills.Current(ctx, scope, skillListLimit+1)
	if err != nil {
		return v, err
	}
	if len(current) > skillListLimit {
		current, v.SkillsMore = current[:skillListLimit], true
	}
	byName := map[string]*skillRow{}
	for _, c := range current {
		revs, err := u.skills.Revisions(ctx, scope, c.Skill.SkillName, revisionListLimit)
		if err != nil {
			return v, err
		}
		row := skillRow{Name: c.Skill.SkillName, Revision: c.Skill.CurrentRevision, TreeDigest: c.Revision.TreeDigest,
			ArchiveDigest: c.Revision.ArchiveDigest, FileCount: c.Revision.FileCount, ByteSize: c.Revision.ByteSize,
			Revisions: len(revs), RevisionsMore: len(revs) >= revisionListLimit, UpdatedAt: c.Skill.UpdatedAt}
		for _, rv := range revs {
			row.all = append(row.all, rv.Revision)
		}
		v.Skills = append(v.Skills, row)
	}
	for i := range v.Skills {
		byName[v.Skills[i].Name] = &v.Skills[i]
	}
	targets, err := u.skills.Targets(ctx, scope, skillListLimit+1)
	if err != nil {
		return v, err
	}
	if len(targets) > skillListLimit {
		targets, v.TargetsMore = targets[:skillListLimit], true
	}
	for _, t := range targets {
		tv := targetView{ID: t.TargetID, AgentKind: t.AgentKind, DisplayName: t.DisplayName, Enrolled: t.CredentialDigest != "",
			EnrollmentExpiresAt: t.EnrollmentExpiresAt, RevokedAt: t.RevokedAt, Generation: t.Generation, CreatedAt: t.CreatedAt}
		pubs, err := u.skills.Publications(ctx, t.TargetID)
		if err != nil {
			return v, err
		}
		byPub := map[string]db.SkillPublication{}
		for _, p := range pubs {
			byPub[p.SkillName] = p
		}
		for _, s := range v.Skills {
			p, ok := byPub[s.Name]
			tv.Rows = append(tv.Rows, newPublicationRow(tv, &s, p, ok))
			delete(byPub, s.Name)
		}
		for _, p := range pubs { // publications of skills beyond the page's list, in name order
			if _, left := byPub[p.SkillName]; left {
				tv.Rows = append(tv.Rows, newPublicationRow(tv, byName[p.SkillName], p, true))
			}
		}
		v.Targets = append(v.Targets, tv)
	}
	return v, nil
}

func newPublicationRow(t targetView, s *skillRow, p db.SkillPublication, exists bool) publicationRow {
	row := publicationRow{TargetID: t.ID, Skill: p.SkillName}
	if s != nil {
		row.Skill, row.CurrentRevision = s.Name, s.Revision
	}
	if exists {
		row.Exists, row.DesiredState, row.DesiredRevision = true, p.DesiredState, p.DesiredRevision
		row.ObservedRevision, row.ObservedTreeDigest, row.ErrorCode = p.ObservedRevision, p.ObservedTreeDigest, p.ErrorCode
		row.State, row.Generation, row.UpdatedAt = p.State, p.Generation, p.UpdatedAt
		row.Pinned = p.DesiredState == skills.DesiredPublished && s != nil && p.DesiredRevision != s.Revision
	}
	if t.Revoked() || s == nil {
		return row
	}
	published := exists && p.DesiredState == skills.DesiredPublished
	row.CanPublish = !published || row.Pinned
	row.CanUnpublish = published
	for _, rev := range s.all {
		if rev != s.Revision && (!published || rev != p.DesiredRevision) {
			row.Rollback = append(row.Rollback, rev)
		}
	}
	return row
}

// flash explains, after a redirect, the action that just succeeded — only while the state still says so.
func (v *skillsView) flash(done, targetID, skill string) {
	for _, t := range v.Targets {
		if t.ID != targetID {
			continue
		}
		if done == "revoked" && t.Revoked() {
			v.Flash, v.FlashTarget = "Revoked: target "+t.DisplayName+" receives nothing from now on.", t.ID
			return
		}
		for _, row := range t.Rows {
			if row.Skill != skill || !row.Exists {
				continue
			}
			switch {
			case done == "published" && row.DesiredState == skills.DesiredPublished && !row.Pinned:
				v.Flash = "Published: " + row.Skill + " on " + t.DisplayName + " follows the current revision " +
					strconv.FormatInt(row.DesiredRevision, 10) + " (generation " + strconv.FormatInt(row.Generation, 10) + ")."
			case done == "published" && row.DesiredState == skills.DesiredPublished:
				v.Flash = "Rolled back: " + row.Skill + " on " + t.DisplayName + " is pinned to revision " +
					strconv.FormatInt(row.DesiredRevision, 10) + " (generation " + strconv.FormatInt(row.Generation, 10) + ")."
			case done == "unpublished" && row.DesiredState == skills.DesiredUnpublished:
				v.Flash = "Unpublished: " + row.Skill + " is to be removed from " + t.DisplayName + " (generation " +
					strconv.FormatInt(row.Generation, 10) + ")."
			}
			if v.Flash != "" {
				v.FlashTarget = t.ID
			}
			return
		}
	}
}

// recentSkillScopes are the scopes of the newest skill packaging operations (purged ones are gone), newest first.
func (u *ui) recentSkillScopes(ctx context.Context) ([]skillScope, error) {
	items, err := u.ledger.List(ctx, coordinator.ListParams{Kinds: []string{skills.Kind}, Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []skillScope
	seen := map[string]bool{}
	for _, w := range items {
		if seen[w.ScopeID] || len(out) == recentScopeCount {
			continue
		}
		seen[w.ScopeID] = true
		out = append(out, skillScope{Scope: w.ScopeID, URL: skillsURL(w.ScopeID), ExportURL: exportURL(w.ScopeID), LastActivity: w.CreatedAt})
	}
	return out, nil
}

// maxSkillForm bounds a Skills form's body (a skill name and two small integers).
const maxSkillForm = 4 << 10

// skillForm reads a Skills form: expected_generation (≥ 0) and, when named, skill_name and revision (optional,
// ≥ 1). A nil error page means the form is good.
func skillForm(w http.ResponseWriter, r *http.Request, withSkill bool) (generation, revision int64, skill string, bad *errorView, status int) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSkillForm)
	if err := r.ParseForm(); err != nil {
		return 0, 0, "", &errorView{Title: "Bad request", Message: "The form could not be read."}, http.StatusBadRequest
	}
	generation, err := strconv.ParseInt(r.PostForm.Get("expected_generation"), 10, 64)
	if err != nil || generation < 0 {
		return 0, 0, "", &errorView{Title: "Bad request",
			Message: "The form needs expected_generation, the generation the page showed (an integer ≥ 0)."}, http.StatusUnprocessableEntity
	}
	if !withSkill {
		return generation, 0, "", nil, 0
	}
	skill = r.PostForm.Get("skill_name")
	if !skills.ValidName(skill) {
		return 0, 0, "", &errorView{Title: "Bad request", Message: "The form needs skill_name, a skill's name."}, http.StatusUnprocessableEntity
	}
	if s := r.PostForm.Get("revision"); s != "" {
		if revision, err = strconv.ParseInt(s, 10, 64); err != nil || revision < 1 {
			return 0, 0, "", &errorView{Title: "Bad request", Message: "revision must be an integer ≥ 1 when given."}, http.StatusUnprocessableEntity
		}
	}
	return generation, revision, skill, nil, 0
}

// doneURL is where a successful action redirects: the scope's page, which confirms the action while it holds.
func doneURL(scope, done, targetID, skill string) string {
	q := url.Values{"scope_id": {scope}, "done": {done}, "target_id": {targetID}}
	if skill != "" {
		q.Set("skill_name", skill)
	}
	return skillsPath + "?" + q.Encode() + "#target-" + targetID
}

// conflictPage renders scope's page at its current state with msg in the target's card (409).
func (u *ui) conflictPage(r *http.Request, scope, targetID, msg string) (int, string, any) {
	v, err := u.loadSkills(r.Context(), scope)
	if err != nil {
		return u.fail(r, err)
	}
	v.Conflict = msg
	for i := range v.Targets {
		if v.Targets[i].ID == targetID {
			v.Targets[i].Conflict = msg
		}
	}
	return http.StatusConflict, "skills", v
}

// publication is POST /ui/skills/targets/{target_id}/publish|unpublish: the form's skill on the target, published
// (at the form's revision: a rollback; without one the current revision, which later revisions replace) or
// unpublished — skills.Service.PublishAt, the API's Publish guarded by the generation the page showed. Success
// redirects (303) to the scope's page; a stale generation or a target revoked meanwhile renders that page at its
// current state with a conflict message (409) and changes nothing.
func (u *ui) publication(unpublish bool) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, string, any) {
		generation, revision, skill, bad, status := skillForm(w, r, true)
		if bad != nil {
			return status, "error", *bad
		}
		if unpublish && revision != 0 {
			return http.StatusUnprocessableEntity, "error", errorView{Title: "Bad request", Message: "Unpublishing takes no revision."}
		}
		ctx := r.Context()
		t, err := u.skills.Target(ctx, r.PathValue("target_id"))
		if errors.Is(err, db.ErrNotFound) {
			return http.StatusNotFound, "notfound", nil
		}
		if err != nil {
			return u.fail(r, err)
		}
		p, err := u.skills.PublishAt(ctx, t.TargetID, skill, revision, unpublish, generation)
		var ve *sources.ValidationError
		switch {
		case errors.Is(err, skills.ErrStale):
			msg := "This publication of " + skill + " changed since the page was loaded: "
			if p.Generation == 0 {
				msg += "the target now has none"
			} else {
				msg += "it is now " + p.DesiredState + " at revision " + strconv.FormatInt(p.DesiredRevision, 10) + ", state " + p.State +
					" (generation " + strconv.FormatInt(p.Generation, 10)
				msg += "; the page showed generation " + strconv.FormatInt(generation, 10) + ")"
			}
			return u.conflictPage(r, t.ScopeID, t.TargetID, msg+". Nothing was changed.")
		case errors.Is(err, skills.ErrRevoked):
			return u.conflictPage(r, t.ScopeID, t.TargetID, "This target was revoked since the page was loaded; nothing can be published to it. Nothing was changed.")
		case errors.Is(err, skills.ErrConflict):
			return u.conflictPage(r, t.ScopeID, t.TargetID, "This publication kept changing while it was written. Nothing was changed.")
		case errors.Is(err, db.ErrNotFound):
			return http.StatusNotFound, "notfound", nil
		case errors.As(err, &ve):
			return http.StatusUnprocessableEntity, "error", errorView{Title: "Bad request", Message: ve.Error()}
		case err != nil:
			return u.fail(r, err)
		}
		done := "published"
		if unpublish {
			done = "unpublished"
		}
		http.Redirect(w, r, doneURL(t.ScopeID, done, t.TargetID, skill), http.StatusSeeOther)
		return 0, "", nil
	}
}

// revokeTarget is POST /ui/skills/targets/{target_id}/revoke: skills.Service.Revoke, the API's revoke. A target the
// page showed as not revoked that has been revoked meanwhile is a conflict (409; the page at its current state),
// since the page's button no longer matches what it acts on; nothing changes.
func (u *ui) revokeTarget(w http.ResponseWriter, r *http.Request) (int, string, any) {
	generation, _, _, bad, status := skillForm(w, r, false)
	if bad != nil {
		return status, "error", *bad
	}
	ctx := r.Context()
	t, err := u.skills.Target(ctx, r.PathValue("target_id"))
	if errors.Is(err, db.ErrNotFound) {
		return http.StatusNotFound, "notfound", nil
	}
	if err != nil {
		return u.fail(r, err)
	}
	if !t.RevokedAt.IsZero() {
		return u.conflictPage(r, t.ScopeID, t.TargetID, "This target was already revoked at "+formatTime(t.RevokedAt)+" (generation "+
			strconv.FormatInt(t.Generation, 10)+"; the page showed generation "+strconv.FormatInt(generation, 10)+"). Nothing was changed.")
	}
	if t, err = u.skills.Revoke(ctx, t.TargetID); err != nil {
		return u.fail(r, err)
	}
	http.Redirect(w, r, doneURL(t.ScopeID, "revoked", t.TargetID, ""), http.StatusSeeOther)
	return 0, "", nil
}
