// Package skills delivers approved Experience to coding agents as Agent Skills (docs/skills.md): an approved
// candidate becomes a revision of a skill package, built as ledger work in the scope's skills lane; an admin
// registers targets (agent installations, enrolled with a one-time token) and publishes skills to them; an agent
// pulls its desired state and reports what it observed.
package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/sources"
)

// Names of skill packaging.
const (
	Kind           = "powercontext.skills.package"
	PublicKind     = "skill_package"
	PayloadVersion = 1
)

// WorkKinds are the work kinds this package runs; app hands them to telemetry.
func WorkKinds() []string { return []string{Kind} }

// Payload is the payload of a skill_package item: the approved candidate that asked for it (an id, never content).
type Payload struct {
	CandidateID string `json:"candidate_id"`
}

// Result is the result payload of a skill_package operation (code packaged, or not_approved when the candidate is
// no longer approved): the package's tree digest and how many lessons it holds — never the skill's name or text,
// which come from the lessons (work rows carry no content).
type Result struct {
	Type       string `json:"type"`
	TreeDigest string `json:"tree_digest,omitempty"`
	Lessons    int    `json:"lessons"`
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// LaneKey is the scope's skills lane: its packages are built one at a time, so revision numbers never race.
func LaneKey(scope string) string { return sha256Hex("skills:" + scope) }

// LogicalKey identifies the packaging asked for by one approval.
func LogicalKey(scope, candidateID string) string {
	b, _ := json.Marshal([]string{Kind, scope, candidateID})
	return sha256Hex(string(b))
}

// PackageRequest enqueues the packaging of an approved candidate in the scope's skills lane; idle while the scope is
// being erased.
func PackageRequest(scope, candidateID string, maxAttempts int32) coordinator.EnqueueRequest {
	return coordinator.EnqueueRequest{LaneKey: LaneKey(scope), Spec: func(ctx context.Context, q db.Queries) (*coordinator.EnqueueSpec, error) {
		if erasing, err := sources.Erasing(ctx, q, scope); err != nil || erasing {
			return nil, err
		}
		return &coordinator.EnqueueSpec{Kind: Kind, PayloadVersion: PayloadVersion, ScopeID: scope,
			LogicalKey: LogicalKey(scope, candidateID), Payload: Payload{CandidateID: candidateID}, MaxAttempts: max(maxAttempts, 1)}, nil
	}}
}

// Packager enqueues packaging when a candidate is approved (experience.Reviews.OnApproved).
type Packager struct {
	Ledger      *coordinator.Ledger
	MaxAttempts int32
	Wake        func() // wakes an in-process worker after an enqueue; optional
	// Failed, when set, is told when an enqueue failed (app logs it: the kind of error, never content). The
	// approval stands; the Discoverer enqueues the packaging at its next scan (and the skill's next approval
	// packages this lesson too, since a package is built from every approved candidate of the skill).
	Failed func(err error)
}

// Approved enqueues the packaging of an approved candidate (the signature of experience.Reviews.OnApproved).
func (p *Packager) Approved(ctx context.Context, c db.ExperienceCandidate) {
	res, err := p.Ledger.Enqueue(ctx, PackageRequest(c.ScopeID, c.CandidateID, p.MaxAttempts))
	switch {
	case err != nil && p.Failed != nil:
		p.Failed(err)
	case err == nil && res.Created && p.Wake != nil:
		p.Wake()
	}
}

// Discoverer finds approved candidates that no current revision of their scope's skills holds — an approval whose
// packaging enqueue failed, or whose packaging has not committed yet — and enqueues their packaging with the same
// logical key the approval uses (LogicalKey), so an approval whose item exists (live or finished) is joined, never
// duplicated (docs/skills.md#from-an-approval-to-a-revision). It asks for one item per skill name and scope: the
// first such candidate of the name, since a package is built from every approved candidate of the skill.
type Discoverer struct {
	Store       db.Store
	Every       time.Duration
	MaxAttempts int32
}

// Name implements coordinator.Discoverer: the name of its scan.
func (d Discoverer) Name() string { return "skills-package" }

// Interval implements coordinator.Discoverer: how often it runs.
func (d Discoverer) Interval() time.Duration { return d.Every }

// Page implements coordinator.Discoverer: one page of enqueue requests. The continuation is the last scope of a
// full page; a scope with more unpackaged candidates than a page holds is finished by a later scan, after the
// packages asked for this time have taken the page's candidates in.
func (d Discoverer) Page(ctx context.Context, continuation string, size int) ([]coordinator.EnqueueRequest, string, error) {
	cands, err := d.Store.ExperienceCandidateListUnpackaged(ctx, db.ExperienceCandidateListUnpackagedParams{AfterScopeID: continuation,
		Limit: int32(size)})
	if err != nil {
		return nil, "", err
	}
	type skill struct{ scope, name string }
	seen := map[skill]bool{}
	var reqs []coordinator.EnqueueRequest
	for _, c := range cands {
		k := skill{c.ScopeID, Name(c.Title)}
		if seen[k] {
			continue
		}
		seen[k] = true
		reqs = append(reqs, PackageRequest(c.ScopeID, c.CandidateID, d.MaxAttempts))
	}
	next := ""
	if len(cands) == size {
		next = cands[len(cands)-1].ScopeID
	}
	return reqs, next, nil
}

// candidatePage is how many of a scope's approved candidates packaging reads at a time; it reads every page.
const candidatePage = 500

// Handler runs skill_package items. Prepare reads the scope's approved candidates whose title names the same skill
// and builds the package outside any transaction; the commit (the ledger's final, fenced transaction, in the skills
// lane) stores a new revision unless the tree equals the current one, moves the skill to it, and moves every
// publication that followed the previous revision to the new one.
type Handler struct {
	Store db.Store
}

// Kind implements coordinator.Handler.
func (h *Handler) Kind() string { return Kind }

// PayloadVersions implements coordinator.Handler.
func (h *Handler) PayloadVersions() coordinator.VersionRange {
	return coordinator.VersionRange{Min: PayloadVersion, Max: PayloadVersion}
}

// Prepare implements coordinator.Handler.
func (h *Handler) Prepare(ctx context.Context, item db.WorkItem) (coordinator.Prepared, error) {
	var p Payload
	if item.PayloadVersion != PayloadVersion || json.Unmarshal(item.Payload, &p) != nil || p.CandidateID == "" {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	c, err := h.Store.ExperienceCandidateGet(ctx, p.CandidateID)
	if errors.Is(err, db.ErrNotFound) || err == nil && (c.Status != experience.StatusApproved || c.ScopeID != item.ScopeID) {
		return coordinator.Prepared{Result: coordinator.Result{Code: "not_approved", Payload: Result{Type: PublicKind}}}, nil
	}
	if err != nil {
		return coordinator.Prepared{}, err
	}
	name := Name(c.Title)
	lessons, ids, err := h.approvedLessons(ctx, item.ScopeID, name)
	if err != nil {
		return coordinator.Prepared{}, err
	}
	if len(lessons) == 0 { // approved when read above, no longer approved now
		return coordinator.Prepared{Result: coordinator.Result{Code: "not_approved", Payload: Result{Type: PublicKind}}}, nil
	}
	pkg, err := Build(name, lessons)
	if err != nil {
		return coordinator.Prepared{}, coordinator.NewHandlerError(coordinator.CategoryPayload, coordinator.CodeInvalidPayload, false)
	}
	idsJSON, _ := json.Marshal(ids)
	res := Result{Type: PublicKind, TreeDigest: pkg.TreeDigest, Lessons: len(lessons)}
	commit := func(ctx context.Context, q db.Queries, item db.WorkItem, now time.Time) error {
		_, err := commitRevision(ctx, q, item.ScopeID, pkg, idsJSON, now)
		return err
	}
	return coordinator.Prepared{Result: coordinator.Result{Code: "packaged", Payload: res}, Commit: commit}, nil
}

// approvedLessons reads every approved candidate of the scope whose title names the skill, and their ids in id
// order (the order a revision records them in): a keyset over the scope's approved candidates only (by created_at,
// then id), so each page is one bounded statement through the (scope, status, created_at) index and the scope's
// other candidates are never read. Build orders the lessons itself.
func (h *Handler) approvedLessons(ctx context.Context, scope, name string) ([]Lesson, []string, error) {
	var lessons []Lesson
	p := db.ExperienceCandidateListByStatusAfterParams{ScopeID: scope, Status: experience.StatusApproved,
		AfterCandidateID: db.NilUUID, Limit: candidatePage}
	for {
		page, err := h.Store.ExperienceCandidateListByStatusAfter(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range page {
			if Name(c.Title) == name {
				lessons = append(lessons, LessonOf(c))
			}
		}
		if len(page) < candidatePage {
			break
		}
		last := page[len(page)-1]
		p.AfterCreatedAt, p.AfterCandidateID = last.CreatedAt, last.CandidateID
	}
	slices.SortFunc(lessons, func(a, b Lesson) int { return strings.Compare(a.CandidateID, b.CandidateID) })
	ids := make([]string, len(lessons))
	for i, l := range lessons {
		ids[i] = l.CandidateID
	}
	return lessons, ids, nil
}

// commitRevision stores pkg as the skill's next revision (or nothing when its tree is the current one) and moves
// the publications that followed the previous revision. It returns the revision now current.
func commitRevision(ctx context.Context, q db.Queries, scope string, pkg Package, ids []byte, now time.Time) (int64, error) {
	rev := db.SkillRevision{ScopeID: scope, SkillName: pkg.Name, TreeDigest: pkg.TreeDigest, ArchiveDigest: pkg.ArchiveDigest,
		FileCount: int32(len(pkg.Files)), ByteSize: pkg.ByteSize, Archive: pkg.Archive, SourceCandidateIDs: ids, CreatedAt: now}
	sk, err := q.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: pkg.Name})
	if errors.Is(err, db.ErrNotFound) {
		rev.Revision = 1
		if err := q.SkillRevisionInsert(ctx, rev); err != nil {
			return 0, err
		}
		return 1, q.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: pkg.Name, CurrentRevision: 1, CreatedAt: now, UpdatedAt: now})
	}
	if err != nil {
		return 0, err
	}
	cur, err := q.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: pkg.Name, Revision: sk.CurrentRevision})
	if err != nil {
		return 0, err
	}
	if cur.TreeDigest == pkg.TreeDigest {
		return sk.CurrentRevision, nil
	}
	// The next number after the newest revision (a rollback may have made an older one current).
	newest, err := q.SkillRevisionList(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: pkg.Name, Limit: 1})
	if err != nil || len(newest) == 0 {
		return 0, errors.Join(err, errors.New("skills: revision missing"))
	}
	rev.Revision = newest[0].Revision + 1
	if err := q.SkillRevisionInsert(ctx, rev); err != nil {
		return 0, err
	}
	n, err := q.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: rev.Revision, UpdatedAt: now, ScopeID: scope,
		SkillName: pkg.Name, ExpectedRevision: sk.CurrentRevision})
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, errors.New("skills: skill moved concurrently")
	}
	pubs, err := q.SkillPublicationListBySkill(ctx, db.SkillGetParams{ScopeID: scope, SkillName: pkg.Name})
	if err != nil {
		return 0, err
	}
	for _, p := range pubs {
		if p.DesiredState != DesiredPublished || p.DesiredRevision != sk.CurrentRevision {
			continue // unpublished, or pinned to another revision (a rollback)
		}
		if err := setDesired(ctx, q, p, DesiredPublished, rev.Revision, rev.TreeDigest, now); err != nil {
			return 0, err
		}
	}
	return rev.Revision, nil
}
