package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/skills"
)

// TestPackageReadsEveryApprovedLesson: a package is built from every approved lesson of its skill, however many
// approved candidates the scope holds. Here two lessons of one skill were created first, then more approved
// candidates of another skill than one page of the read holds; the second lesson is approved last. Its packaging
// takes in both lessons (the older one is not dropped, and the approved trigger is never missing, which would fail
// the item as an invalid payload), and nothing that is not approved: a rejected lesson of the same skill stays out.
func TestPackageReadsEveryApprovedLesson(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		const scope, title = "team/many", "Pin the base image"
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		base := now.Add(-time.Hour)
		insert := func(title, lesson, status string, created time.Time) db.ExperienceCandidate {
			c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(), Title: title, Lesson: lesson,
				CitedPositions: []byte("[1]"), Status: status, StateVersion: 2, CreatedAt: created, UpdatedAt: now}
			require.NoError(t, s.ExperienceCandidateInsert(ctx, c))
			return c
		}
		older := insert(title, "Pinning the base image fixed the drifting build.", experience.StatusApproved, base)
		late := insert(title, "Pin it by digest, not by tag.", experience.StatusApproved, base.Add(time.Microsecond))
		insert(title, "Never pin anything.", experience.StatusRejected, base.Add(2*time.Microsecond))
		const others = 600 // more than one page of the read, all newer than the skill's lessons
		for i := range others {
			insert("Cache the module downloads", fmt.Sprintf("Lesson %d.", i), experience.StatusApproved, base.Add(time.Second+time.Duration(i)*time.Microsecond))
		}

		rev1, lessons := packageCandidate(t, s, scope, late.CandidateID, now)
		require.EqualValues(t, 1, rev1)
		require.Equal(t, 2, lessons)

		rev, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: skills.Name(title), Revision: 1})
		require.NoError(t, err)
		var ids []string
		require.NoError(t, json.Unmarshal(rev.SourceCandidateIDs, &ids))
		require.ElementsMatch(t, []string{older.CandidateID, late.CandidateID}, ids)
		require.True(t, slices.IsSorted(ids), "a revision records its candidates in id order")
		files, err := skills.Files(rev.Archive)
		require.NoError(t, err)
		md := string(files[0].Content)
		require.Contains(t, md, "Pinning the base image fixed the drifting build.")
		require.Contains(t, md, "Pin it by digest, not by tag.")
		require.NotContains(t, md, "Never pin anything.")

		// A lesson created after all the others: revision 2 still holds the two older lessons.
		newest := insert(title, "Renovate bumps the digest.", experience.StatusApproved, now)
		rev2, lessons := packageCandidate(t, s, scope, newest.CandidateID, now)
		require.EqualValues(t, 2, rev2)
		require.Equal(t, 3, lessons)
		rev, err = s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: skills.Name(title), Revision: 2})
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(rev.SourceCandidateIDs, &ids))
		require.ElementsMatch(t, []string{older.CandidateID, late.CandidateID, newest.CandidateID}, ids, "no older lesson is dropped")
	})
}

// packageCandidate runs the packaging of an approved candidate (its handler, then its commit in a transaction of
// its own, as the ledger's final transaction would) and returns the skill's current revision and the number of
// lessons the package holds.
func packageCandidate(t *testing.T, s db.Store, scope, candidateID string, now time.Time) (int64, int) {
	t.Helper()
	rev, lessons, err := packageCandidateErr(context.Background(), s, scope, candidateID, now)
	require.NoError(t, err, "an approved candidate is packaged")
	return rev, lessons
}

// packageCandidateErr is packageCandidate for another goroutine than the test's.
func packageCandidateErr(ctx context.Context, s db.Store, scope, candidateID string, now time.Time) (int64, int, error) {
	payload, err := json.Marshal(skills.Payload{CandidateID: candidateID})
	if err != nil {
		return 0, 0, err
	}
	item := db.WorkItem{WorkID: uuid.NewString(), Kind: skills.Kind, PayloadVersion: skills.PayloadVersion, ScopeID: scope, Payload: payload}
	p, err := (&skills.Handler{Store: s}).Prepare(ctx, item)
	if err != nil {
		return 0, 0, err
	}
	if p.Result.Code != "packaged" {
		return 0, 0, fmt.Errorf("packaging ended %s", p.Result.Code)
	}
	var rev int64
	err = s.InTx(ctx, func(ctx context.Context, q db.Queries) error {
		if err := p.Commit(ctx, q, item, now); err != nil {
			return err
		}
		c, err := q.ExperienceCandidateGet(ctx, candidateID)
		if err != nil {
			return err
		}
		sk, err := q.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: skills.Name(c.Title)})
		rev = sk.CurrentRevision
		return err
	})
	return rev, p.Result.Payload.(skills.Result).Lessons, err
}
