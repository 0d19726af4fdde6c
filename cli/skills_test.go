package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/powercontext/powercontext/app"
	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/coordinator"
	"github.com/powercontext/powercontext/db"
	"github.com/powercontext/powercontext/db/enginetest"
	"github.com/powercontext/powercontext/experience"
	"github.com/powercontext/powercontext/handlers"
	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
)

// skillFile is the file at the root of every skill folder (docs/skills.md#package-format).
var skillFile = skills.SkillFile

// skillsAPI serves the real handlers over s with a worker that packages approvals.
func skillsAPI(t *testing.T, s db.Store) string {
	t.Helper()
	ledger := coordinator.NewLedger(s)
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "cli-skills-worker", Poll: 20 * time.Millisecond,
		Logger: zerolog.Nop()}, &skills.Handler{Store: s})
	require.NoError(t, err)
	testutil.RunWorker(t, w)
	pk := &skills.Packager{Ledger: ledger, MaxAttempts: 3, Wake: w.Wake}
	d := handlers.Deps{Experience: experience.Reviews{Store: s, OnApproved: pk.Approved}, Skills: &skills.Service{Store: s},
		Ledger: ledger, Store: s, Role: "all", Logger: zerolog.Nop()}
	srv := httptest.NewServer(handlers.New(d))
	t.Cleanup(srv.Close)
	return srv.URL
}

func approveLesson(t *testing.T, s db.Store, c *client.Client, scope, title, lesson string) {
	t.Helper()
	ctx := context.Background()
	now, err := s.DBNow(ctx)
	require.NoError(t, err)
	id := uuid.NewString()
	require.NoError(t, s.ExperienceCandidateInsert(ctx, db.ExperienceCandidate{CandidateID: id, ScopeID: scope, WorkID: uuid.NewString(),
		Title: title, Lesson: lesson, CitedPositions: []byte("[1]"), Status: experience.StatusPending, StateVersion: 1,
		CreatedAt: now, UpdatedAt: now}))
	_, err = c.ApproveCandidate(ctx, id, 1)
	require.NoError(t, err)
}

func waitSkillRevision(t *testing.T, c *client.Client, scope, name string, rev int64) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() bool {
		list, err := c.ListSkills(context.Background(), scope)
		require.NoError(t, err)
		for _, s := range list {
			if s.Name == name && s.CurrentRevision == rev {
				return true
			}
		}
		return false
	}, "skill %s never reached revision %d", name, rev)
}

func publication(t *testing.T, c *client.Client, target, name string) client.SkillPublication {
	t.Helper()
	pubs, err := c.ListSkillPublications(context.Background(), target)
	require.NoError(t, err)
	for _, p := range pubs {
		if p.SkillName == name {
			return p
		}
	}
	t.Fatalf("no publication of %s", name)
	return client.SkillPublication{}
}

// TestSkillsEnrollAndSync drives the agent side against a real server on every engine: approve → package →
// publish to an enrolled target → sync writes a folder with a valid skill file and the publication reads current; a
// new approval makes a new revision, update_available until the next sync; a local edit is a conflict and is not
// overwritten; a folder the sync did not create is never touched; unpublishing removes only the sync's folder; a
// revoked target's sync is refused (403, exit 4).
func TestSkillsEnrollAndSync(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	enginetest.ForEach(t, func(t *testing.T, s db.Store) {
		ctx := context.Background()
		url := skillsAPI(t, s)
		admin := client.New(url)
		const scope, name = "team", "pin-the-base-image"
		approveLesson(t, s, admin, scope, "Pin the base image", "Pinning the base image fixed the drifting build.")
		waitSkillRevision(t, admin, scope, name, 1)

		reg, err := admin.RegisterSkillTarget(ctx, scope, "claude_code", "laptop")
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "skills")
		code, out, errOut := run("skills", "enroll", "--server", url, "--token", reg.EnrollmentToken, "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Contains(t, out, "enrolled target "+reg.Target.TargetID)
		info, err := os.Stat(filepath.Join(dir, cli.StateFile))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the state file holds the credential")
		code, _, _ = run("skills", "enroll", "--server", url, "--token", reg.EnrollmentToken, "--dir", t.TempDir())
		require.Equal(t, app.ExitClientError, code, "an enrollment token is spent once")

		// A folder the sync did not create.
		foreign := filepath.Join(dir, "hand-made")
		require.NoError(t, os.MkdirAll(foreign, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(foreign, skillFile), []byte("mine"), 0o644))

		_, err = admin.PublishSkill(ctx, reg.Target.TargetID, name, 0, false)
		require.NoError(t, err)
		code, out, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Contains(t, out, name+": installed revision 1")
		md, err := os.ReadFile(filepath.Join(dir, name, skillFile))
		require.NoError(t, err)
		front, body, ok := strings.Cut(strings.TrimPrefix(string(md), "---\n"), "\n---\n")
		require.True(t, ok)
		var fm struct{ Name, Description string }
		require.NoError(t, yaml.Unmarshal([]byte(front), &fm))
		require.Equal(t, name, fm.Name)
		require.NotEmpty(t, fm.Description)
		require.Contains(t, body, "Pinning the base image fixed the drifting build.")
		require.Equal(t, "current", publication(t, admin, reg.Target.TargetID, name).State)

		// A new approval: revision 2, update_available until the next sync.
		approveLesson(t, s, admin, scope, "Pin the base image!", "Also pin the package index snapshot.")
		waitSkillRevision(t, admin, scope, name, 2)
		code, _, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		p := publication(t, admin, reg.Target.TargetID, name)
		require.Equal(t, "current", p.State)
		require.EqualValues(t, 2, *p.ObservedRevision)
		md, err = os.ReadFile(filepath.Join(dir, name, skillFile))
		require.NoError(t, err)
		require.Contains(t, string(md), "package index snapshot")
		approveLesson(t, s, admin, scope, "pin the BASE image", "Record the image digest in the lock file.")
		waitSkillRevision(t, admin, scope, name, 3)
		require.Equal(t, "update_available", publication(t, admin, reg.Target.TargetID, name).State)

		// A local edit: conflict, the folder is kept as edited.
		edited := []byte("my own notes")
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, skillFile), edited, 0o644))
		code, out, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Contains(t, out, name+": conflict")
		got, err := os.ReadFile(filepath.Join(dir, name, skillFile))
		require.NoError(t, err)
		require.Equal(t, edited, got, "not overwritten")
		require.Equal(t, "conflict", publication(t, admin, reg.Target.TargetID, name).State)

		// Undo the edit by removing the folder: the next sync installs revision 3 again as its own.
		require.NoError(t, os.RemoveAll(filepath.Join(dir, name)))
		code, out, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Contains(t, out, name+": installed revision 3")

		// Unpublish: only the sync's folder goes; the hand-made one stays.
		_, err = admin.PublishSkill(ctx, reg.Target.TargetID, name, 0, true)
		require.NoError(t, err)
		code, out, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitOK, code, errOut)
		require.Contains(t, out, name+": removed")
		_, err = os.Stat(filepath.Join(dir, name))
		require.ErrorIs(t, err, os.ErrNotExist)
		mine, err := os.ReadFile(filepath.Join(foreign, skillFile))
		require.NoError(t, err)
		require.Equal(t, "mine", string(mine))
		require.Equal(t, "current", publication(t, admin, reg.Target.TargetID, name).State)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.ElementsMatch(t, []string{cli.StateFile, "hand-made"}, names, "no temporary folder is left behind")

		// Revoked: the sync is refused.
		_, err = admin.RevokeSkillTarget(ctx, reg.Target.TargetID)
		require.NoError(t, err)
		code, _, errOut = run("skills", "sync", "--dir", dir)
		require.Equal(t, app.ExitClientError, code, errOut)
		require.Contains(t, errOut, "forbidden: this skill target was revoked")
	})
}

// TestSkillsSyncCAFile: against an https:// server whose certificate no system authority issued, enroll is refused
// without --ca-file and works with it; sync then trusts the bundle enroll was given (remembered in the state file),
// and a --ca-file naming a bundle without the server's authority is refused.
func TestSkillsSyncCAFile(t *testing.T) {
	t.Setenv(cli.EnvAuthToken, "")
	t.Setenv(cli.EnvCAFile, "")
	s := enginetest.Open(t, db.EngineSQLite)
	ctx := context.Background()
	ledger := coordinator.NewLedger(s)
	w, err := coordinator.NewWorker(ledger, coordinator.WorkerConfig{Owner: "cli-skills-tls-worker", Poll: 20 * time.Millisecond,
		Logger: zerolog.Nop()}, &skills.Handler{Store: s})
	require.NoError(t, err)
	testutil.RunWorker(t, w)
	pk := &skills.Packager{Ledger: ledger, MaxAttempts: 3, Wake: w.Wake}
	srv := httptest.NewTLSServer(handlers.New(handlers.Deps{Experience: experience.Reviews{Store: s, OnApproved: pk.Approved},
		Skills: &skills.Service{Store: s}, Ledger: ledger, Store: s, Role: "all", Logger: zerolog.Nop()}))
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	// Another authority (every httptest TLS server shares one certificate, so this one is made here).
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: srv.Certificate().NotBefore,
		NotAfter: srv.Certificate().NotAfter}
	otherDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	otherCA := filepath.Join(t.TempDir(), "other.pem")
	require.NoError(t, os.WriteFile(otherCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: otherDER}), 0o600))

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	admin := client.New(srv.URL, client.WithRootCAs(pool))
	const scope, name = "team", "pin-the-base-image"
	approveLesson(t, s, admin, scope, "Pin the base image", "Pinning the base image fixed the drifting build.")
	waitSkillRevision(t, admin, scope, name, 1)
	reg, err := admin.RegisterSkillTarget(ctx, scope, "codex", "ci runner")
	require.NoError(t, err)
	_, err = admin.PublishSkill(ctx, reg.Target.TargetID, name, 0, false)
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "skills")
	code, _, errOut := run("skills", "enroll", "--server", srv.URL, "--token", reg.EnrollmentToken, "--dir", dir)
	require.NotEqual(t, app.ExitOK, code, "the server's certificate is not trusted without its CA")
	require.Contains(t, errOut, "--ca-file")
	code, out, errOut := run("skills", "enroll", "--server", srv.URL, "--token", reg.EnrollmentToken, "--dir", dir, "--ca-file", caFile)
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, "enrolled target "+reg.Target.TargetID)

	code, _, errOut = run("skills", "sync", "--dir", dir, "--ca-file", otherCA)
	require.NotEqual(t, app.ExitOK, code, "a bundle without the server's authority is refused")
	require.Contains(t, errOut, "--ca-file")
	_, err = os.Stat(filepath.Join(dir, name))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was written")

	code, out, errOut = run("skills", "sync", "--dir", dir)
	require.Equal(t, app.ExitOK, code, errOut)
	require.Contains(t, out, name+": installed revision 1")
	_, err = os.Stat(filepath.Join(dir, name, skillFile))
	require.NoError(t, err)
	require.Equal(t, "current", publication(t, admin, reg.Target.TargetID, name).State)

	code, out, errOut = run("skills", "sync", "--dir", dir, "--ca-file", caFile)
	require.Equal(t, app.ExitOK, code, errOut)
	require.NotContains(t, out, "installed", "already current")
}
