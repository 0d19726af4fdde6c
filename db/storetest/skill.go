package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// skillCases are the cases of pc_skills, pc_skill_revisions, pc_skill_targets and pc_skill_publications (skill.sql).
var skillCases = []storeCase{
	{"SkillUpdateRevision/InsertGetListCompareAndSet", testSkill},
	{"SkillRevisionInsert/GetListConflictChecks", testSkillRevision},
	{"SkillRevisionListSummary/NewestFirstNoArchive", testSkillRevisionListSummary},
	{"SkillRevisionListCurrent/JoinedCurrentNoArchive", testSkillRevisionListCurrent},
	{"SkillTargetEnroll/EnrollSpendExpireRevoke", testSkillTarget},
	{"SkillPublicationUpdateObserved/DesiredObservedNulls", testSkillPublication},
	{"SkillPublicationCountByState/EmptyThenByState", testSkillPublicationCountByState},
	{"SkillDeleteBatch/EraseBatches", testSkillDeleteBatches},
}

func testSkill(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	_, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: "a"})
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.SkillList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	sk := db.Skill{ScopeID: scope, SkillName: "retry-flaky-tests", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.SkillInsert(ctx, sk))
	require.ErrorIs(t, s.SkillInsert(ctx, sk), db.ErrConflict, "(scope, name) is the primary key")
	require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: "a-first", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	got, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: sk.SkillName})
	require.NoError(t, err)
	require.Equal(t, sk, got)
	requireUTC(t, got.CreatedAt)
	list, err = s.SkillList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "a-first", list[0].SkillName, "by name")
	list, err = s.SkillList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 1})
	require.NoError(t, err)
	require.Len(t, list, 1)

	later := now.Add(time.Second)
	n, err := s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: 2, UpdatedAt: later, ScopeID: scope,
		SkillName: sk.SkillName, ExpectedRevision: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: 2, UpdatedAt: later, ScopeID: scope,
		SkillName: sk.SkillName, ExpectedRevision: 1})
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "a stale expected revision matches nothing")
	got, err = s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: sk.SkillName})
	require.NoError(t, err)
	require.EqualValues(t, 2, got.CurrentRevision)
	require.Equal(t, later, got.UpdatedAt)
}

func skillRevision(scope, name string, rev int64, now time.Time) db.SkillRevision {
	return db.SkillRevision{ScopeID: scope, SkillName: name, Revision: rev, TreeDigest: hex64(rev), ArchiveDigest: hex64(rev + 100),
		FileCount: 2, ByteSize: 300, Archive: []byte{0, 1, 2, byte(rev)}, SourceCandidateIDs: []byte(`["` + uuid.NewString() + `"]`),
		CreatedAt: now}
}

func hex64(n int64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 64)
	for i := range b {
		b[i] = digits[(int(n)+i)%16]
	}
	return string(b)
}

func testSkillRevision(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	_, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: "x", Revision: 1})
	require.ErrorIs(t, err, db.ErrNotFound)
	r1, r2 := skillRevision(scope, "x", 1, now), skillRevision(scope, "x", 2, now.Add(time.Second))
	require.NoError(t, s.SkillRevisionInsert(ctx, r1))
	require.NoError(t, s.SkillRevisionInsert(ctx, r2))
	require.ErrorIs(t, s.SkillRevisionInsert(ctx, r2), db.ErrConflict, "(scope, name, revision) is the primary key")
	got, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: "x", Revision: 1})
	require.NoError(t, err)
	require.Equal(t, r1, got)
	list, err := s.SkillRevisionList(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: "x", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []db.SkillRevision{r2, r1}, list, "newest first")
	list, err = s.SkillRevisionList(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: "other", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	// The CHECK constraints bound the package: no empty or oversized trees.
	bad := skillRevision(scope, "x", 3, now)
	bad.FileCount = 0
	require.Error(t, s.SkillRevisionInsert(ctx, bad))
	bad = skillRevision(scope, "x", 3, now)
	bad.ByteSize = 1<<20 + 1
	require.Error(t, s.SkillRevisionInsert(ctx, bad))
	_, err = s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: "x", Revision: 3})
	require.ErrorIs(t, err, db.ErrNotFound)
}

// summary is r without its archive.
func summary(r db.SkillRevision) db.SkillRevisionSummary {
	return db.SkillRevisionSummary{ScopeID: r.ScopeID, SkillName: r.SkillName, Revision: r.Revision, TreeDigest: r.TreeDigest,
		ArchiveDigest: r.ArchiveDigest, FileCount: r.FileCount, ByteSize: r.ByteSize, SourceCandidateIDs: r.SourceCandidateIDs,
		CreatedAt: r.CreatedAt}
}

func testSkillRevisionListSummary(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	list, err := s.SkillRevisionListSummary(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: "x", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)
	r1, r2, r3 := skillRevision(scope, "x", 1, now), skillRevision(scope, "x", 2, now.Add(time.Second)), skillRevision(scope, "x", 3, now.Add(2*time.Second))
	other := skillRevision(scope, "y", 1, now)
	for _, r := range []db.SkillRevision{r1, r3, r2, other} {
		require.NoError(t, s.SkillRevisionInsert(ctx, r))
	}
	list, err = s.SkillRevisionListSummary(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: "x", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []db.SkillRevisionSummary{summary(r3), summary(r2), summary(r1)}, list, "newest first, every column but the archive")
	requireUTC(t, list[0].CreatedAt)
	list, err = s.SkillRevisionListSummary(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: "x", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []db.SkillRevisionSummary{summary(r3), summary(r2)}, list, "at most limit")
	list, err = s.SkillRevisionListSummary(ctx, db.SkillRevisionListParams{ScopeID: "scope-" + randHex(t, 8), SkillName: "x", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list, "another scope's revisions are not listed")
}

func testSkillRevisionListCurrent(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	list, err := s.SkillRevisionListCurrent(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	// "b" is at revision 1 of 2 (its current revision, not its newest, is listed); "a" at 1; "c" names a revision
	// that does not exist and is left out.
	later := now.Add(time.Second)
	a1, b1, b2 := skillRevision(scope, "a", 1, now), skillRevision(scope, "b", 1, now), skillRevision(scope, "b", 2, later)
	for _, r := range []db.SkillRevision{a1, b1, b2} {
		require.NoError(t, s.SkillRevisionInsert(ctx, r))
	}
	skA := db.Skill{ScopeID: scope, SkillName: "a", CurrentRevision: 1, CreatedAt: now, UpdatedAt: later}
	skB := db.Skill{ScopeID: scope, SkillName: "b", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}
	for _, sk := range []db.Skill{skB, skA, {ScopeID: scope, SkillName: "c", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}} {
		require.NoError(t, s.SkillInsert(ctx, sk))
	}
	require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: "scope-" + randHex(t, 8), SkillName: "a", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))

	list, err = s.SkillRevisionListCurrent(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []db.SkillCurrentRevision{{Skill: skA, Revision: summary(a1)}, {Skill: skB, Revision: summary(b1)}}, list,
		"by name, each skill with its current revision")
	requireUTC(t, list[0].Skill.UpdatedAt)
	requireUTC(t, list[0].Revision.CreatedAt)
	list, err = s.SkillRevisionListCurrent(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, []db.SkillCurrentRevision{{Skill: skA, Revision: summary(a1)}}, list, "at most limit")

	n, err := s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: 2, UpdatedAt: later, ScopeID: scope,
		SkillName: "b", ExpectedRevision: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	list, err = s.SkillRevisionListCurrent(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 2)
	skB.CurrentRevision, skB.UpdatedAt = 2, later
	require.Equal(t, db.SkillCurrentRevision{Skill: skB, Revision: summary(b2)}, list[1], "follows the current revision")
}

func testSkillTarget(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	enroll := randHex(t, 64)
	tg := db.SkillTarget{TargetID: uuid.NewString(), ScopeID: scope, AgentKind: "claude_code", DisplayName: "Laptop — Ana",
		EnrollmentDigest: enroll, EnrollmentExpiresAt: now.Add(time.Hour), Generation: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.SkillTargetInsert(ctx, tg))
	dup := tg
	dup.TargetID = uuid.NewString()
	require.ErrorIs(t, s.SkillTargetInsert(ctx, dup), db.ErrConflict, "the enrollment digest is unique")
	got, err := s.SkillTargetGet(ctx, tg.TargetID)
	require.NoError(t, err)
	require.Equal(t, tg, got, "NULL credential and revoked_at read as zero values")
	got, err = s.SkillTargetGetByEnrollment(ctx, enroll)
	require.NoError(t, err)
	require.Equal(t, tg.TargetID, got.TargetID)
	_, err = s.SkillTargetGetByCredential(ctx, "")
	require.ErrorIs(t, err, db.ErrNotFound, "an empty digest is NULL and matches nothing")

	cred := randHex(t, 64)
	n, err := s.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: cred, UpdatedAt: now, EnrollmentDigest: randHex(t, 64)})
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "an unknown enrollment matches nothing")
	n, err = s.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: cred, UpdatedAt: now, EnrollmentDigest: enroll})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: randHex(t, 64), UpdatedAt: now, EnrollmentDigest: enroll})
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "an enrollment is spent once")
	got, err = s.SkillTargetGetByCredential(ctx, cred)
	require.NoError(t, err)
	require.Equal(t, tg.TargetID, got.TargetID)
	require.Empty(t, got.EnrollmentDigest)
	require.True(t, got.EnrollmentExpiresAt.IsZero())
	require.EqualValues(t, 2, got.Generation)
	_, err = s.SkillTargetGetByEnrollment(ctx, enroll)
	require.ErrorIs(t, err, db.ErrNotFound)

	// Expiry is on the database clock.
	expired := db.SkillTarget{TargetID: uuid.NewString(), ScopeID: scope, AgentKind: "codex", DisplayName: "ci",
		EnrollmentDigest: randHex(t, 64), EnrollmentExpiresAt: now.Add(-time.Millisecond), Generation: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.SkillTargetInsert(ctx, expired))
	n, err = s.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: randHex(t, 64), UpdatedAt: now, EnrollmentDigest: expired.EnrollmentDigest})
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "an expired enrollment matches nothing")

	// Revocation: once; a revoked target's unspent enrollment goes with it.
	later := now.Add(time.Second)
	n, err = s.SkillTargetRevoke(ctx, db.SkillTargetRevokeParams{RevokedAt: later, TargetID: tg.TargetID})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillTargetRevoke(ctx, db.SkillTargetRevokeParams{RevokedAt: later, TargetID: tg.TargetID})
	require.NoError(t, err)
	require.EqualValues(t, 0, n)
	got, err = s.SkillTargetGetByCredential(ctx, cred)
	require.NoError(t, err, "a revoked target is still found by its credential (the caller refuses it)")
	require.Equal(t, later, got.RevokedAt)
	require.EqualValues(t, 3, got.Generation)
	pending := db.SkillTarget{TargetID: uuid.NewString(), ScopeID: scope, AgentKind: "codex", DisplayName: "ci",
		EnrollmentDigest: randHex(t, 64), EnrollmentExpiresAt: now.Add(time.Hour), Generation: 1, CreatedAt: now.Add(time.Millisecond), UpdatedAt: now}
	require.NoError(t, s.SkillTargetInsert(ctx, pending))
	n, err = s.SkillTargetRevoke(ctx, db.SkillTargetRevokeParams{RevokedAt: later, TargetID: pending.TargetID})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillTargetEnroll(ctx, db.SkillTargetEnrollParams{CredentialDigest: randHex(t, 64), UpdatedAt: now, EnrollmentDigest: pending.EnrollmentDigest})
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "a revoked target cannot enroll")

	list, err := s.SkillTargetList(ctx, db.ScopeLimitParams{ScopeID: scope, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, pending.TargetID, list[2].TargetID, "oldest first")
	_, err = s.SkillTargetGet(ctx, uuid.NewString())
	require.ErrorIs(t, err, db.ErrNotFound)
}

func testSkillPublication(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	target := uuid.NewString()
	p := db.SkillPublication{TargetID: target, SkillName: "b", ScopeID: scope, DesiredState: "published", DesiredRevision: 1,
		State: "pending", Generation: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.SkillPublicationInsert(ctx, p))
	require.ErrorIs(t, s.SkillPublicationInsert(ctx, p), db.ErrConflict)
	p2 := p
	p2.SkillName = "a"
	require.NoError(t, s.SkillPublicationInsert(ctx, p2))
	got, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: target, SkillName: "b"})
	require.NoError(t, err)
	require.Equal(t, p, got)
	byTarget, err := s.SkillPublicationListByTarget(ctx, target)
	require.NoError(t, err)
	require.Equal(t, []db.SkillPublication{p2, p}, byTarget, "by skill name")
	bySkill, err := s.SkillPublicationListBySkill(ctx, db.SkillGetParams{ScopeID: scope, SkillName: "b"})
	require.NoError(t, err)
	require.Equal(t, []db.SkillPublication{p}, bySkill)

	// Observed: compare-and-set on the generation.
	obs := db.SkillPublicationUpdateObservedParams{ObservedRevision: 1, ObservedTreeDigest: hex64(1), State: "current",
		UpdatedAt: now, TargetID: target, SkillName: "b", ExpectedGeneration: 1}
	n, err := s.SkillPublicationUpdateObserved(ctx, obs)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillPublicationUpdateObserved(ctx, obs)
	require.NoError(t, err)
	require.EqualValues(t, 0, n, "a stale generation matches nothing")
	got, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: target, SkillName: "b"})
	require.NoError(t, err)
	require.EqualValues(t, 1, got.ObservedRevision)
	require.Equal(t, hex64(1), got.ObservedTreeDigest)
	require.Empty(t, got.ErrorCode)
	require.Equal(t, "current", got.State)
	require.EqualValues(t, 2, got.Generation)

	// Desired: a new revision; then an error report clears the observed revision (NULL).
	n, err = s.SkillPublicationUpdateDesired(ctx, db.SkillPublicationUpdateDesiredParams{DesiredState: "published", DesiredRevision: 2,
		State: "update_available", UpdatedAt: now, TargetID: target, SkillName: "b", ExpectedGeneration: 2})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = s.SkillPublicationUpdateObserved(ctx, db.SkillPublicationUpdateObservedParams{ErrorCode: "write_failed",
		State: "delivery_failed", UpdatedAt: now, TargetID: target, SkillName: "b", ExpectedGeneration: 3})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	got, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: target, SkillName: "b"})
	require.NoError(t, err)
	require.EqualValues(t, 2, got.DesiredRevision)
	require.Zero(t, got.ObservedRevision)
	require.Empty(t, got.ObservedTreeDigest)
	require.Equal(t, "write_failed", got.ErrorCode)
	require.Equal(t, "delivery_failed", got.State)
	require.EqualValues(t, 4, got.Generation)

	// The CHECK constraints hold the state vocabulary.
	bad := p
	bad.SkillName, bad.State = "c", "lost"
	require.Error(t, s.SkillPublicationInsert(ctx, bad))
	_, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: target, SkillName: "c"})
	require.ErrorIs(t, err, db.ErrNotFound)
}

func testSkillPublicationCountByState(t *testing.T, s db.Store) {
	ctx := context.Background()
	counts, err := s.SkillPublicationCountByState(ctx)
	require.NoError(t, err)
	require.Empty(t, counts, "no publication, no row")

	now := us(dbNow(t, s))
	for i, c := range []struct{ scope, skill, state string }{
		{"scope-a", "x", "pending"}, {"scope-a", "y", "current"}, {"scope-b", "x", "pending"}, {"scope-b", "z", "pending"},
	} {
		require.NoError(t, s.SkillPublicationInsert(ctx, db.SkillPublication{TargetID: uuid.NewString(), SkillName: c.skill,
			ScopeID: c.scope, DesiredState: "published", DesiredRevision: int64(i + 1), State: c.state, Generation: 1,
			CreatedAt: now, UpdatedAt: now}))
	}
	counts, err = s.SkillPublicationCountByState(ctx)
	require.NoError(t, err)
	require.Equal(t, []db.StateCount{{State: "current", Count: 1}, {State: "pending", Count: 3}}, counts,
		"every scope, by state; a state without publications has no row")
}

func testSkillDeleteBatches(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope, other := "scope-"+randHex(t, 8), "scope-"+randHex(t, 8)
	for _, sc := range []string{scope, other} {
		for _, name := range []string{"a", "b", "c"} {
			require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: sc, SkillName: name, CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
			require.NoError(t, s.SkillRevisionInsert(ctx, skillRevision(sc, name, 1, now)))
			tg := uuid.NewString()
			require.NoError(t, s.SkillTargetInsert(ctx, db.SkillTarget{TargetID: tg, ScopeID: sc, AgentKind: "generic",
				DisplayName: name, Generation: 1, CreatedAt: now, UpdatedAt: now}))
			require.NoError(t, s.SkillPublicationInsert(ctx, db.SkillPublication{TargetID: tg, SkillName: name, ScopeID: sc,
				DesiredState: "published", DesiredRevision: 1, State: "pending", Generation: 1, CreatedAt: now, UpdatedAt: now}))
		}
	}
	for _, del := range []func(context.Context, db.ScopeBatchParams) (int64, error){
		s.SkillDeleteBatch, s.SkillRevisionCandidateDeleteBatch, s.SkillRevisionDeleteBatch, s.SkillTargetDeleteBatch, s.SkillPublicationDeleteBatch,
	} {
		n, err := del(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 2})
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		n, err = del(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 2})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		n, err = del(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 2})
		require.NoError(t, err)
		require.EqualValues(t, 0, n)
	}
	skills, err := s.SkillList(ctx, db.ScopeLimitParams{ScopeID: other, Limit: 10})
	require.NoError(t, err)
	require.Len(t, skills, 3, "another scope's rows stay")
	targets, err := s.SkillTargetList(ctx, db.ScopeLimitParams{ScopeID: other, Limit: 10})
	require.NoError(t, err)
	require.Len(t, targets, 3)
	for _, tg := range targets {
		pubs, err := s.SkillPublicationListByTarget(ctx, tg.TargetID)
		require.NoError(t, err)
		require.Len(t, pubs, 1)
	}
	revs, err := s.SkillRevisionList(ctx, db.SkillRevisionListParams{ScopeID: other, SkillName: "a", Limit: 10})
	require.NoError(t, err)
	require.Len(t, revs, 1)
}

// testSkillRevisionCandidates: SkillRevisionInsert writes one pc_skill_revision_candidates row per distinct id of
// source_candidate_ids (duplicates once, none for an empty array, more ids than one set statement takes), outside a
// transaction and inside one, and a duplicate revision writes none. The rows are read through the discoverer's
// ExperienceCandidateListUnpackaged (which candidates the current revision holds) and counted by the erase's
// SkillRevisionCandidateDeleteBatch.
func testSkillRevisionCandidates(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	ids := make([]string, 4)
	for i := range ids {
		ids[i] = uuid.NewString()
		require.NoError(t, s.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: ids[i], ScopeID: scope,
			WorkID: uuid.NewString(), Title: "t", Lesson: "l", CitedPositions: []byte(`[1]`), Status: "approved", StateVersion: 2,
			CreatedAt: now, UpdatedAt: now}))
	}
	a, b, c, d := ids[0], ids[1], ids[2], ids[3]
	revision := func(rev int64, candidates ...string) db.SkillRevision {
		r := skillRevision(scope, "lesson", rev, now)
		raw, err := json.Marshal(append([]string{}, candidates...))
		require.NoError(t, err)
		r.SourceCandidateIDs = raw
		return r
	}
	unpackaged := func(current int64) []string {
		if current > 1 {
			n, err := s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: current, UpdatedAt: now, ScopeID: scope,
				SkillName: "lesson", ExpectedRevision: current - 1})
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		}
		got, err := s.ExperienceCandidateListUnpackaged(ctx, db.ExperienceCandidateListUnpackagedParams{Limit: 10})
		require.NoError(t, err)
		out := []string{}
		for _, g := range got {
			if g.ScopeID == scope {
				out = append(out, g.CandidateID)
			}
		}
		return out
	}
	sorted := func(xs ...string) []string { return slices.Sorted(slices.Values(xs)) }
	r1 := revision(1, b, a, c, a, b)
	require.NoError(t, s.SkillRevisionInsert(ctx, r1))
	require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: "lesson", CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	require.Equal(t, []string{d}, unpackaged(1), "a, b and c once each")
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		return q.SkillRevisionInsert(ctx, revision(2, c, a, c))
	}))
	require.Equal(t, sorted(b, d), unpackaged(2), "a and c, inside a transaction")
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		return q.SkillRevisionInsert(ctx, revision(3))
	}))
	require.Equal(t, sorted(a, b, c, d), unpackaged(3), "no candidates, no rows")
	err := s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		return q.SkillRevisionInsert(ctx, revision(1, d))
	})
	require.ErrorIs(t, err, db.ErrConflict, "the revision exists")
	got, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: "lesson", Revision: 1})
	require.NoError(t, err)
	require.Equal(t, r1, got)

	// More distinct ids than one MySQL-mode set statement takes (1,000), each once.
	many := make([]string, 1001)
	for i := range many {
		many[i] = uuid.NewString()
	}
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		return q.SkillRevisionInsert(ctx, revision(4, append(many, many[:10]...)...))
	}))
	var total int64
	for {
		n, err := s.SkillRevisionCandidateDeleteBatch(ctx, db.ScopeBatchParams{ScopeID: scope, Limit: 500})
		require.NoError(t, err)
		if n == 0 {
			break
		}
		total += n
	}
	require.EqualValues(t, 3+2+0+1001, total, "one row per distinct id of each revision; none of the refused revision")
}
