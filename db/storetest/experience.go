package storetest

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
)

// experienceCases are the cases of pc_experience_candidates (experience.sql).
var experienceCases = []storeCase{
	{"ExperienceCandidateUpdateStatus/PendingCompareAndSet", testExperienceCandidate},
	{"ExperienceCandidateListUnpackaged/ApprovedInNoCurrentRevision", testExperienceCandidateListUnpackaged},
	{"ExperienceCandidateListByStatusAfter/KeysetOldestFirst", testExperienceCandidateListByStatusAfter},
}

// testExperienceCandidateListByStatusAfter: one status of one scope, oldest first by (created_at, candidate_id),
// paged after the last row's pair; candidates sharing a created_at are ordered by id and none is skipped at a page
// boundary between them; other statuses and scopes, an empty scope and a page past the end give nothing.
func testExperienceCandidateListByStatusAfter(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope, other := "keyset-"+randHex(t, 8), "keyset-"+randHex(t, 8)
	candidate := func(scope, status string, at time.Time) db.ExperienceCandidate {
		c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(),
			Title: "t " + randHex(t, 4), Lesson: "l", CitedPositions: []byte(`[1]`), Status: status, StateVersion: 1,
			CreatedAt: at, UpdatedAt: at}
		require.NoError(t, s.ExperienceCandidateInsert(ctx, c))
		return c
	}
	// Three approved at the same instant (ordered by id), one earlier and one later; others that must not show.
	var want []db.ExperienceCandidate
	want = append(want, candidate(scope, "approved", now.Add(-time.Second)))
	tied := []db.ExperienceCandidate{candidate(scope, "approved", now), candidate(scope, "approved", now), candidate(scope, "approved", now)}
	sort.Slice(tied, func(i, j int) bool { return tied[i].CandidateID < tied[j].CandidateID })
	want = append(want, tied...)
	want = append(want, candidate(scope, "approved", now.Add(time.Second+3*time.Microsecond)))
	candidate(scope, "pending", now)
	candidate(scope, "rejected", now.Add(-2*time.Second))
	candidate(other, "approved", now)

	page := func(scope, status string, after db.ExperienceCandidate, limit int32) []db.ExperienceCandidate {
		t.Helper()
		p := db.ExperienceCandidateListByStatusAfterParams{ScopeID: scope, Status: status, AfterCandidateID: db.NilUUID, Limit: limit}
		if after.CandidateID != "" {
			p.AfterCreatedAt, p.AfterCandidateID = after.CreatedAt, after.CandidateID
		}
		cs, err := s.ExperienceCandidateListByStatusAfter(ctx, p)
		require.NoError(t, err)
		for _, c := range cs {
			requireUTC(t, c.CreatedAt)
		}
		return cs
	}
	require.Equal(t, want, page(scope, "approved", db.ExperienceCandidate{}, 10))
	// Pages of two: the boundary falls between rows sharing a created_at.
	var got []db.ExperienceCandidate
	var last db.ExperienceCandidate
	for range 10 {
		p := page(scope, "approved", last, 2)
		got = append(got, p...)
		if len(p) < 2 {
			break
		}
		last = p[len(p)-1]
	}
	require.Equal(t, want, got, "paging by two returns every row once, in order")
	require.Empty(t, page(scope, "approved", want[len(want)-1], 10), "nothing after the last")
	require.Len(t, page(scope, "pending", db.ExperienceCandidate{}, 10), 1)
	require.Len(t, page(other, "approved", db.ExperienceCandidate{}, 10), 1)
	require.Empty(t, page("keyset-"+randHex(t, 8), "approved", db.ExperienceCandidate{}, 10))
}

// testExperienceCandidateListUnpackaged: approved candidates that no current revision of their scope's skills holds,
// by (scope, candidate id) after a scope; a candidate held only by an older revision, or by a revision of another
// scope, is still unpackaged.
func testExperienceCandidateListUnpackaged(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scopeA, scopeB := "a-"+randHex(t, 8), "b-"+randHex(t, 8)
	candidate := func(scope, status string) db.ExperienceCandidate {
		return db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(),
			Title: "t " + randHex(t, 4), Lesson: "l", CitedPositions: []byte(`[1]`), Status: status, StateVersion: 2,
			CreatedAt: now, UpdatedAt: now}
	}
	packaged, old, fresh1, fresh2 := candidate(scopeA, "approved"), candidate(scopeA, "approved"), candidate(scopeA, "approved"),
		candidate(scopeA, "approved")
	pending, rejected := candidate(scopeA, "pending"), candidate(scopeA, "rejected")
	otherScope := candidate(scopeB, "approved") // held by a revision of scope A only: unpackaged in B
	for _, c := range []db.ExperienceCandidate{packaged, old, fresh1, fresh2, pending, rejected, otherScope} {
		require.NoError(t, s.ExperienceCandidateInsert(ctx, c))
	}
	ids := func(cs ...db.ExperienceCandidate) []byte {
		b := []byte("[")
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, c.CandidateID...)
			b = append(b, '"')
		}
		return append(b, ']')
	}
	r1 := skillRevision(scopeA, "lesson", 1, now)
	r1.SourceCandidateIDs = ids(old, packaged)
	r2 := skillRevision(scopeA, "lesson", 2, now)
	r2.SourceCandidateIDs = ids(packaged, otherScope)
	require.NoError(t, s.SkillRevisionInsert(ctx, r1))
	require.NoError(t, s.SkillRevisionInsert(ctx, r2))
	require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scopeA, SkillName: "lesson", CurrentRevision: 2, CreatedAt: now, UpdatedAt: now}))

	sorted := func(cs ...db.ExperienceCandidate) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.CandidateID
		}
		sort.Strings(out)
		return out
	}
	idsOf := func(cs []db.ExperienceCandidate) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.CandidateID
		}
		return out
	}
	got, err := s.ExperienceCandidateListUnpackaged(ctx, db.ExperienceCandidateListUnpackagedParams{AfterScopeID: "", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, append(sorted(old, fresh1, fresh2), otherScope.CandidateID), idsOf(got), "scope, then candidate id")
	require.Equal(t, old, got[slices.IndexFunc(got, func(c db.ExperienceCandidate) bool { return c.CandidateID == old.CandidateID })])
	got, err = s.ExperienceCandidateListUnpackaged(ctx, db.ExperienceCandidateListUnpackagedParams{AfterScopeID: "", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, sorted(old, fresh1, fresh2)[:2], idsOf(got))
	got, err = s.ExperienceCandidateListUnpackaged(ctx, db.ExperienceCandidateListUnpackagedParams{AfterScopeID: scopeA, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []string{otherScope.CandidateID}, idsOf(got), "after scope A")
}

func testExperienceCandidate(t *testing.T, s db.Store) {
	ctx := context.Background()
	now := us(dbNow(t, s))
	scope := "scope-" + randHex(t, 8)
	upper := "SCOPE-" + scope[len("scope-"):]

	_, err := s.ExperienceCandidateGet(ctx, uuid.NewString())
	require.ErrorIs(t, err, db.ErrNotFound)
	list, err := s.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: scope, Status: "", Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list)

	candidate := func(scope, status string, at time.Time) db.ExperienceCandidate {
		return db.ExperienceCandidate{
			CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(),
			Title: "title é " + randHex(t, 8), Lesson: "lesson " + randHex(t, 8), CitedPositions: []byte(`[2,5]`),
			Status: status, StateVersion: 1, CreatedAt: at, UpdatedAt: at,
		}
	}
	c1 := candidate(scope, "pending", now.Add(1*time.Microsecond))
	c2 := candidate(scope, "pending", now.Add(2*time.Microsecond))
	c3 := candidate(scope, "approved", now.Add(3*time.Microsecond))
	c4 := candidate(scope, "pending", now.Add(3*time.Microsecond)) // same created_at as c3: candidate_id breaks the tie
	cOther := candidate(upper, "pending", now.Add(4*time.Microsecond))
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		for _, c := range []db.ExperienceCandidate{c2, c4, c1, c3, cOther} {
			require.NoError(t, q.ExperienceCandidateInsert(ctx, c))
		}
		return nil
	}))
	require.ErrorIs(t, s.ExperienceCandidateInsert(ctx, c1), db.ErrConflict)

	got, err := s.ExperienceCandidateGet(ctx, c1.CandidateID)
	require.NoError(t, err)
	require.Equal(t, c1, got)
	requireUTC(t, got.CreatedAt)
	requireUTC(t, got.UpdatedAt)

	// Newest first: created_at DESC, candidate_id DESC.
	newest := []db.ExperienceCandidate{c3, c4}
	if c4.CandidateID > c3.CandidateID {
		newest = []db.ExperienceCandidate{c4, c3}
	}
	listOf := func(scope, status string, limit int32) []db.ExperienceCandidate {
		t.Helper()
		cs, err := s.ExperienceCandidateList(ctx, db.ExperienceCandidateListParams{ScopeID: scope, Status: status, Limit: limit})
		require.NoError(t, err)
		return cs
	}
	require.Equal(t, append(append([]db.ExperienceCandidate{}, newest...), c2, c1), listOf(scope, "", 10))
	require.Equal(t, newest, listOf(scope, "", 2))
	require.Equal(t, []db.ExperienceCandidate{c4, c2, c1}, listOf(scope, "pending", 10))
	require.Equal(t, []db.ExperienceCandidate{c3}, listOf(scope, "approved", 10))
	require.Empty(t, listOf(scope, "rejected", 10))
	require.Equal(t, []db.ExperienceCandidate{cOther}, listOf(upper, "", 10), "scope ids are byte-exact")

	// Compare-and-set on a pending candidate: succeeds once, bumps the version, keeps created_at.
	at := now.Add(time.Second + 7*time.Microsecond)
	n, err := s.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: c1.CandidateID, ExpectedVersion: 1, Status: "approved", UpdatedAt: at})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	want := c1
	want.Status, want.StateVersion, want.UpdatedAt = "approved", 2, at
	got, err = s.ExperienceCandidateGet(ctx, c1.CandidateID)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// No longer pending (even with the current version): 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: c1.CandidateID, ExpectedVersion: 2, Status: "rejected", UpdatedAt: at})
	require.NoError(t, err)
	require.Zero(t, n)
	// Approved at insert: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: c3.CandidateID, ExpectedVersion: 1, Status: "rejected", UpdatedAt: at})
	require.NoError(t, err)
	require.Zero(t, n)
	// Stale version on a pending candidate: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: c2.CandidateID, ExpectedVersion: 2, Status: "rejected", UpdatedAt: at})
	require.NoError(t, err)
	require.Zero(t, n)
	// Missing candidate: 0 rows.
	n, err = s.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: uuid.NewString(), ExpectedVersion: 1, Status: "rejected", UpdatedAt: at})
	require.NoError(t, err)
	require.Zero(t, n)
	got, err = s.ExperienceCandidateGet(ctx, c2.CandidateID)
	require.NoError(t, err)
	require.Equal(t, c2, got)

	// Inside a transaction, and the status filter follows the change.
	require.NoError(t, s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		n, err := q.ExperienceCandidateUpdateStatus(ctx, db.ExperienceCandidateUpdateStatusParams{CandidateID: c2.CandidateID, ExpectedVersion: 1, Status: "rejected", UpdatedAt: at})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		return nil
	}))
	require.Equal(t, []db.ExperienceCandidate{c4}, listOf(scope, "pending", 10))
	rejected := listOf(scope, "rejected", 10)
	require.Len(t, rejected, 1)
	require.Equal(t, c2.CandidateID, rejected[0].CandidateID)
	require.EqualValues(t, 2, rejected[0].StateVersion)
}
