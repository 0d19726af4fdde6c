package skills_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
)

// approve inserts a pending candidate of scope and approves it through experience.Reviews, whose OnApproved
// enqueues its packaging.
func approve(t *testing.T, s db.Store, r experience.Reviews, scope, title, lesson string) db.ExperienceCandidate {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	c := db.ExperienceCandidate{CandidateID: uuid.NewString(), ScopeID: scope, WorkID: uuid.NewString(), Title: title, Lesson: lesson,
		CitedPositions: []byte("[3,7]"), Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.ExperienceCandidateInsert(ctx, c))
	c, err = r.Review(ctx, c.CandidateID, 1, true)
	require.NoError(t, err)
	return c
}

func waitRevision(t *testing.T, s db.Store, scope, name string, rev int64) db.Skill {
	t.Helper()
	var sk db.Skill
	testutil.Eventually(t, 30*time.Second, func() bool {
		var err error
		sk, err = s.SkillGet(context.Background(), db.SkillGetParams{ScopeID: scope, SkillName: name})
		if errors.Is(err, db.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return sk.CurrentRevision == rev
	}, "skill %s never reached revision %d", name, rev)
	return sk
}

// untar reads a package archive back into files.
func untar(t *testing.T, archive []byte) []skills.File {
	t.Helper()
	var files []skills.File
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files = append(files, skills.File{Path: h.Name, Content: b})
	}
}

// TestApprovalPackagesAndPublishes: an approval becomes a skill revision (ledger work in the scope's skills lane),
// published to an enrolled target; the agent's reports move the publication through its states; a new approval
// makes a new revision that the publication follows (update_available until reported); a rollback pins an older
// revision; a revoked target's credential is refused.
func TestApprovalPackagesAndPublishes(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		pk := &skills.Packager{Ledger: l, MaxAttempts: 3}
		reviews := experience.Reviews{Store: s, OnApproved: pk.Approved}
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-skills", Concurrency: 1, Poll: 10 * time.Millisecond,
			Logger: zerolog.Nop()}, &skills.Handler{Store: s})
		require.NoError(t, err)
		testutil.RunWorker(t, w)
		svc := skills.Service{Store: s}
		const scope = "team/skills"

		c1 := approve(t, s, reviews, scope, "Retry flaky tests once!", "Re-run a failing integration test once before debugging it.")
		const name = "retry-flaky-tests-once"
		waitRevision(t, s, scope, name, 1)
		rev1, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: name, Revision: 1})
		require.NoError(t, err)
		sum := sha256.Sum256(rev1.Archive)
		require.Equal(t, hex.EncodeToString(sum[:]), rev1.ArchiveDigest)
		files := untar(t, rev1.Archive)
		require.Equal(t, rev1.TreeDigest, skills.TreeDigest(files))
		require.EqualValues(t, len(files), rev1.FileCount)
		require.Equal(t, skills.SkillFile, files[0].Path)
		md := string(files[0].Content)
		require.True(t, strings.HasPrefix(md, "---\n"))
		front, body, ok := strings.Cut(strings.TrimPrefix(md, "---\n"), "\n---\n")
		require.True(t, ok)
		var fm struct{ Name, Description string }
		require.NoError(t, yaml.Unmarshal([]byte(front), &fm))
		require.Equal(t, name, fm.Name)
		require.NotEmpty(t, fm.Description)
		require.LessOrEqual(t, len([]rune(fm.Description)), skills.MaxDescriptionLen)
		require.Contains(t, body, "Re-run a failing integration test once")
		require.Contains(t, body, "journal positions 3, 7")
		require.JSONEq(t, `["`+c1.CandidateID+`"]`, string(rev1.SourceCandidateIDs))

		// A target: registered, enrolled once, then known by its credential.
		tg, enrollToken, err := svc.RegisterTarget(ctx, scope, "claude_code", "Ana's laptop")
		require.NoError(t, err)
		require.NotContains(t, tg.EnrollmentDigest, enrollToken)
		require.Equal(t, skills.Digest(enrollToken), tg.EnrollmentDigest, "only the digest is stored")
		_, _, err = svc.Enroll(ctx, "pcse_wrong")
		require.ErrorIs(t, err, skills.ErrUnauthenticated)
		enrolled, cred, err := svc.Enroll(ctx, enrollToken)
		require.NoError(t, err)
		require.Equal(t, skills.Digest(cred), enrolled.CredentialDigest)
		_, _, err = svc.Enroll(ctx, enrollToken)
		require.ErrorIs(t, err, skills.ErrUnauthenticated, "an enrollment token is spent once")
		agent, err := svc.Authenticate(ctx, cred)
		require.NoError(t, err)

		pub, err := svc.Publish(ctx, tg.TargetID, name, 0, false)
		require.NoError(t, err)
		require.Equal(t, skills.StatePending, pub.State)
		desired, err := svc.Desired(ctx, agent)
		require.NoError(t, err)
		require.Equal(t, []skills.DesiredSkill{{Name: name, DesiredState: skills.DesiredPublished, Revision: 1, TreeDigest: rev1.TreeDigest,
			ArchiveDigest: rev1.ArchiveDigest, State: skills.StatePending, Generation: 1}}, desired)
		got, err := svc.Archive(ctx, agent, name, 1)
		require.NoError(t, err)
		require.Equal(t, rev1.Archive, got.Archive)
		_, err = svc.Archive(ctx, agent, name, 2)
		require.ErrorIs(t, err, db.ErrNotFound, "only the desired revision")

		pub, err = svc.Report(ctx, agent, name, skills.Report{ObservedRevision: 1, ObservedTreeDigest: rev1.TreeDigest})
		require.NoError(t, err)
		require.Equal(t, skills.StateCurrent, pub.State)
		pub, err = svc.Report(ctx, agent, name, skills.Report{ObservedRevision: 1, ObservedTreeDigest: strings.Repeat("0", 64)})
		require.NoError(t, err)
		require.Equal(t, skills.StateDrifted, pub.State)
		_, err = svc.Report(ctx, agent, name, skills.Report{ObservedRevision: 1, ObservedTreeDigest: "nothex"})
		var verr interface{ Error() string }
		require.ErrorAs(t, err, &verr)

		// A new approval of the same skill: revision 2, which the publication follows.
		approve(t, s, reviews, scope, "Retry flaky tests once", "Quarantine a test that fails twice in a row.")
		waitRevision(t, s, scope, name, 2)
		pub, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: name})
		require.NoError(t, err)
		require.EqualValues(t, 2, pub.DesiredRevision)
		require.Equal(t, skills.StateUpdateAvailable, pub.State, "the agent holds revision 1, revision 2 is desired")
		pub, err = svc.Report(ctx, agent, name, skills.Report{ObservedRevision: 1, ObservedTreeDigest: rev1.TreeDigest})
		require.NoError(t, err)
		require.Equal(t, skills.StateUpdateAvailable, pub.State)
		rev2, err := s.SkillRevisionGet(ctx, db.SkillRevisionGetParams{ScopeID: scope, SkillName: name, Revision: 2})
		require.NoError(t, err)
		require.Contains(t, string(untar(t, rev2.Archive)[0].Content), "Quarantine a test")
		pub, err = svc.Report(ctx, agent, name, skills.Report{ObservedRevision: 2, ObservedTreeDigest: rev2.TreeDigest})
		require.NoError(t, err)
		require.Equal(t, skills.StateCurrent, pub.State)
		pub, err = svc.Report(ctx, agent, name, skills.Report{ErrorCode: skills.ReportConflict})
		require.NoError(t, err)
		require.Equal(t, skills.StateConflict, pub.State)

		// Rollback: publishing revision 1 pins it; a later revision does not move it.
		pub, err = svc.Publish(ctx, tg.TargetID, name, 1, false)
		require.NoError(t, err)
		require.EqualValues(t, 1, pub.DesiredRevision)
		approve(t, s, reviews, scope, "retry flaky tests ONCE", "Log the seed of a randomised test.")
		waitRevision(t, s, scope, name, 3)
		pub, err = s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: name})
		require.NoError(t, err)
		require.EqualValues(t, 1, pub.DesiredRevision, "a pinned revision stays")
		revs, err := svc.Revisions(ctx, scope, name, 10)
		require.NoError(t, err)
		require.Len(t, revs, 3, "old revisions are kept")

		// Unpublish: the agent removes the folder and reports nothing observed.
		pub, err = svc.Publish(ctx, tg.TargetID, name, 0, true)
		require.NoError(t, err)
		require.Equal(t, skills.DesiredUnpublished, pub.DesiredState)
		pub, err = svc.Report(ctx, agent, name, skills.Report{})
		require.NoError(t, err)
		require.Equal(t, skills.StateCurrent, pub.State)

		// Revocation: the credential is refused from now on.
		_, err = svc.Revoke(ctx, tg.TargetID)
		require.NoError(t, err)
		_, err = svc.Authenticate(ctx, cred)
		require.ErrorIs(t, err, skills.ErrRevoked)
		_, err = svc.Authenticate(ctx, "pcsc_unknown")
		require.ErrorIs(t, err, skills.ErrUnauthenticated)
		_, err = svc.Publish(ctx, tg.TargetID, name, 0, false)
		require.ErrorIs(t, err, skills.ErrRevoked)
	})
}

// TestBuildIsDeterministic: the same lessons give the same archive and digests, in any order.
func TestBuildIsDeterministic(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a := skills.Lesson{CandidateID: "a", Title: "T", Lesson: "one", CitedPositions: []int64{1}, ApprovedAt: at}
	b := skills.Lesson{CandidateID: "b", Title: "T", Lesson: "two", CitedPositions: []int64{2}, ApprovedAt: at.Add(time.Second)}
	p1, err := skills.Build("t", []skills.Lesson{a, b})
	require.NoError(t, err)
	p2, err := skills.Build("t", []skills.Lesson{b, a})
	require.NoError(t, err)
	require.Equal(t, p1.Archive, p2.Archive)
	require.Equal(t, p1.TreeDigest, p2.TreeDigest)
	require.Equal(t, p1.ArchiveDigest, p2.ArchiveDigest)
	_, err = skills.Build("Bad Name", []skills.Lesson{a})
	require.Error(t, err)
	_, err = skills.FromFiles("t", make([]skills.File, skills.MaxFiles+1))
	require.ErrorIs(t, err, skills.ErrTooLarge)
}

// TestName: titles become valid skill names.
func TestName(t *testing.T) {
	for title, want := range map[string]string{
		"Retry flaky tests once!":         "retry-flaky-tests-once",
		"  --  ":                          "lesson",
		"Ünïcode & Co.":                   "n-code-co",
		strings.Repeat("abcdefghij ", 10): "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij",
	} {
		got := skills.Name(title)
		require.Equal(t, want, got, title)
		require.True(t, skills.ValidName(got), got)
	}
}

// TestFilesReadsAPackageBack: Files returns the tree a package was built from; anything that is not such an
// archive is ErrBadArchive.
func TestFilesReadsAPackageBack(t *testing.T) {
	pkg, err := skills.Build("read-back", []skills.Lesson{{CandidateID: "c1", Title: "Read back", Lesson: "Files reads the archive.",
		CitedPositions: []int64{1}}})
	require.NoError(t, err)
	files, err := skills.Files(pkg.Archive)
	require.NoError(t, err)
	require.Equal(t, pkg.Files, files)
	require.Equal(t, pkg.TreeDigest, skills.TreeDigest(files))
	_, err = skills.Files([]byte("not a tar archive, just some bytes that are long enough to be a header block"))
	require.ErrorIs(t, err, skills.ErrBadArchive)
	_, err = skills.Files(pkg.Archive[:600])
	require.ErrorIs(t, err, skills.ErrBadArchive, "a truncated archive")
}

// seedRevision stores revision rev of skill name in scope directly (the package built from one lesson) and makes
// it the skill's current revision.
func seedRevision(t *testing.T, s db.Store, scope, name string, rev int64, lesson string) db.SkillRevision {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	pkg, err := skills.Build(name, []skills.Lesson{{CandidateID: uuid.NewString(), Title: name, Lesson: lesson, CitedPositions: []int64{1}, ApprovedAt: now}})
	require.NoError(t, err)
	r := db.SkillRevision{ScopeID: scope, SkillName: name, Revision: rev, TreeDigest: pkg.TreeDigest, ArchiveDigest: pkg.ArchiveDigest,
		FileCount: int32(len(pkg.Files)), ByteSize: pkg.ByteSize, Archive: pkg.Archive, SourceCandidateIDs: []byte("[]"), CreatedAt: now}
	require.NoError(t, s.SkillRevisionInsert(ctx, r))
	if rev == 1 {
		require.NoError(t, s.SkillInsert(ctx, db.Skill{ScopeID: scope, SkillName: name, CurrentRevision: 1, CreatedAt: now, UpdatedAt: now}))
	} else {
		n, err := s.SkillUpdateRevision(ctx, db.SkillUpdateRevisionParams{CurrentRevision: rev, UpdatedAt: now, ScopeID: scope, SkillName: name,
			ExpectedRevision: rev - 1})
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	}
	return r
}

// TestPublishAtIsGuarded: PublishAt writes only at the generation its caller saw (0: no publication yet) and
// otherwise changes nothing and returns ErrStale with the publication as it is; it refuses a revoked target like
// Publish.
func TestPublishAtIsGuarded(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		svc := skills.Service{Store: s}
		seedRevision(t, s, "g", "guarded", 1, "one")
		seedRevision(t, s, "g", "guarded", 2, "two")
		tg, _, err := svc.RegisterTarget(ctx, "g", "claude_code", "laptop")
		require.NoError(t, err)

		_, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 0, false, 3)
		require.ErrorIs(t, err, skills.ErrStale, "a generation for a publication that does not exist")
		p, err := svc.PublishAt(ctx, tg.TargetID, "guarded", 0, false, 0)
		require.NoError(t, err)
		require.EqualValues(t, 1, p.Generation)
		require.EqualValues(t, 2, p.DesiredRevision)

		got, err := svc.PublishAt(ctx, tg.TargetID, "guarded", 0, true, 0)
		require.ErrorIs(t, err, skills.ErrStale, "the page saw no publication; one exists now")
		require.Equal(t, skills.DesiredPublished, got.DesiredState)
		require.EqualValues(t, 1, got.Generation)

		p, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 1, false, 1) // rollback at the generation seen
		require.NoError(t, err)
		require.EqualValues(t, 2, p.Generation)
		require.EqualValues(t, 1, p.DesiredRevision)

		got, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 0, true, 1) // the stale generation
		require.ErrorIs(t, err, skills.ErrStale)
		require.EqualValues(t, 2, got.Generation)
		now, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: "guarded"})
		require.NoError(t, err)
		require.Equal(t, skills.DesiredPublished, now.DesiredState, "nothing was written")
		require.EqualValues(t, 1, now.DesiredRevision)

		p, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 0, true, 2)
		require.NoError(t, err)
		require.Equal(t, skills.DesiredUnpublished, p.DesiredState)
		require.EqualValues(t, 3, p.Generation)

		_, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 0, false, -1)
		require.Error(t, err)
		_, err = svc.Revoke(ctx, tg.TargetID)
		require.NoError(t, err)
		_, err = svc.PublishAt(ctx, tg.TargetID, "guarded", 0, false, 3)
		require.ErrorIs(t, err, skills.ErrRevoked)
	})
}

// TestPublishAtRace: operators acting at once on pages that showed the same generation — exactly one write wins,
// the others get ErrStale and change nothing; the generation moved on by one. Raced on every engine.
func TestPublishAtRace(t *testing.T) {
	t.Parallel()
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		svc := skills.Service{Store: s}
		seedRevision(t, s, "race", "raced", 1, "one")
		seedRevision(t, s, "race", "raced", 2, "two")
		tg, _, err := svc.RegisterTarget(ctx, "race", "claude_code", "laptop")
		require.NoError(t, err)
		p, err := svc.PublishAt(ctx, tg.TargetID, "raced", 0, false, 0)
		require.NoError(t, err)
		const n = 6
		errs := make(chan error, n)
		start := make(chan struct{})
		for i := range n {
			go func() {
				<-start
				// Half unpublish, half roll back: whichever wins, the losers must write nothing.
				_, err := svc.PublishAt(ctx, tg.TargetID, "raced", int64(i%2), i%2 == 0, p.Generation)
				errs <- err
			}()
		}
		close(start)
		won := 0
		for range n {
			err := <-errs
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, skills.ErrStale)
		}
		require.Equal(t, 1, won)
		got, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: tg.TargetID, SkillName: "raced"})
		require.NoError(t, err)
		require.Equal(t, p.Generation+1, got.Generation)
	})
}

// TestDiscovererPackagesFailedEnqueues: approvals whose packaging enqueue failed (the packager's ledger is on a
// closed store) leave no work and no skill; one scheduler tick of the skills-package discoverer enqueues one item per
// skill under the approval's logical key — joining, not duplicating, the item of an approval whose enqueue worked —
// and a second scan joins them all again; the worker then builds each package exactly once (revision 1, every
// approved lesson of the skill), after which the discoverer finds nothing.
func TestDiscovererPackagesFailedEnqueues(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		closed := enginetest.OpenStore(t, enginetest.URLOf(t, s))
		require.NoError(t, closed.Close())
		var failed []error
		broken := experience.Reviews{Store: s, OnApproved: (&skills.Packager{Ledger: coordinator.NewLedger(closed), MaxAttempts: 3,
			Failed: func(err error) { failed = append(failed, err) }}).Approved}
		working := experience.Reviews{Store: s, OnApproved: (&skills.Packager{Ledger: l, MaxAttempts: 3,
			Failed: func(err error) { t.Errorf("enqueue failed: %v", err) }}).Approved}
		const scope = "team/discover"

		c1 := approve(t, s, broken, scope, "Pin the base image", "Pinning the base image fixed the drifting build.")
		c2 := approve(t, s, broken, scope, "Retry flaky tests once", "Re-run a failing integration test once.")
		c3 := approve(t, s, broken, scope, "Pin the base image", "Pin it by digest, not by tag.")
		c4 := approve(t, s, working, scope, "Cache the module downloads", "A warm module cache halves the build.")
		require.Len(t, failed, 3, "each broken approval reported its failed enqueue")
		_, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: scope, SkillName: "pin-the-base-image"})
		require.ErrorIs(t, err, db.ErrNotFound)

		d := skills.Discoverer{Store: s, Every: time.Hour, MaxAttempts: 3}
		var created, joined []string
		sched, err := coordinator.NewScheduler(l, coordinator.SchedulerConfig{Owner: "sched-skills", Logger: zerolog.Nop(),
			Hooks: coordinator.SchedulerHooks{Enqueued: func(name string, res coordinator.EnqueueResult) {
				require.Equal(t, "skills-package", name)
				require.Equal(t, skills.Kind, res.Item.Kind)
				if res.Created {
					created = append(created, res.Item.WorkID)
				} else {
					joined = append(joined, res.Item.WorkID)
				}
			}}}, d)
		require.NoError(t, err)
		require.NoError(t, sched.Tick(ctx))
		require.Len(t, created, 2, "one item per skill whose approvals were never enqueued")
		require.Len(t, joined, 1, "the working approval's item is joined")

		// A second scan before the worker ran: every request joins an existing item.
		reqs, next, err := d.Page(ctx, "", 100)
		require.NoError(t, err)
		require.Empty(t, next)
		require.Len(t, reqs, 3)
		for _, r := range reqs {
			res, err := l.Enqueue(ctx, r)
			require.NoError(t, err)
			require.False(t, res.Created, "a rescan never duplicates an item")
			require.Contains(t, append(created, joined...), res.Item.WorkID)
		}

		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-discover", Concurrency: 1, Poll: 10 * time.Millisecond,
			Logger: zerolog.Nop()}, &skills.Handler{Store: s})
		require.NoError(t, err)
		testutil.RunWorker(t, w)
		for name, want := range map[string][]string{
			"pin-the-base-image":         {c1.CandidateID, c3.CandidateID},
			"retry-flaky-tests-once":     {c2.CandidateID},
			"cache-the-module-downloads": {c4.CandidateID},
		} {
			waitRevision(t, s, scope, name, 1)
			revs, err := s.SkillRevisionList(ctx, db.SkillRevisionListParams{ScopeID: scope, SkillName: name, Limit: 10})
			require.NoError(t, err)
			require.Len(t, revs, 1, "%s was built exactly once", name)
			var ids []string
			require.NoError(t, json.Unmarshal(revs[0].SourceCandidateIDs, &ids))
			require.ElementsMatch(t, want, ids, name)
		}
		reqs, _, err = d.Page(ctx, "", 100)
		require.NoError(t, err)
		require.Empty(t, reqs, "packaged candidates are still found")
	})
}

// skills.States is exactly what pc_skill_publications accepts: every state is stored on every engine, and the
// gauge's label set (the same slice) names no state the table refuses.
func TestStatesAreTheTableStates(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		target := uuid.NewString()
		for _, st := range skills.States {
			require.NoError(t, s.SkillPublicationInsert(ctx, db.SkillPublication{TargetID: target, SkillName: st, ScopeID: "states",
				DesiredState: skills.DesiredPublished, DesiredRevision: 1, State: st, Generation: 1, CreatedAt: now, UpdatedAt: now}), st)
		}
		require.Error(t, s.SkillPublicationInsert(ctx, db.SkillPublication{TargetID: target, SkillName: "other", ScopeID: "states",
			DesiredState: skills.DesiredPublished, DesiredRevision: 1, State: "other", Generation: 1, CreatedAt: now, UpdatedAt: now}))
		counts, err := s.SkillPublicationCountByState(ctx)
		require.NoError(t, err)
		require.Len(t, counts, len(skills.States))
	})
}
