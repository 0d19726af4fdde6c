package app_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
)

// TestHostLocalSkillsTarget: the single_node server's host-local target is registered once, receives what is
// published to it into its folder like "powercontext skills sync", and stops when revoked.
func TestHostLocalSkillsTarget(t *testing.T) {
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		l := coordinator.NewLedger(s)
		w, err := coordinator.NewWorker(l, coordinator.WorkerConfig{Owner: "w-local-skills", Poll: 10 * time.Millisecond,
			Logger: zerolog.Nop()}, &skills.Handler{Store: s})
		require.NoError(t, err)
		testutil.RunWorker(t, w)
		pk := &skills.Packager{Ledger: l, MaxAttempts: 3}
		now, err := s.DBNow(ctx)
		require.NoError(t, err)
		id := uuid.NewString()
		require.NoError(t, s.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: "team", WorkID: uuid.NewString(),
			Title: "Pin the base image", Lesson: "Pinning the base image fixed the drifting build.", CitedPositions: []byte("[1]"),
			Status: experience.StatusPending, StateVersion: 1, CreatedAt: now, UpdatedAt: now}))
		_, err = experience.Reviews{Store: s, OnApproved: pk.Approved}.Review(ctx, id, 1, true)
		require.NoError(t, err)
		const name = "pin-the-base-image"
		testutil.Eventually(t, 30*time.Second, func() bool {
			_, err := s.SkillGet(ctx, db.SkillGetParams{ScopeID: "team", SkillName: name})
			return err == nil
		}, "never packaged")

		dir := filepath.Join(t.TempDir(), "skills")
		require.NoError(t, app.SyncLocalSkills(ctx, s, "team", dir, &bytes.Buffer{}))
		target, err := app.LocalSkillsTarget(ctx, s, "team")
		require.NoError(t, err)
		again, err := app.LocalSkillsTarget(ctx, s, "team")
		require.NoError(t, err)
		require.Equal(t, target.TargetID, again.TargetID, "registered once")
		require.NotEmpty(t, target.CredentialDigest, "enrolled")

		svc := skills.Service{Store: s}
		_, err = svc.Publish(ctx, target.TargetID, name, 0, false)
		require.NoError(t, err)
		var out bytes.Buffer
		require.NoError(t, app.SyncLocalSkills(ctx, s, "team", dir, &out))
		require.Contains(t, out.String(), name+": installed revision 1")
		md, err := os.ReadFile(filepath.Join(dir, name, skills.SkillFile))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(md), "---\nname: "+name+"\n"))
		p, err := s.SkillPublicationGet(ctx, db.SkillPublicationGetParams{TargetID: target.TargetID, SkillName: name})
		require.NoError(t, err)
		require.Equal(t, skills.StateCurrent, p.State)

		_, err = svc.Revoke(ctx, target.TargetID)
		require.NoError(t, err)
		err = app.SyncLocalSkills(ctx, s, "team", dir, &out)
		require.Error(t, err)
		require.False(t, errors.Is(err, context.Canceled))
		_, err = os.Stat(filepath.Join(dir, name, skills.SkillFile))
		require.NoError(t, err, "a revoked target's folder is left as it is")
	})
}
