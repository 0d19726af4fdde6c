package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/skills"
)

// fakeSkillsAgent serves one published skill at one revision of a package and records the reports.
type fakeSkillsAgent struct {
	name     string
	revision int64
	pkg      skills.Package
	reports  []client.SkillReport
}

func (a *fakeSkillsAgent) publish(revision int64, pkg skills.Package) {
	a.revision, a.pkg = revision, pkg
}

func (a *fakeSkillsAgent) SkillDesired(context.Context) (client.SkillDesiredState, error) {
	tree, archive := a.pkg.TreeDigest, a.pkg.ArchiveDigest
	return client.SkillDesiredState{Items: []client.DesiredSkill{{SkillName: a.name, DesiredState: "published", Revision: a.revision,
		TreeDigest: &tree, ArchiveDigest: &archive}}}, nil
}

func (a *fakeSkillsAgent) SkillArchive(_ context.Context, name string, revision int64, _ string) ([]byte, error) {
	if name != a.name || revision != a.revision {
		return nil, &client.APIError{Status: 404}
	}
	return a.pkg.Archive, nil
}

func (a *fakeSkillsAgent) ReportSkill(_ context.Context, _ string, r client.SkillReport) (client.SkillPublication, error) {
	a.reports = append(a.reports, r)
	return client.SkillPublication{}, nil
}

func (a *fakeSkillsAgent) last() client.SkillReport { return a.reports[len(a.reports)-1] }

// buildSkill builds a package of the skill name from one lesson.
func buildSkill(t *testing.T, name, lesson string) skills.Package {
	t.Helper()
	pkg, err := skills.Build(name, []skills.Lesson{{CandidateID: lesson, Title: name, Lesson: lesson, CitedPositions: []int64{1},
		ApprovedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}})
	require.NoError(t, err)
	return pkg
}

// writeFolder replaces dir/name with exactly the files of pkg, as the sync's final rename would leave it.
func writeFolder(t *testing.T, dir, name string, pkg skills.Package) {
	t.Helper()
	files, err := skills.Files(pkg.Archive)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, name)))
	for _, f := range files {
		p := filepath.Join(dir, name, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
		require.NoError(t, os.WriteFile(p, f.Content, 0o600))
	}
}

func syncFolder(t *testing.T, agent cli.SkillsAgent, dir string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, cli.SyncSkillsFolder(context.Background(), agent, dir, &out))
	return out.String()
}

// TestSkillsSyncAdoptsAFolderThatHoldsTheDesiredRevision: a sync that stopped after renaming a folder into place
// and before recording it in its state file left a folder that holds exactly the desired revision. The next sync
// adopts it — reports it installed at that revision and records it as its own, so later revisions replace it —
// instead of reporting conflict forever; the same for a first install. A folder that differs from the desired
// revision stays a conflict and is not touched.
func TestSkillsSyncAdoptsAFolderThatHoldsTheDesiredRevision(t *testing.T) {
	const name = "pin-the-base-image"
	p1 := buildSkill(t, name, "Pinning the base image fixed the drifting build.")
	p2 := buildSkill(t, name, "Pin it by digest, not by tag.")
	p3 := buildSkill(t, name, "Renovate bumps the digest.")

	t.Run("replacing", func(t *testing.T) {
		dir := t.TempDir()
		agent := &fakeSkillsAgent{name: name}
		agent.publish(1, p1)
		require.Contains(t, syncFolder(t, agent, dir), name+": installed revision 1")
		// Revision 2's folder renamed into place, the state file not written: the sync stopped in between.
		writeFolder(t, dir, name, p2)
		agent.publish(2, p2)
		for _, want := range []string{"installed revision 2", "current at revision 2"} {
			out := syncFolder(t, agent, dir)
			require.NotContains(t, out, "conflict")
			require.Contains(t, out, name+": "+want)
			require.Equal(t, client.SkillReport{ObservedRevision: 2, ObservedTreeDigest: p2.TreeDigest}, agent.last())
		}
		// Adopted as the sync's own: the next revision replaces it.
		agent.publish(3, p3)
		require.Contains(t, syncFolder(t, agent, dir), name+": installed revision 3")
		require.Equal(t, client.SkillReport{ObservedRevision: 3, ObservedTreeDigest: p3.TreeDigest}, agent.last())
	})

	t.Run("first install", func(t *testing.T) {
		dir := t.TempDir()
		agent := &fakeSkillsAgent{name: name}
		writeFolder(t, dir, name, p1) // renamed into place before any state was written
		agent.publish(1, p1)
		out := syncFolder(t, agent, dir)
		require.NotContains(t, out, "conflict")
		require.Contains(t, out, name+": installed revision 1")
		require.Equal(t, client.SkillReport{ObservedRevision: 1, ObservedTreeDigest: p1.TreeDigest}, agent.last())
		agent.publish(2, p2)
		require.Contains(t, syncFolder(t, agent, dir), name+": installed revision 2")
	})

	t.Run("different folder", func(t *testing.T) {
		dir := t.TempDir()
		agent := &fakeSkillsAgent{name: name}
		writeFolder(t, dir, name, p1)
		agent.publish(2, p2)
		require.Contains(t, syncFolder(t, agent, dir), name+": conflict")
		require.Equal(t, client.SkillReport{ErrorCode: "conflict"}, agent.last())
		files, err := skills.Files(p1.Archive)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name, skills.SkillFile))
		require.NoError(t, err)
		require.Equal(t, files[0].Content, got, "left untouched")
	})
}

// TestSkillsSyncKnowsAFolderItStoppedInstalling: a sync stopped after renaming revision 2's folder into place and
// before recording it, and revision 3 was published before the next sync. The folder then matches neither the
// recorded revision nor the desired one; the state file's record of the install in progress says it is the sync's
// own, so the next sync replaces it with revision 3 instead of reporting conflict forever. A folder edited after
// such a stop is still a conflict.
func TestSkillsSyncKnowsAFolderItStoppedInstalling(t *testing.T) {
	const name = "pin-the-base-image"
	p1 := buildSkill(t, name, "Pinning the base image fixed the drifting build.")
	p2 := buildSkill(t, name, "Pin it by digest, not by tag.")
	p3 := buildSkill(t, name, "Renovate bumps the digest.")
	errStop := errors.New("the sync stopped")

	for _, edit := range []bool{false, true} {
		dir := t.TempDir()
		agent := &fakeSkillsAgent{name: name}
		agent.publish(1, p1)
		require.Contains(t, syncFolder(t, agent, dir), name+": installed revision 1")

		agent.publish(2, p2)
		restore := cli.SetAfterInstall(func(string) error { return errStop })
		require.ErrorIs(t, cli.SyncSkillsFolder(context.Background(), agent, dir, io.Discard), errStop)
		restore()
		got, err := os.ReadFile(filepath.Join(dir, name, skills.SkillFile))
		require.NoError(t, err)
		require.Contains(t, string(got), "Pin it by digest", "revision 2 was renamed into place")
		if edit {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, skills.SkillFile), []byte("mine now"), 0o600))
		}

		agent.publish(3, p3)
		out := syncFolder(t, agent, dir)
		if edit {
			require.Contains(t, out, name+": conflict: edited locally")
			got, err := os.ReadFile(filepath.Join(dir, name, skills.SkillFile))
			require.NoError(t, err)
			require.Equal(t, "mine now", string(got), "left untouched")
			continue
		}
		require.Contains(t, out, name+": installed revision 3")
		require.Equal(t, client.SkillReport{ObservedRevision: 3, ObservedTreeDigest: p3.TreeDigest}, agent.last())
		require.Contains(t, syncFolder(t, agent, dir), name+": current at revision 3")
	}
}
