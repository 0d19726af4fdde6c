package skills

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/sources"
)

// Desired states of a publication.
const (
	DesiredPublished   = "published"
	DesiredUnpublished = "unpublished"
)

// States of a publication (docs/skills.md#publications-and-target-states).
const (
	StatePending         = "pending"
	StateCurrent         = "current"
	StateUpdateAvailable = "update_available"
	StateDeliveryFailed  = "delivery_failed"
	StateConflict        = "conflict"
	StateDrifted         = "drifted"
	StateIncompatible    = "incompatible"
)

// States are the states of a publication in reading order: exactly the values the state CHECK constraint of
// pc_skill_publications allows (the label set of the powercontext_skill_publications gauge).
var States = []string{StatePending, StateCurrent, StateUpdateAvailable, StateDeliveryFailed, StateConflict, StateDrifted,
	StateIncompatible}

// Error codes an agent may report instead of an observed revision: conflict (the folder was edited locally and
// was not overwritten), incompatible (the agent cannot use the package); any other code is a delivery failure.
const (
	ReportConflict     = "conflict"
	ReportIncompatible = "incompatible"
)

// DefaultEnrollmentTTL is how long an enrollment token stays usable.
const DefaultEnrollmentTTL = 24 * time.Hour

var (
	// ErrUnauthenticated means the credential or enrollment token is unknown, spent or expired.
	ErrUnauthenticated = errors.New("skills: unknown credential")
	// ErrRevoked means the target was revoked; its credential is refused.
	ErrRevoked = errors.New("skills: target revoked")
	// ErrConflict means the row moved on concurrently more often than a write retries.
	ErrConflict = errors.New("skills: concurrent change")
)

var (
	agentKindRe = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	errorCodeRe = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	digestRe    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Service is the Skills API over a store: skills, revisions, targets and publications.
type Service struct {
	Store         db.Store
	EnrollmentTTL time.Duration // DefaultEnrollmentTTL when zero
}

func token(prefix string) (string, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	t := prefix + hex.EncodeToString(b)
	return t, sha256Hex(t), nil
}

// Digest is the stored form of a token or credential (SHA-256, hex).
func Digest(secret string) string { return sha256Hex(secret) }

// Skills lists a scope's skills.
func (s Service) Skills(ctx context.Context, scope string, limit int) ([]db.Skill, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	return s.Store.SkillList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: int32(min(max(limit, 1), 500))})
}

// Current lists a scope's skills by name, each with the summary of its current revision; no archive is read.
func (s Service) Current(ctx context.Context, scope string, limit int) ([]db.SkillCurrentRevision, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	return s.Store.SkillRevisionListCurrent(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: int32(min(max(limit, 1), 500))})
}

// Revisions lists a skill's revisions, newest first, without their archives.
func (s Service) Revisions(ctx context.Context, scope, name string, limit int) ([]db.SkillRevisionSummary, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	if !ValidName(name) {
		return nil, db.ErrNotFound
	}
	return s.Store.SkillRevisionListSummary(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: name, Limit: int32(min(max(limit, 1), 100))})
}

// Skill is one skill of a scope; db.ErrNotFound when the scope has none of that name.
func (s Service) Skill(ctx context.Context, scope, name string) (db.Skill, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return db.Skill{}, err
	}
	if !ValidName(name) {
		return db.Skill{}, db.ErrNotFound
	}
	return s.Store.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: name})
}

// Read is one revision of a skill (its current revision when revision is 0) with the files of its package, read
// from the stored archive; db.ErrNotFound when the skill or the revision does not exist.
func (s Service) Read(ctx context.Context, scope, name string, revision int64) (db.SkillRevision, []File, error) {
	if revision == 0 {
		sk, err := s.Skill(ctx, scope, name)
		if err != nil {
			return db.SkillRevision{}, nil, err
		}
		revision = sk.CurrentRevision
	} else {
		if err := sources.ValidateScope(scope); err != nil {
			return db.SkillRevision{}, nil, err
		}
		if !ValidName(name) || revision < 0 {
			return db.SkillRevision{}, nil, db.ErrNotFound
		}
	}
	rev, err := s.Store.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: name, Revision: revision})
	if err != nil {
		return db.SkillRevision{}, nil, err
	}
	files, err := Files(rev.Archive)
	if err != nil {
		return db.SkillRevision{}, nil, err
	}
	return rev, files, nil
}

// RegisterTarget registers an agent installation of a scope and returns it with its one-time enrollment token
// (only its digest is stored).
func (s Service) RegisterTarget(ctx context.Context, scope, agentKind, displayName string) (db.SkillTarget, string, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return db.SkillTarget{}, "", err
	}
	if !agentKindRe.MatchString(agentKind) {
		return db.SkillTarget{}, "", &sources.ValidationError{Field: "agent_kind", Message: "must be 1..32 of a-z, 0-9 and _"}
	}
	if n := utf8.RuneCountInString(displayName); n < 1 || n > 128 || !utf8.ValidString(displayName) || strings.IndexByte(displayName, 0) >= 0 {
		return db.SkillTarget{}, "", &sources.ValidationError{Field: "display_name", Message: "must be 1..128 characters of UTF-8 without NUL"}
	}
	now, err := s.Store.DBNow(ctx)
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	tok, digest, err := token("pcse_")
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	ttl := s.EnrollmentTTL
	if ttl <= 0 {
		ttl = DefaultEnrollmentTTL
	}
	t := db.SkillTarget{TargetID: uuid.NewString(), ScopeID: scope, AgentKind: agentKind, DisplayName: displayName,
		EnrollmentDigest: digest, EnrollmentExpiresAt: now.Add(ttl), Generation: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.Store.SkillTargetInsert(ctx, t); err != nil {
		return db.SkillTarget{}, "", err
	}
	return t, tok, nil
}

// Targets lists a scope's targets.
func (s Service) Targets(ctx context.Context, scope string, limit int) ([]db.SkillTarget, error) {
	if err := sources.ValidateScope(scope); err != nil {
		return nil, err
	}
	return s.Store.SkillTargetList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: int32(min(max(limit, 1), 500))})
}

// Target is one target; db.ErrNotFound for an id that is not a canonical UUID.
func (s Service) Target(ctx context.Context, targetID string) (db.SkillTarget, error) {
	if _, err := uuid.Parse(targetID); err != nil || len(targetID) != 36 {
		return db.SkillTarget{}, db.ErrNotFound
	}
	return s.Store.SkillTargetGet(ctx, targetID)
}

// Enroll spends an enrollment token: the target gets its own credential, returned once (only its digest is
// stored). ErrUnauthenticated for an unknown, spent or expired token or a revoked target.
func (s Service) Enroll(ctx context.Context, enrollmentToken string) (db.SkillTarget, string, error) {
	if enrollmentToken == "" || len(enrollmentToken) > 256 {
		return db.SkillTarget{}, "", ErrUnauthenticated
	}
	digest := Digest(enrollmentToken)
	t, err := s.Store.SkillTargetGetByEnrollment(ctx, digest)
	if errors.Is(err, db.ErrNotFound) {
		return db.SkillTarget{}, "", ErrUnauthenticated
	}
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	now, err := s.Store.DBNow(ctx)
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	cred, credDigest, err := token("pcsc_")
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	n, err := s.Store.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: credDigest, UpdatedAt: now, EnrollmentDigest: digest})
	if err != nil {
		return db.SkillTarget{}, "", err
	}
	if n != 1 {
		return db.SkillTarget{}, "", ErrUnauthenticated
	}
	t, err = s.Store.SkillTargetGet(ctx, t.TargetID)
	return t, cred, err
}

// Authenticate is the target of an agent credential: ErrUnauthenticated when unknown, ErrRevoked when revoked.
func (s Service) Authenticate(ctx context.Context, credential string) (db.SkillTarget, error) {
	if credential == "" || len(credential) > 256 {
		return db.SkillTarget{}, ErrUnauthenticated
	}
	t, err := s.Store.SkillTargetGetByCredential(ctx, Digest(credential))
	if errors.Is(err, db.ErrNotFound) {
		return db.SkillTarget{}, ErrUnauthenticated
	}
	if err != nil {
		return db.SkillTarget{}, err
	}
	if !t.RevokedAt.IsZero() {
		return db.SkillTarget{}, ErrRevoked
	}
	return t, nil
}

// Revoke revokes a target: its credential and unspent enrollment are refused from now on. Revoking twice is a
// no-op.
func (s Service) Revoke(ctx context.Context, targetID string) (db.SkillTarget, error) {
	t, err := s.Target(ctx, targetID)
	if err != nil {
		return db.SkillTarget{}, err
	}
	if t.RevokedAt.IsZero() {
		now, err := s.Store.DBNow(ctx)
		if err != nil {
			return db.SkillTarget{}, err
		}
		if _, err := s.Store.SkillTargetRevoke(ctx, db.SkillTargetRevokeParams{RevokedAt: now, TargetID: targetID}); err != nil {
			return db.SkillTarget{}, err
		}
	}
	return s.Store.SkillTargetGet(ctx, targetID)
}

// StateOf is the state of a publication given what the agent observed and the desired revision's tree digest.
func StateOf(p db.SkillPublication, desiredTreeDigest string) string {
	switch {
	case p.ErrorCode == ReportConflict:
		return StateConflict
	case p.ErrorCode == ReportIncompatible:
		return StateIncompatible
	case p.ErrorCode != "":
		return StateDeliveryFailed
	case p.DesiredState == DesiredUnpublished:
		if p.ObservedRevision == 0 {
			return StateCurrent
		}
		return StatePending
	case p.ObservedRevision == 0:
		return StatePending
	case p.ObservedRevision != p.DesiredRevision:
		return StateUpdateAvailable
	case p.ObservedTreeDigest != desiredTreeDigest:
		return StateDrifted
	default:
		return StateCurrent
	}
}

// setDesired is the guarded write of a publication's desired state (compare-and-set on its generation).
func setDesired(ctx context.Context, q db.Queries, p db.SkillPublication, desired string, revision int64, treeDigest string, now time.Time) error {
	p.DesiredState, p.DesiredRevision = desired, revision
	n, err := q.SkillPublicationUpdateDesired(ctx, db.SkillPublicationUpdateDesiredParams{DesiredState: desired, DesiredRevision: revision,
		State: StateOf(p, treeDigest), UpdatedAt: now, TargetID: p.TargetID, SkillName: p.SkillName, ExpectedGeneration: p.Generation})
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrConflict
	}
	return nil
}

// writeAttempts bounds how often a publication write re-reads the row after losing a compare-and-set.
const writeAttempts = 4

// Publish sets the desired state of a skill on a target: published at revision (0: the skill's current revision,
// which later revisions then replace; an older one pins it, a rollback), or unpublished when unpublish is set.
func (s Service) Publish(ctx context.Context, targetID, name string, revision int64, unpublish bool) (db.SkillPublication, error) {
	return s.publish(ctx, targetID, name, revision, unpublish, nil)
}

// ErrStale means the publication was no longer at the generation the caller was shown; nothing was written.
var ErrStale = errors.New("skills: publication changed since it was read")

// PublishAt is Publish as one guarded write of the publication at the generation the caller was shown (0: the
// target had no publication of the skill): when the publication has moved on it writes nothing and returns
// ErrStale with the publication as it is now (the zero value when there is none). It does not retry at another
// generation: a dashboard page that went stale must say so instead of acting on a state its operator did not see (a
// new revision that left this publication as it was only makes it read the skill again).
func (s Service) PublishAt(ctx context.Context, targetID, name string, revision int64, unpublish bool, generation int64) (db.SkillPublication, error) {
	if generation < 0 {
		return db.SkillPublication{}, &sources.ValidationError{Field: "generation", Message: "must be >= 0"}
	}
	return s.publish(ctx, targetID, name, revision, unpublish, &generation)
}

// errSkillMoved means a new revision became the skill's current one after publish read it; publish reads again.
var errSkillMoved = errors.New("skills: skill moved on while publishing")

// publish is Publish (expected nil: a lost compare-and-set re-reads and tries again) and PublishAt (expected: the
// generation the caller saw, one attempt at it).
//
// The write is one transaction that first rewrites the skill's row unchanged where it is still at the current
// revision read (SkillUpdateRevision, a compare-and-set whose row lock lasts until the commit): a packaging commit
// moves the skill before it moves the publications that followed the old revision, so a new revision either
// committed before (the compare-and-set fails, nothing is written, publish reads the skill again) or waits for this
// write and then sees it — a publication that follows the current revision is never left behind looking pinned.
func (s Service) publish(ctx context.Context, targetID, name string, revision int64, unpublish bool, expected *int64) (db.SkillPublication, error) {
	t, err := s.Target(ctx, targetID)
	if err != nil {
		return db.SkillPublication{}, err
	}
	if !t.RevokedAt.IsZero() {
		return db.SkillPublication{}, ErrRevoked
	}
	if !ValidName(name) {
		return db.SkillPublication{}, db.ErrNotFound
	}
	if revision < 0 {
		return db.SkillPublication{}, &sources.ValidationError{Field: "revision", Message: "must be >= 1 when given"}
	}
	desired := DesiredPublished
	if unpublish {
		desired = DesiredUnpublished
	}
	key := db.SkillPublicationGetParams{TargetID: targetID, SkillName: name}
	for range writeAttempts {
		// Read outside the transaction (the archive stays out of it); the transaction checks what was read.
		sk, err := s.Store.SkillGet(ctx, db.SkillGetParams{ScopeID: t.ScopeID, SkillName: name})
		if err != nil {
			return db.SkillPublication{}, err
		}
		want := revision
		if want == 0 {
			want = sk.CurrentRevision
		}
		rev, err := s.Store.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: t.ScopeID, SkillName: name, Revision: want})
		if errors.Is(err, db.ErrNotFound) {
			return db.SkillPublication{}, &sources.ValidationError{Field: "revision", Message: "no such revision"}
		}
		if err != nil {
			return db.SkillPublication{}, err
		}
		var seen db.SkillPublication // the publication as it is when the write is refused (ErrStale)
		err = s.Store.InTx(ctx, func(ctx context.Context, q db.Queries) error {
			n, err := q.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: sk.CurrentRevision, UpdatedAt: sk.UpdatedAt,
				ScopeID: t.ScopeID, SkillName: name, ExpectedRevision: sk.CurrentRevision})
			if err != nil {
				return err
			}
			if n != 1 {
				return errSkillMoved
			}
			now, err := q.DBNow(ctx)
			if err != nil {
				return err
			}
			p, err := q.SkillPublicationGet(ctx, key)
			if errors.Is(err, db.ErrNotFound) {
				if expected != nil && *expected != 0 {
					return ErrStale
				}
				if unpublish {
					return db.ErrNotFound
				}
				p = db.SkillPublication{TargetID: targetID, SkillName: name, ScopeID: t.ScopeID, DesiredState: desired,
					DesiredRevision: want, State: StatePending, Generation: 1, CreatedAt: now, UpdatedAt: now}
				return q.SkillPublicationInsert(ctx, p)
			}
			if err != nil {
				return err
			}
			if expected != nil && p.Generation != *expected {
				seen = p
				return ErrStale
			}
			return setDesired(ctx, q, p, desired, want, rev.TreeDigest, now)
		})
		switch {
		case err == nil:
			return s.Store.SkillPublicationGet(ctx, key)
		case errors.Is(err, errSkillMoved):
			continue // a new revision came first: read the skill again
		case errors.Is(err, ErrStale):
			return seen, ErrStale
		case errors.Is(err, db.ErrConflict) || errors.Is(err, ErrConflict): // a concurrent first publication, or a lost compare-and-set
			if expected != nil {
				return s.stale(ctx, key)
			}
			continue
		default:
			return db.SkillPublication{}, err
		}
	}
	return db.SkillPublication{}, ErrConflict
}

// stale is PublishAt's answer when its write lost to another: ErrStale with the publication as it is now.
func (s Service) stale(ctx context.Context, key db.SkillPublicationGetParams) (db.SkillPublication, error) {
	p, err := s.Store.SkillPublicationGet(ctx, key)
	if errors.Is(err, db.ErrNotFound) {
		return db.SkillPublication{}, ErrStale
	}
	if err != nil {
		return db.SkillPublication{}, err
	}
	return p, ErrStale
}

// Publications lists a target's publications.
func (s Service) Publications(ctx context.Context, targetID string) ([]db.SkillPublication, error) {
	if _, err := s.Target(ctx, targetID); err != nil {
		return nil, err
	}
	return s.Store.SkillPublicationListByTarget(ctx, targetID)
}

// DesiredSkill is one entry of an agent's desired state.
type DesiredSkill struct {
	Name          string
	DesiredState  string
	Revision      int64
	TreeDigest    string
	ArchiveDigest string
	State         string
	Generation    int64
}

// Desired is the desired state of an authenticated target, by skill name.
func (s Service) Desired(ctx context.Context, t db.SkillTarget) ([]DesiredSkill, error) {
	pubs, err := s.Store.SkillPublicationListByTarget(ctx, t.TargetID)
	if err != nil {
		return nil, err
	}
	out := make([]DesiredSkill, 0, len(pubs))
	for _, p := range pubs {
		d := DesiredSkill{Name: p.SkillName, DesiredState: p.DesiredState, Revision: p.DesiredRevision, State: p.State, Generation: p.Generation}
		if p.DesiredState == DesiredPublished {
			rev, err := s.Store.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: p.ScopeID, SkillName: p.SkillName, Revision: p.DesiredRevision})
			if err != nil {
				return nil, err
			}
			d.TreeDigest, d.ArchiveDigest = rev.TreeDigest, rev.ArchiveDigest
		}
		out = append(out, d)
	}
	return out, nil
}

// Archive is the package archive of a revision the target is meant to have; db.ErrNotFound for any other.
func (s Service) Archive(ctx context.Context, t db.SkillTarget, name string, revision int64) (db.SkillRevision, error) {
	p, err := s.Store.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: t.TargetID, SkillName: name})
	if err != nil {
		return db.SkillRevision{}, err
	}
	if p.DesiredState != DesiredPublished || p.DesiredRevision != revision {
		return db.SkillRevision{}, db.ErrNotFound
	}
	return s.Store.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: p.ScopeID, SkillName: name, Revision: revision})
}

// Report is what an agent observed for one skill: a revision and the tree digest of its folder (0 and "" when it
// holds none), or an error code.
type Report struct {
	ObservedRevision   int64
	ObservedTreeDigest string
	ErrorCode          string
}

// Report records an authenticated target's observation and the publication's new state (a guarded write).
func (s Service) Report(ctx context.Context, t db.SkillTarget, name string, r Report) (db.SkillPublication, error) {
	switch {
	case r.ObservedRevision < 0:
		return db.SkillPublication{}, &sources.ValidationError{Field: "observed_revision", Message: "must be >= 0"}
	case r.ErrorCode != "" && !errorCodeRe.MatchString(r.ErrorCode):
		return db.SkillPublication{}, &sources.ValidationError{Field: "error_code", Message: "must be 1..64 of a-z, 0-9 and _"}
	case r.ObservedRevision > 0 && !digestRe.MatchString(r.ObservedTreeDigest):
		return db.SkillPublication{}, &sources.ValidationError{Field: "observed_tree_digest", Message: "must be 64 lowercase hex characters"}
	case r.ObservedRevision == 0 && r.ObservedTreeDigest != "":
		return db.SkillPublication{}, &sources.ValidationError{Field: "observed_tree_digest", Message: "must be empty without an observed revision"}
	}
	for range writeAttempts {
		p, err := s.Store.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: t.TargetID, SkillName: name})
		if err != nil {
			return db.SkillPublication{}, err
		}
		desiredDigest := ""
		if p.DesiredState == DesiredPublished {
			rev, err := s.Store.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: p.ScopeID, SkillName: name, Revision: p.DesiredRevision})
			if err != nil {
				return db.SkillPublication{}, err
			}
			desiredDigest = rev.TreeDigest
		}
		p.ObservedRevision, p.ObservedTreeDigest, p.ErrorCode = r.ObservedRevision, r.ObservedTreeDigest, r.ErrorCode
		now, err := s.Store.DBNow(ctx)
		if err != nil {
			return db.SkillPublication{}, err
		}
		n, err := s.Store.SkillPublicationUpdateObserved(ctx, db.SkillPublicationUpdateObservedParams{ObservedRevision: r.ObservedRevision,
			ObservedTreeDigest: r.ObservedTreeDigest, ErrorCode: r.ErrorCode, State: StateOf(p, desiredDigest), UpdatedAt: now,
			TargetID: t.TargetID, SkillName: name, ExpectedGeneration: p.Generation})
		if err != nil {
			return db.SkillPublication{}, err
		}
		if n == 1 {
			return s.Store.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: t.TargetID, SkillName: name})
		}
	}
	return db.SkillPublication{}, ErrConflict
}
