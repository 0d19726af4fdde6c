package conv

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/powercontext/powercontext/db"
)

type skill[T Time] = struct {
	ScopeID         string
	SkillName       string
	CurrentRevision int64
	CreatedAt       T
	UpdatedAt       T
}

// SkillFromGen converts a pc_skills row.
func SkillFromGen[T Time, R ~skill[T]](g R) db.Skill {
	r := skill[T](g)
	return db.Skill{ScopeID: r.ScopeID, SkillName: r.SkillName, CurrentRevision: r.CurrentRevision,
		CreatedAt: TimeFromGen(r.CreatedAt), UpdatedAt: TimeFromGen(r.UpdatedAt)}
}

// SkillToGen builds the parameters of SkillInsert.
func SkillToGen[P ~skill[T], T Time](s db.Skill) P {
	return P(skill[T]{ScopeID: s.ScopeID, SkillName: s.SkillName, CurrentRevision: s.CurrentRevision,
		CreatedAt: TimeToGen[T](s.CreatedAt), UpdatedAt: TimeToGen[T](s.UpdatedAt)})
}

type skillUpdateRevision[T Time] = struct {
	CurrentRevision  int64
	UpdatedAt        T
	ScopeID          string
	SkillName        string
	ExpectedRevision int64
}

// SkillUpdateRevisionToGen builds the parameters of SkillUpdateRevision.
func SkillUpdateRevisionToGen[P ~skillUpdateRevision[T], T Time](p db.SkillUpdateRevisionParams) P {
	return P(skillUpdateRevision[T]{CurrentRevision: p.CurrentRevision, UpdatedAt: TimeToGen[T](p.UpdatedAt),
		ScopeID: p.ScopeID, SkillName: p.SkillName, ExpectedRevision: p.ExpectedRevision})
}

type skillRevision[T Time] = struct {
	ScopeID            string
	SkillName          string
	Revision           int64
	TreeDigest         string
	ArchiveDigest      string
	FileCount          int32
	ByteSize           int64
	Archive            []byte
	SourceCandidateIds []byte
	CreatedAt          T
}

// SkillRevisionFromGen converts a pc_skill_revisions row.
func SkillRevisionFromGen[T Time, R ~skillRevision[T]](g R) db.SkillRevision {
	r := skillRevision[T](g)
	return db.SkillRevision{ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.Revision, TreeDigest: r.TreeDigest,
		ArchiveDigest: r.ArchiveDigest, FileCount: r.FileCount, ByteSize: r.ByteSize, Archive: r.Archive,
		SourceCandidateIDs: r.SourceCandidateIds, CreatedAt: TimeFromGen(r.CreatedAt)}
}

// SkillRevisionToGen builds the parameters of SkillRevisionInsert.
func SkillRevisionToGen[P ~skillRevision[T], T Time](r db.SkillRevision) P {
	return P(skillRevision[T]{ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.Revision, TreeDigest: r.TreeDigest,
		ArchiveDigest: r.ArchiveDigest, FileCount: r.FileCount, ByteSize: r.ByteSize, Archive: r.Archive,
		SourceCandidateIds: r.SourceCandidateIDs, CreatedAt: TimeToGen[T](r.CreatedAt)})
}

type skillRevisionSummary[T Time] = struct {
	ScopeID            string
	SkillName          string
	Revision           int64
	TreeDigest         string
	ArchiveDigest      string
	FileCount          int32
	ByteSize           int64
	SourceCandidateIds []byte
	CreatedAt          T
}

// SkillRevisionSummaryFromGen converts a pc_skill_revisions row without its archive (SkillRevisionListSummary).
func SkillRevisionSummaryFromGen[T Time, R ~skillRevisionSummary[T]](g R) db.SkillRevisionSummary {
	r := skillRevisionSummary[T](g)
	return db.SkillRevisionSummary{ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.Revision, TreeDigest: r.TreeDigest,
		ArchiveDigest: r.ArchiveDigest, FileCount: r.FileCount, ByteSize: r.ByteSize, SourceCandidateIDs: r.SourceCandidateIds,
		CreatedAt: TimeFromGen(r.CreatedAt)}
}

type skillRevisionCurrent[T Time] = struct {
	ScopeID            string
	SkillName          string
	CurrentRevision    int64
	CreatedAt          T
	UpdatedAt          T
	TreeDigest         string
	ArchiveDigest      string
	FileCount          int32
	ByteSize           int64
	SourceCandidateIds []byte
	RevisionCreatedAt  T
}

// SkillRevisionListCurrentFromGen converts a skill joined with its current revision (SkillRevisionListCurrent).
func SkillRevisionListCurrentFromGen[T Time, R ~skillRevisionCurrent[T]](g R) db.SkillCurrentRevision {
	r := skillRevisionCurrent[T](g)
	return db.SkillCurrentRevision{
		Skill: db.Skill{ScopeID: r.ScopeID, SkillName: r.SkillName, CurrentRevision: r.CurrentRevision,
			CreatedAt: TimeFromGen(r.CreatedAt), UpdatedAt: TimeFromGen(r.UpdatedAt)},
		Revision: db.SkillRevisionSummary{ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.CurrentRevision,
			TreeDigest: r.TreeDigest, ArchiveDigest: r.ArchiveDigest, FileCount: r.FileCount, ByteSize: r.ByteSize,
			SourceCandidateIDs: r.SourceCandidateIds, CreatedAt: TimeFromGen(r.RevisionCreatedAt)},
	}
}

type skillTarget[T Time] = struct {
	TargetID            string
	ScopeID             string
	AgentKind           string
	DisplayName         string
	EnrollmentDigest    *string
	EnrollmentExpiresAt *T
	CredentialDigest    *string
	RevokedAt           *T
	Generation          int64
	CreatedAt           T
	UpdatedAt           T
}

// SkillTargetFromGen converts a pc_skill_targets row.
func SkillTargetFromGen[T Time, R ~skillTarget[T]](g R) db.SkillTarget {
	r := skillTarget[T](g)
	return db.SkillTarget{TargetID: r.TargetID, ScopeID: r.ScopeID, AgentKind: r.AgentKind, DisplayName: r.DisplayName,
		EnrollmentDigest: TextFromGen(r.EnrollmentDigest), EnrollmentExpiresAt: nullTimeFromGen(r.EnrollmentExpiresAt),
		CredentialDigest: TextFromGen(r.CredentialDigest), RevokedAt: nullTimeFromGen(r.RevokedAt),
		Generation: r.Generation, CreatedAt: TimeFromGen(r.CreatedAt), UpdatedAt: TimeFromGen(r.UpdatedAt)}
}

// SkillTargetToGen builds the parameters of SkillTargetInsert.
func SkillTargetToGen[P ~skillTarget[T], T Time](t db.SkillTarget) P {
	return P(skillTarget[T]{TargetID: t.TargetID, ScopeID: t.ScopeID, AgentKind: t.AgentKind, DisplayName: t.DisplayName,
		EnrollmentDigest: TextToGen(t.EnrollmentDigest), EnrollmentExpiresAt: nullTimeToGen[T](t.EnrollmentExpiresAt),
		CredentialDigest: TextToGen(t.CredentialDigest), RevokedAt: nullTimeToGen[T](t.RevokedAt),
		Generation: t.Generation, CreatedAt: TimeToGen[T](t.CreatedAt), UpdatedAt: TimeToGen[T](t.UpdatedAt)})
}

type skillTargetEnroll[T Time] = struct {
	CredentialDigest *string
	UpdatedAt        T
	EnrollmentDigest *string
}

// SkillTargetEnrollToGen builds the parameters of SkillTargetEnroll.
func SkillTargetEnrollToGen[P ~skillTargetEnroll[T], T Time](p db.SkillTargetEnrollParams) P {
	return P(skillTargetEnroll[T]{CredentialDigest: TextToGen(p.CredentialDigest), UpdatedAt: TimeToGen[T](p.UpdatedAt),
		EnrollmentDigest: TextToGen(p.EnrollmentDigest)})
}

type skillTargetRevoke[T Time] = struct {
	RevokedAt *T
	UpdatedAt T
	TargetID  string
}

// SkillTargetRevokeToGen builds the parameters of SkillTargetRevoke (updated_at is the revocation time).
func SkillTargetRevokeToGen[P ~skillTargetRevoke[T], T Time](p db.SkillTargetRevokeParams) P {
	return P(skillTargetRevoke[T]{RevokedAt: nullTimeToGen[T](p.RevokedAt), UpdatedAt: TimeToGen[T](p.RevokedAt),
		TargetID: p.TargetID})
}

type skillPublication[T Time] = struct {
	TargetID           string
	SkillName          string
	ScopeID            string
	DesiredState       string
	DesiredRevision    int64
	ObservedRevision   *int64
	ObservedTreeDigest *string
	ErrorCode          *string
	State              string
	Generation         int64
	CreatedAt          T
	UpdatedAt          T
}

// SkillPublicationFromGen converts a pc_skill_publications row.
func SkillPublicationFromGen[T Time, R ~skillPublication[T]](g R) db.SkillPublication {
	r := skillPublication[T](g)
	return db.SkillPublication{TargetID: r.TargetID, SkillName: r.SkillName, ScopeID: r.ScopeID,
		DesiredState: r.DesiredState, DesiredRevision: r.DesiredRevision, ObservedRevision: seqFromGen(r.ObservedRevision),
		ObservedTreeDigest: TextFromGen(r.ObservedTreeDigest), ErrorCode: TextFromGen(r.ErrorCode), State: r.State,
		Generation: r.Generation, CreatedAt: TimeFromGen(r.CreatedAt), UpdatedAt: TimeFromGen(r.UpdatedAt)}
}

// SkillPublicationToGen builds the parameters of SkillPublicationInsert.
func SkillPublicationToGen[P ~skillPublication[T], T Time](p db.SkillPublication) P {
	return P(skillPublication[T]{TargetID: p.TargetID, SkillName: p.SkillName, ScopeID: p.ScopeID,
		DesiredState: p.DesiredState, DesiredRevision: p.DesiredRevision, ObservedRevision: seqToGen(p.ObservedRevision),
		ObservedTreeDigest: TextToGen(p.ObservedTreeDigest), ErrorCode: TextToGen(p.ErrorCode), State: p.State,
		Generation: p.Generation, CreatedAt: TimeToGen[T](p.CreatedAt), UpdatedAt: TimeToGen[T](p.UpdatedAt)})
}

type skillPublicationUpdateDesired[T Time] = struct {
	DesiredState       string
	DesiredRevision    int64
	State              string
	UpdatedAt          T
	TargetID           string
	SkillName          string
	ExpectedGeneration int64
}

// SkillPublicationUpdateDesiredToGen builds the parameters of SkillPublicationUpdateDesired.
func SkillPublicationUpdateDesiredToGen[P ~skillPublicationUpdateDesired[T], T Time](p db.SkillPublicationUpdateDesiredParams) P {
	return P(skillPublicationUpdateDesired[T]{DesiredState: p.DesiredState, DesiredRevision: p.DesiredRevision,
		State: p.State, UpdatedAt: TimeToGen[T](p.UpdatedAt), TargetID: p.TargetID, SkillName: p.SkillName,
		ExpectedGeneration: p.ExpectedGeneration})
}

type skillPublicationUpdateObserved[T Time] = struct {
	ObservedRevision   *int64
	ObservedTreeDigest *string
	ErrorCode          *string
	State              string
	UpdatedAt          T
	TargetID           string
	SkillName          string
	ExpectedGeneration int64
}

// SkillPublicationUpdateObservedToGen builds the parameters of SkillPublicationUpdateObserved.
func SkillPublicationUpdateObservedToGen[P ~skillPublicationUpdateObserved[T], T Time](p db.SkillPublicationUpdateObservedParams) P {
	return P(skillPublicationUpdateObserved[T]{ObservedRevision: seqToGen(p.ObservedRevision),
		ObservedTreeDigest: TextToGen(p.ObservedTreeDigest), ErrorCode: TextToGen(p.ErrorCode), State: p.State,
		UpdatedAt: TimeToGen[T](p.UpdatedAt), TargetID: p.TargetID, SkillName: p.SkillName,
		ExpectedGeneration: p.ExpectedGeneration})
}

// SkillTargetDigestToGen builds the argument of SkillTargetGetByCredential and SkillTargetGetByEnrollment (their
// columns are NULL-able; "" is NULL, which matches no row).
func SkillTargetDigestToGen[P ~*string](digest string) P {
	return P(TextToGen(digest))
}

type stateCount = struct {
	State            string
	PublicationCount int64
}

// StateCountFromGen converts a row of SkillPublicationCountByState.
func StateCountFromGen[R ~stateCount](g R) db.StateCount {
	r := stateCount(g)
	return db.StateCount{State: r.State, Count: r.PublicationCount}
}

// SkillRevisionCandidateIDs reads a revision's source_candidate_ids (a JSON array of candidate ids), each id once,
// sorted: the rows of pc_skill_revision_candidates an adapter without a data-modifying CTE writes after the revision.
func SkillRevisionCandidateIDs(raw []byte) ([]string, error) {
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// SkillRevisionCandidateSets splits the distinct candidate ids of SkillRevisionCandidateIDs into JSON arrays of at
// most size ids each (one array when size is 0; none without ids): the arguments of the adapters'
// SkillRevisionCandidateInsertMany, one statement per array.
func SkillRevisionCandidateSets(ids []string, size int) ([]CandidateSet, error) {
	var out []CandidateSet
	for len(ids) > 0 {
		n := len(ids)
		if size > 0 {
			n = min(n, size)
		}
		b, err := json.Marshal(ids[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, CandidateSet{JSON: string(b), Count: int64(n)})
		ids = ids[n:]
	}
	return out, nil
}

// CandidateSet is one JSON array of SkillRevisionCandidateSets and the number of ids in it.
type CandidateSet struct {
	JSON  string
	Count int64
}

// Wrote checks that the SkillRevisionCandidateInsertMany of s wrote n = one row per id (it reads the revision just
// inserted, so fewer rows would mean the revision was not there).
func (s CandidateSet) Wrote(n int64) error {
	if n != s.Count {
		return fmt.Errorf("conv: SkillRevisionCandidateInsertMany wrote %d of %d candidate rows", n, s.Count)
	}
	return nil
}
