package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/client"
	"github.com/powercontext/powercontext/skills"
)

// openSkillsDir holds the package.json and package-lock.json that pin the Agent Skills loader openskills.
const openSkillsDir = "openskills"

// agentsFile is the file `openskills sync` writes in the project.
const agentsFile = "AGENTS.md"

// packagesAgent is the server side of a sync pass for a fixed set of built packages: each is published at revision
// 1, its archive is served as built, and what the sync reports is kept.
type packagesAgent struct {
	pkgs    map[string]skills.Package
	reports map[string]client.SkillReport
}

func (a *packagesAgent) SkillDesired(context.Context) (client.SkillDesiredState, error) {
	st := client.SkillDesiredState{TargetID: "t1"}
	for name, p := range a.pkgs {
		tree, archive := p.TreeDigest, p.ArchiveDigest
		st.Items = append(st.Items, client.DesiredSkill{SkillName: name, DesiredState: "published", Revision: 1,
			TreeDigest: &tree, ArchiveDigest: &archive, State: "pending", Generation: 1})
	}
	return st, nil
}

func (a *packagesAgent) SkillArchive(_ context.Context, name string, revision int64, digest string) ([]byte, error) {
	p, ok := a.pkgs[name]
	if !ok || revision != 1 || digest != p.ArchiveDigest {
		return nil, fmt.Errorf("no archive for %s revision %d", name, revision)
	}
	return p.Archive, nil
}

func (a *packagesAgent) ReportSkill(_ context.Context, name string, r client.SkillReport) (client.SkillPublication, error) {
	a.reports[name] = r
	return client.SkillPublication{SkillName: name}, nil
}

// openSkillsRun runs openskills with args in dir and returns its combined output.
type openSkillsRun func(dir string, args ...string) (string, error)

// openSkillsRunner runs the pinned openskills CLI in a working directory (the agent's project) with HOME set to
// home, so its global folders (~/.claude/skills, ~/.agent/skills) are temporary too, and without colours.
func openSkillsRunner(t *testing.T, home string) openSkillsRun {
	t.Helper()
	bin := pinnedNodeTool(t, openSkillsDir, "openskills", "openskills loading")
	env := []string{"HOME=" + home, "USERPROFILE=" + home, "NO_COLOR=1", "FORCE_COLOR=0", "CI=1"}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "USERPROFILE", "NO_COLOR", "FORCE_COLOR", "CI":
		default:
			env = append(env, kv)
		}
	}
	return func(dir string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = env
		cmd.Stdin = nil // /dev/null: nothing to answer a prompt with; every call that could prompt passes --yes
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// TestPackagesLoadWithOpenSkills (issue 32): the packages the builder generates (the cases of
// TestPackagesValidateWithSkillsRef), written by a real sync pass (cli.SyncSkillsFolder, what
// `powercontext skills sync --dir <project>/.claude/skills` runs) into a project's Claude Code skills folder, pass
// the reference validator skills-ref there and load with the Agent Skills loader openskills (npm, pinned in
// skills/openskills): `openskills list` lists every skill as a project skill, `openskills read` prints each
// <name>/SKILL.md whole (name, description, every lesson), and `openskills sync` writes them into
// <project>/AGENTS.md; `openskills install --yes` copies the synced folders into another project (--universal,
// .agent/skills) and into the global folder (--global, under a temporary HOME), from where they list and read the
// same. A folder without <name>/SKILL.md and a <name>/SKILL.md without front matter are refused.
func TestPackagesLoadWithOpenSkills(t *testing.T) {
	run := openSkillsRunner(t, t.TempDir())
	agent := &packagesAgent{pkgs: map[string]skills.Package{}, reports: map[string]client.SkillReport{}}
	for _, lessons := range lessonCases() {
		name := skills.Name(lessons[0].Title)
		pkg, err := skills.Build(name, lessons)
		require.NoError(t, err)
		agent.pkgs[name] = pkg
	}
	names := make([]string, 0, len(agent.pkgs))
	for name := range agent.pkgs {
		names = append(names, name)
	}
	sort.Strings(names)
	skillMD := func(name string) string {
		for _, f := range agent.pkgs[name].Files {
			if f.Path == skills.SkillFile {
				return string(f.Content)
			}
		}
		t.Fatalf("package %s has no %s", name, skills.SkillFile)
		return ""
	}

	// The sync writes the packages into a project's Claude Code skills folder, as an enrolled agent would.
	project := t.TempDir()
	folder := filepath.Join(project, ".claude", "skills")
	var synced bytes.Buffer
	require.NoError(t, cli.SyncSkillsFolder(context.Background(), agent, folder, &synced))
	for _, name := range names {
		require.Contains(t, synced.String(), name+": installed revision 1\n")
		require.Equal(t, agent.pkgs[name].TreeDigest, agent.reports[name].ObservedTreeDigest, "sync of %s", name)
	}
	require.FileExists(t, filepath.Join(folder, cli.StateFile))
	// Each folder the sync wrote passes the Agent Skills reference validator as it lies on disk.
	ref := skillsRef(t)
	for _, name := range names {
		out, err := exec.Command(ref, "validate", filepath.Join(folder, name)).CombinedOutput()
		require.NoError(t, err, "skills-ref validate of the synced %s: %s", name, out)
	}

	// loaded checks that openskills, run in dir, lists every skill at location and reads each whole from base.
	loaded := func(t *testing.T, run openSkillsRun, dir, base, location string) {
		t.Helper()
		out, err := run(dir, "list")
		require.NoError(t, err, "openskills list: %s", out)
		for _, name := range names {
			require.Regexp(t, `(?m)^\s+`+name+`\s+\(`+location+`\)$`, out, "openskills list")
		}
		want := fmt.Sprintf("Summary: %d project, 0 global (%d total)", len(names), len(names))
		if location == "global" {
			want = fmt.Sprintf("Summary: 0 project, %d global (%d total)", len(names), len(names))
		}
		require.Contains(t, out, want, "openskills list sees only the packages (not the sync's state file): %s", out)
		for _, name := range names {
			out, err := run(dir, "read", name)
			require.NoError(t, err, "openskills read %s: %s", name, out)
			require.Contains(t, out, "Reading: "+name+"\n")
			require.Contains(t, out, "Base directory: "+filepath.Join(base, name)+"\n")
			require.Contains(t, out, skillMD(name), "openskills read %s prints %s whole", name, skills.SkillFile)
			require.Contains(t, out, "name: "+name+"\n")
		}
		// Several at once, as the AGENTS file openskills writes tells agents to.
		out, err = run(dir, "read", strings.Join(names, ","))
		require.NoError(t, err, "openskills read %s: %s", strings.Join(names, ","), out)
		for _, name := range names {
			require.Contains(t, out, skillMD(name))
		}
	}

	t.Run("synced folder", func(t *testing.T) {
		loaded(t, run, project, folder, "project")
		// The lesson text itself comes through (the "one" case, and the YAML-looking text of "several").
		out, err := run(project, "read", "pin-the-base-image")
		require.NoError(t, err, "%s", out)
		require.Contains(t, out, "Pinning the base image fixed the drifting build.\n\nEvidence: journal positions 3, 7.")
		out, err = run(project, "read", "retry-flaky-tests-once")
		require.NoError(t, err, "%s", out)
		require.Contains(t, out, "key: value\n- not a list\n# not a heading\n---\nRé-essayer une fois.")

		// openskills sync -y writes the skills into <project>/AGENTS.md without asking. It reads the description line as it
		// is (no YAML unquoting), so the double-quoted scalar appears with its quotes.
		out, err = run(project, "sync", "--yes")
		require.NoError(t, err, "openskills sync: %s", out)
		agents, err := os.ReadFile(filepath.Join(project, agentsFile))
		require.NoError(t, err)
		for _, name := range names {
			var desc string
			for _, line := range strings.Split(skillMD(name), "\n") {
				if d, ok := strings.CutPrefix(line, "description: "); ok {
					desc = d
					break
				}
			}
			var unquoted string
			require.NoError(t, json.Unmarshal([]byte(desc), &unquoted), "the description is a double-quoted scalar")
			require.Contains(t, string(agents), "<skill>\n<name>"+name+"</name>\n<description>"+desc+
				"</description>\n<location>project</location>\n</skill>")
		}

		// A skill that is not there is an error, so read does look the name up.
		out, err = run(project, "read", "not-a-synced-skill")
		require.Error(t, err, "%s", out)
		require.Contains(t, out, "Skill(s) not found: not-a-synced-skill")
	})

	t.Run("install universal", func(t *testing.T) {
		// The whole synced folder as a source: every skill folder in it is installed, the state file is ignored.
		other := t.TempDir()
		out, err := run(other, "install", folder, "--universal", "--yes")
		require.NoError(t, err, "openskills install: %s", out)
		require.Contains(t, out, fmt.Sprintf("Installation complete: %d skill(s) installed", len(names)))
		installed := filepath.Join(other, ".agent", "skills")
		loaded(t, run, other, installed, "project")
		for _, name := range names {
			// The installed copy is the package's tree (plus openskills' own .openskills.json).
			for _, f := range agent.pkgs[name].Files {
				b, err := os.ReadFile(filepath.Join(installed, name, filepath.FromSlash(f.Path)))
				require.NoError(t, err)
				require.Equal(t, string(f.Content), string(b), "%s/%s", name, f.Path)
			}
			require.FileExists(t, filepath.Join(installed, name, ".openskills.json"))
		}
	})

	t.Run("install global", func(t *testing.T) {
		// Each synced skill folder as a source, into ~/.claude/skills (HOME is a temporary folder).
		home := t.TempDir()
		runHome := openSkillsRunner(t, home)
		elsewhere := t.TempDir()
		for _, name := range names {
			out, err := runHome(elsewhere, "install", filepath.Join(folder, name), "--global", "--yes")
			require.NoError(t, err, "openskills install --global %s: %s", name, out)
			require.Contains(t, out, "Installed: "+name)
		}
		global := filepath.Join(home, ".claude", "skills")
		loaded(t, runHome, elsewhere, global, "global")
	})

	t.Run("refused", func(t *testing.T) {
		pkg := agent.pkgs["pin-the-base-image"]
		// A folder holding the package without its <name>/SKILL.md.
		noSkill := filepath.Join(t.TempDir(), "pin-the-base-image")
		var rest []skills.File
		for _, f := range pkg.Files {
			if f.Path != skills.SkillFile {
				rest = append(rest, f)
			}
		}
		writeTree(t, noSkill, rest)
		other := t.TempDir()
		out, err := run(other, "install", noSkill, "--yes")
		require.Error(t, err, "a folder without %s must be refused: %s", skills.SkillFile, out)
		require.Contains(t, out, "No "+skills.SkillFile+" files found")
		require.NoDirExists(t, filepath.Join(other, ".claude", "skills", "pin-the-base-image"))

		// A <name>/SKILL.md whose front matter was dropped.
		noFront := filepath.Join(t.TempDir(), "pin-the-base-image")
		md := skillMD("pin-the-base-image")
		_, body, ok := strings.Cut(strings.TrimPrefix(md, "---\n"), "---\n")
		require.True(t, ok)
		writeTree(t, noFront, append(rest, skills.File{Path: skills.SkillFile, Content: []byte(body)}))
		out, err = run(other, "install", noFront, "--yes")
		require.Error(t, err, "a %s without front matter must be refused: %s", skills.SkillFile, out)
		require.Contains(t, out, "Invalid "+skills.SkillFile+" (missing YAML frontmatter)")
		require.NoDirExists(t, filepath.Join(other, ".claude", "skills", "pin-the-base-image"))
	})
}
