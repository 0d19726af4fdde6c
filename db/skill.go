package db

import (
	"context"
	"time"
)

// SkillQueries are the statements of pc_skills (sql/queries/<engine>/skill.sql): one skill per scope and name, with
// the revision agents are offered (docs/skills.md). A method with more than one argument besides ctx takes a
// <Method>Params struct.
type SkillQueries interface {
	// SkillDeleteBatch deletes at most p.Limit skills of p.ScopeID (a scope's erase). Returns rows deleted.
	SkillDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	// SkillGet is one skill; db.ErrNotFound when the scope has none of that name.
	SkillGet(ctx context.Context, p SkillGetParams) (Skill, error)
	// SkillInsert stores a new skill; db.ErrConflict when the scope already has one of that name.
	SkillInsert(ctx context.Context, s Skill) error
	// SkillList lists a scope's skills by name, at most p.Limit.
	SkillList(ctx context.Context, p ScopeLimitParams) ([]Skill, error)
	// SkillUpdateRevision sets current_revision where it equals p.ExpectedRevision. Returns rows matched.
	SkillUpdateRevision(ctx context.Context, p SkillUpdateRevisionParams) (int64, error)
}

// SkillRevisionQueries are the statements of pc_skill_revisions — every package a skill ever had, kept so that an
// older one can be published again — and of pc_skill_revision_candidates, the candidates each revision was built
// from (the relation the packaging discoverer probes).
type SkillRevisionQueries interface {
	// SkillRevisionDeleteBatch deletes at most p.Limit revisions of p.ScopeID (a scope's erase). Returns rows deleted.
	SkillRevisionDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	// SkillRevisionGet is one revision with its archive; db.ErrNotFound when absent.
	SkillRevisionGet(ctx context.Context, p SkillRevisionGetParams) (SkillRevision, error)
	// SkillRevisionCandidateDeleteBatch deletes at most p.Limit candidate rows of p.ScopeID's revisions (a scope's
	// erase, before the revisions). Returns rows deleted.
	SkillRevisionCandidateDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	// SkillRevisionInsert stores a revision and its candidate rows (pc_skill_revision_candidates: one per distinct id
	// of r.SourceCandidateIDs, a JSON array of candidate ids); db.ErrConflict when the number exists. Call it in a
	// transaction: on engines without a data-modifying CTE it is more than one statement.
	SkillRevisionInsert(ctx context.Context, r SkillRevision) error
	// SkillRevisionList lists a skill's revisions, newest first, at most p.Limit.
	SkillRevisionList(ctx context.Context, p SkillRevisionListParams) ([]SkillRevision, error)
	// SkillRevisionListCurrent lists a scope's skills by name, at most p.Limit, each with the summary of its current
	// revision (no archive). A skill whose current revision is missing is left out.
	SkillRevisionListCurrent(ctx context.Context, p ScopeLimitParams) ([]SkillCurrentRevision, error)
	// SkillRevisionListSummary lists a skill's revisions, newest first, at most p.Limit, without their archives.
	SkillRevisionListSummary(ctx context.Context, p SkillRevisionListParams) ([]SkillRevisionSummary, error)
}

// SkillTargetQueries are the statements of pc_skill_targets: agent installations that receive skills.
type SkillTargetQueries interface {
	// SkillTargetDeleteBatch deletes at most p.Limit targets of p.ScopeID (a scope's erase). Returns rows deleted.
	SkillTargetDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	// SkillTargetEnroll spends an unexpired enrollment of a target that is not revoked: the credential digest is
	// set, the enrollment cleared, the generation moves on. Returns rows matched (0: unknown, spent, expired or
	// revoked).
	SkillTargetEnroll(ctx context.Context, p SkillTargetEnrollParams) (int64, error)
	// SkillTargetGet is one target; db.ErrNotFound when absent.
	SkillTargetGet(ctx context.Context, targetID string) (SkillTarget, error)
	// SkillTargetGetByCredential is the target of a credential digest, revoked or not; db.ErrNotFound when none.
	SkillTargetGetByCredential(ctx context.Context, credentialDigest string) (SkillTarget, error)
	// SkillTargetGetByEnrollment is the target of an unspent enrollment digest; db.ErrNotFound when none.
	SkillTargetGetByEnrollment(ctx context.Context, enrollmentDigest string) (SkillTarget, error)
	// SkillTargetInsert stores a new target; db.ErrConflict on a duplicate id or enrollment digest.
	SkillTargetInsert(ctx context.Context, t SkillTarget) error
	// SkillTargetList lists a scope's targets, oldest first, at most p.Limit.
	SkillTargetList(ctx context.Context, p ScopeLimitParams) ([]SkillTarget, error)
	// SkillTargetRevoke revokes a target that is not revoked yet. Returns rows matched.
	SkillTargetRevoke(ctx context.Context, p SkillTargetRevokeParams) (int64, error)
}

// SkillPublicationQueries are the statements of pc_skill_publications: the desired and observed state of one skill
// on one target.
type SkillPublicationQueries interface {
	// SkillPublicationCountByState counts the publications of every scope in each state, by state; a state no
	// publication is in has no row.
	SkillPublicationCountByState(ctx context.Context) ([]StateCount, error)
	// SkillPublicationDeleteBatch deletes at most p.Limit publications of p.ScopeID (a scope's erase). Returns rows
	// deleted.
	SkillPublicationDeleteBatch(ctx context.Context, p ScopeBatchParams) (int64, error)
	// SkillPublicationGet is one publication; db.ErrNotFound when absent.
	SkillPublicationGet(ctx context.Context, p SkillPublicationGetParams) (SkillPublication, error)
	// SkillPublicationInsert stores a new publication; db.ErrConflict when (target, skill) exists.
	SkillPublicationInsert(ctx context.Context, p SkillPublication) error
	// SkillPublicationListBySkill lists a skill's publications by target id.
	SkillPublicationListBySkill(ctx context.Context, p SkillGetParams) ([]SkillPublication, error)
	// SkillPublicationListByTarget lists a target's publications by skill name.
	SkillPublicationListByTarget(ctx context.Context, targetID string) ([]SkillPublication, error)
	// SkillPublicationUpdateDesired sets the desired state and revision and the state where the generation equals
	// p.ExpectedGeneration (the generation becomes expected + 1). Returns rows matched.
	SkillPublicationUpdateDesired(ctx context.Context, p SkillPublicationUpdateDesiredParams) (int64, error)
	// SkillPublicationUpdateObserved records what the agent reported and the state where the generation equals
	// p.ExpectedGeneration (the generation becomes expected + 1). Returns rows matched.
	SkillPublicationUpdateObserved(ctx context.Context, p SkillPublicationUpdateObservedParams) (int64, error)
}

// Skill is one row of pc_skills.
type Skill struct {
	ScopeID         string
	SkillName       string
	CurrentRevision int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// SkillRevision is one row of pc_skill_revisions: a package (a deterministic tar archive) and its digests (SHA-256,
// lowercase hex). SourceCandidateIDs is a JSON array of the Experience candidate ids it was built from.
type SkillRevision struct {
	ScopeID            string
	SkillName          string
	Revision           int64
	TreeDigest         string
	ArchiveDigest      string
	FileCount          int32
	ByteSize           int64
	Archive            []byte
	SourceCandidateIDs []byte
	CreatedAt          time.Time
}

// SkillRevisionSummary is a row of pc_skill_revisions without its archive: what a listing shows.
type SkillRevisionSummary struct {
	ScopeID            string
	SkillName          string
	Revision           int64
	TreeDigest         string
	ArchiveDigest      string
	FileCount          int32
	ByteSize           int64
	SourceCandidateIDs []byte
	CreatedAt          time.Time
}

// SkillCurrentRevision is a skill with the summary of its current revision (SkillRevisionListCurrent).
type SkillCurrentRevision struct {
	Skill    Skill
	Revision SkillRevisionSummary
}

// SkillTarget is one row of pc_skill_targets. The digests are SHA-256 (lowercase hex) of the enrollment token and
// the credential; the tokens themselves are never stored. Zero values stand for NULL.
type SkillTarget struct {
	TargetID            string
	ScopeID             string
	AgentKind           string
	DisplayName         string
	EnrollmentDigest    string
	EnrollmentExpiresAt time.Time
	CredentialDigest    string
	RevokedAt           time.Time
	Generation          int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// SkillPublication is one row of pc_skill_publications. ObservedRevision 0, ObservedTreeDigest "" and ErrorCode ""
// stand for NULL (nothing observed, no error).
type SkillPublication struct {
	TargetID           string
	SkillName          string
	ScopeID            string
	DesiredState       string
	DesiredRevision    int64
	ObservedRevision   int64
	ObservedTreeDigest string
	ErrorCode          string
	State              string
	Generation         int64
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// StateCount is the number of rows in one state (SkillPublicationCountByState).
type StateCount struct {
	State string
	Count int64
}

// SkillGetParams names one skill.
type SkillGetParams struct {
	ScopeID   string
	SkillName string
}

// ScopeLimitParams bounds a list of one scope's rows.
type ScopeLimitParams struct {
	ScopeID string
	Limit   int32
}

// SkillUpdateRevisionParams moves a skill to CurrentRevision where it is at ExpectedRevision.
type SkillUpdateRevisionParams struct {
	CurrentRevision  int64
	UpdatedAt        time.Time
	ScopeID          string
	SkillName        string
	ExpectedRevision int64
}

// SkillRevisionGetParams names one revision.
type SkillRevisionGetParams struct {
	ScopeID   string
	SkillName string
	Revision  int64
}

// SkillRevisionListParams bounds SkillRevisionList.
type SkillRevisionListParams struct {
	ScopeID   string
	SkillName string
	Limit     int32
}

// SkillTargetEnrollParams spends the enrollment of EnrollmentDigest for the credential of CredentialDigest.
type SkillTargetEnrollParams struct {
	CredentialDigest string
	UpdatedAt        time.Time
	EnrollmentDigest string
}

// SkillTargetRevokeParams revokes TargetID at RevokedAt.
type SkillTargetRevokeParams struct {
	RevokedAt time.Time
	TargetID  string
}

// SkillPublicationGetParams names one publication.
type SkillPublicationGetParams struct {
	TargetID  string
	SkillName string
}

// SkillPublicationUpdateDesiredParams is a compare-and-set of a publication's desired state.
type SkillPublicationUpdateDesiredParams struct {
	DesiredState       string
	DesiredRevision    int64
	State              string
	UpdatedAt          time.Time
	TargetID           string
	SkillName          string
	ExpectedGeneration int64
}

// SkillPublicationUpdateObservedParams is a compare-and-set of what an agent reported. Zero values stand for NULL.
type SkillPublicationUpdateObservedParams struct {
	ObservedRevision   int64
	ObservedTreeDigest string
	ErrorCode          string
	State              string
	UpdatedAt          time.Time
	TargetID           string
	SkillName          string
	ExpectedGeneration int64
}
