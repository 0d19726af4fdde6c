package skills_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/internal/testutil"
	"github.com/powercontext/powercontext/skills"
)

// skillsRefDir holds the package.json and package-lock.json that pin the Agent Skills reference validator.
const skillsRefDir = "skillsref"

// skillsRef installs the pinned skills-ref and returns its command. It runs only with PC_TEST_REQUIRE_CLIENTS=1
// (CI, `make clients-test`), where node and npm are required; otherwise the test is skipped.
func skillsRef(t *testing.T) string {
	t.Helper()
	return pinnedNodeTool(t, skillsRefDir, "skills-ref", "skills-ref validation")
}

// pinnedNodeTool installs the npm package pinned in dir (npm ci, when node_modules is missing or older than the lock
// file) and returns the absolute path of its command bin. It runs only with PC_TEST_REQUIRE_CLIENTS=1 (CI,
// `make clients-test`), where node and npm are required; otherwise the test is skipped, its message naming what.
func pinnedNodeTool(t *testing.T, dir, bin, what string) string {
	t.Helper()
	if os.Getenv("PC_TEST_REQUIRE_CLIENTS") == "" {
		t.Skipf("%s: run it with PC_TEST_REQUIRE_CLIENTS=1 (node and npm)", what)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (PC_TEST_REQUIRE_CLIENTS is set)", tool)
		}
	}
	return testutil.NpmBin(t, dir, bin)
}

// writeTree writes a package's files (paths relative to the skill's folder) under dir, as the agent's sync does.
func writeTree(t *testing.T, dir string, files []skills.File) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Content, 0o644))
	}
}

// lessonCases are the packages the loader tests build: one lesson; several lessons with quotes, colons, a
// YAML-looking text and non-ASCII text; and a description cut at its bound.
func lessonCases() map[string][]skills.Lesson {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	long := strings.Repeat("Keep the build hermetic: pin every input, and say \"why\" in the commit. ", 40)
	return map[string][]skills.Lesson{
		"one": {{CandidateID: "c1", Title: "Pin the base image", Lesson: "Pinning the base image fixed the drifting build.",
			CitedPositions: []int64{3, 7}, ApprovedAt: at}},
		"several": {
			{CandidateID: "c1", Title: "Retry: flaky tests \"once\"!", Lesson: "key: value\n- not a list\n# not a heading\n---\nRé-essayer une fois.",
				CitedPositions: []int64{1}, ApprovedAt: at},
			{CandidateID: "c2", Title: "Retry: flaky tests \"once\"!", Lesson: "Then open an issue with the seed: `go test -run X -count=1`.",
				CitedPositions: []int64{2, 4}, ApprovedAt: at.Add(time.Minute)},
		},
		"long": {{CandidateID: "c3", Title: "Hermetic builds", Lesson: long, CitedPositions: []int64{9}, ApprovedAt: at}},
	}
}

// TestPackagesValidateWithSkillsRef (issue 32): packages the builder generates — one lesson, several lessons with
// quotes, colons, a YAML-looking title and non-ASCII text, and a description cut at its bound — pass the Agent Skills
// reference validator (npm skills-ref, pinned in skills/skillsref), which reads back the name and description the
// builder wrote; a copy whose folder name differs from the skill's name is refused, so the validator does check.
func TestPackagesValidateWithSkillsRef(t *testing.T) {
	bin := skillsRef(t)
	for label, lessons := range lessonCases() {
		t.Run(label, func(t *testing.T) {
			name := skills.Name(lessons[0].Title)
			pkg, err := skills.Build(name, lessons)
			require.NoError(t, err)
			dir := filepath.Join(t.TempDir(), name)
			writeTree(t, dir, pkg.Files)
			out, err := exec.Command(bin, "validate", dir).CombinedOutput()
			require.NoError(t, err, "skills-ref validate %s: %s", name, out)

			out, err = exec.Command(bin, "read-properties", dir).Output()
			require.NoError(t, err, "skills-ref read-properties: %s", out)
			var props struct{ Name, Description string }
			require.NoError(t, json.Unmarshal(out, &props), "%s", out)
			require.Equal(t, name, props.Name)
			require.NotEmpty(t, props.Description)
			require.LessOrEqual(t, len([]rune(props.Description)), skills.MaxDescriptionLen)

			// The same tree in a folder of another name is refused: the validator checks what it is given.
			other := filepath.Join(t.TempDir(), "not-"+name)
			writeTree(t, other, pkg.Files)
			out, err = exec.Command(bin, "validate", other).CombinedOutput()
			require.Error(t, err, "a folder named unlike the skill must fail validation: %s", out)
			require.Contains(t, string(out), "must match skill name", "%s", out)
		})
	}
}
