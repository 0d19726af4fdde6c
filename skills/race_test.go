package skills_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/skills"
)

// revisionGetHook is a store whose SkillRevisionGet, called on the store itself (outside a transaction), first runs
// hook, once: the point where Publish has read the skill's current revision and not yet written the publication.
type revisionGetHook struct {
	db.Store
	once sync.Once
	hook func()
}

func (r *revisionGetHook) SkillRevisionGet(ctx context.Context, p db.SkillRevisionGetParams) (db.SkillRevision, error) {
	r.once.Do(r.hook)
	return r.Store.SkillRevisionGet(ctx, p)
}

// packageLesson approves a new lesson of the skill title names and packages it (packageCandidate), returning the
// skill's revision afterwards.
func packageLesson(t *testing.T, s db.Store, scope, title, lesson string) int64 {
	t.Helper()
	rev, err := packageLessonErr(context.Background(), s, scope, title, lesson)
	require.NoError(t, err)
	return rev
}

// packageLessonErr is packageLesson for another goroutine than the test's.
func packageLessonErr(ctx context.Context, s db.Store, scope, title, lesson string) (int64, error) {
	now, err := s.DBNow(ctx)
	if err != nil {
		return 0, err
	}
	c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(), Title: title, Lesson: lesson,
		CitedPositions: []byte("[1]"), Status: experience.StatusApproved, StateVersion: 2, CreatedAt: now, UpdatedAt: now}
	if err := s.ExperienceCandidateInsert(ctx, c); err != nil {
		return 0, err
	}
	rev, _, err := packageCandidateErr(ctx, s, scope, c.CandidateID, now)
	return rev, err
}

// TestPublishCurrentRacingAPackage: a new revision committed between Publish reading the skill's current revision
// and writing the publication must not leave the publication behind at the old revision, where it would look like a
// rollback pin and never follow again. Publishing without a revision follows the current one: after the race and
// one more revision, the publication desires the skill's current revision — for a first publication (Publish) and
// for one that existed, unpublished, at the generation the caller saw (PublishAt).
func TestPublishCurrentRacingAPackage(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		const scope, title = "team/race", "Pin the base image"
		name := skills.Name(title)
		require.EqualValues(t, 1, packageLesson(t, s, scope, title, "Pinning the base image fixed the drifting build."))
		plain := skills.Service{Store: s}
		first, _, err := plain.RegisterTarget(ctx, scope, "claude_code", "first publication")
		require.NoError(t, err)
		again, _, err := plain.RegisterTarget(ctx, scope, "claude_code", "published again")
		require.NoError(t, err)
		_, err = plain.Publish(ctx, again.TargetID, name, 0, false)
		require.NoError(t, err)
		unpublished, err := plain.Publish(ctx, again.TargetID, name, 0, true)
		require.NoError(t, err)

		racing := func(lesson string) skills.Service {
			return skills.Service{Store: &revisionGetHook{Store: s, hook: func() {
				packageLesson(t, s, scope, title, lesson)
			}}}
		}
		_, err = racing("Pin it by digest, not by tag.").Publish(ctx, first.TargetID, name, 0, false)
		require.NoError(t, err)
		_, err = racing("Record the digest in the lock file.").PublishAt(ctx, again.TargetID, name, 0, false, unpublished.Generation)
		require.NoError(t, err)

		current := packageLesson(t, s, scope, title, "Renovate bumps the digest.")
		require.EqualValues(t, 4, current, "each hook packaged a revision, then one more")
		for _, tg := range []db.SkillTarget{first, again} {
			p, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: name})
			require.NoError(t, err)
			require.Equal(t, skills.DesiredPublished, p.DesiredState, tg.DisplayName)
			require.Equal(t, current, p.DesiredRevision, "%s: published without a revision, it follows the current one", tg.DisplayName)
		}
	})
}

// TestPublishCurrentRacesPackaging races operators publishing (and unpublishing) a skill without a revision on
// several targets against new revisions committed on a pool of their own, on every engine. However they
// interleave, every publication ends at the skill's current revision, and no packaging commit fails because of a
// publish (a publish never writes between a packaging commit's move of the skill and its move of the publications).
func TestPublishCurrentRacesPackaging(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		packaging := enginetest.OpenStore(t, enginetest.URLOf(t, s))
		const scope, title = "team/raced", "Cache the module downloads"
		const targets, revisions, rounds = 4, 6, 7 // rounds is odd: every target's last write publishes
		name := skills.Name(title)
		require.EqualValues(t, 1, packageLesson(t, s, scope, title, "A warm module cache halves the build."))
		svc := skills.Service{Store: s}
		var tgs []db.SkillTarget
		for i := range targets {
			tg, _, err := svc.RegisterTarget(ctx, scope, "claude_code", fmt.Sprintf("target %d", i))
			require.NoError(t, err)
			tgs = append(tgs, tg)
		}
		start := make(chan struct{})
		errs := make(chan error, targets+1)
		go func() {
			<-start
			for i := range revisions {
				if _, err := packageLessonErr(ctx, packaging, scope, title, fmt.Sprintf("Lesson %d of the race.", i)); err != nil {
					errs <- fmt.Errorf("packaging: %w", err)
					return
				}
			}
			errs <- nil
		}()
		for _, tg := range tgs {
			go func() {
				<-start
				for r := range rounds {
					for {
						_, err := svc.Publish(ctx, tg.TargetID, name, 0, r%2 == 1)
						if errors.Is(err, skills.ErrConflict) {
							continue // the documented answer to a row that kept moving: ask again
						}
						if err != nil {
							errs <- fmt.Errorf("%s: %w", tg.DisplayName, err)
							return
						}
						break
					}
				}
				errs <- nil
			}()
		}
		close(start)
		for range targets + 1 {
			require.NoError(t, <-errs)
		}
		sk, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: name})
		require.NoError(t, err)
		require.EqualValues(t, 1+revisions, sk.CurrentRevision)
		for _, tg := range tgs {
			p, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: name})
			require.NoError(t, err)
			require.Equal(t, skills.DesiredPublished, p.DesiredState, tg.DisplayName)
			require.Equal(t, sk.CurrentRevision, p.DesiredRevision, "%s follows the current revision", tg.DisplayName)
		}
	})
}
