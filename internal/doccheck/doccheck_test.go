package doccheck

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/powercontext/powercontext/cli"
	"github.com/powercontext/powercontext/mcp"
)

// repoRoot finds the repository root: the nearest directory above the test's working directory with a go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the test directory")
		dir = parent
	}
}

// repoFiles lists the repository's files: what git tracks plus new files it does not ignore, or, without git (an
// exported tree), every file under the root except build output and local data.
func repoFiles(t *testing.T, root string) []File {
	t.Helper()
	var paths []string
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				paths = append(paths, string(p))
			}
		}
	} else {
		t.Logf("git ls-files failed (%v); walking the tree instead", err)
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				switch rel {
				case ".git", "bin", "data", "tmp":
					return filepath.SkipDir
				}
				return nil
			}
			paths = append(paths, rel)
			return nil
		}))
	}
	var files []File
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if os.IsNotExist(err) {
			continue // tracked but deleted in the working tree
		}
		require.NoError(t, err)
		files = append(files, File{Path: p, Content: b})
	}
	require.NotEmpty(t, files)
	return files
}

func report(t *testing.T, what string, problems []Problem) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.String()
	}
	t.Errorf("%s (%d):\n%s", what, len(problems), strings.Join(lines, "\n"))
}

// TestReferencesResolve: every docs/<file>.md#anchor, relative Markdown link, document mention, and backticked test
// name or path in the documentation resolves in this repository.
func TestReferencesResolve(t *testing.T) {
	r := NewRepo(repoFiles(t, repoRoot(t)))
	report(t, "dangling references", r.CheckReferences())
}

// TestNothingCitesOutsideTheRepository: no file cites a document or path outside the repository, except the
// exemptions documented on Forbidden.
func TestNothingCitesOutsideTheRepository(t *testing.T) {
	r := NewRepo(repoFiles(t, repoRoot(t)))
	report(t, "citations outside the repository", r.Forbidden())
}

// TestNoStatedCounts: no document states the number of the code's MCP tools, routes, kinds or CLI commands.
func TestNoStatedCounts(t *testing.T) {
	r := NewRepo(repoFiles(t, repoRoot(t)))
	report(t, "counts of the code stated in the documentation", r.StatedCounts())
}

func TestStatedCountsAreReported(t *testing.T) {
	r := NewRepo([]File{
		{Path: "docs/architecture.md", Content: []byte("| `mcp` | the MCP server with four tools |\n" +
			"Operations of six kinds; 12 HTTP routes.\n## Two commands\nthree tool errors, one per route, " +
			"five CLI commands\n")},
		{Path: "mcp/doc.go", Content: []byte("// Package mcp registers ten tools.\n")},
	})
	var msgs []string
	for _, p := range r.StatedCounts() {
		msgs = append(msgs, fmt.Sprintf("%s:%d %s", p.Path, p.Line, strings.SplitN(p.Message, " states", 2)[0]))
	}
	require.ElementsMatch(t, []string{`docs/architecture.md:1 "four tools"`, `docs/architecture.md:2 "six kinds"`,
		`docs/architecture.md:2 "12 HTTP routes"`, `docs/architecture.md:4 "five CLI commands"`}, msgs)
}

// TestDocumentedMCPToolsAreRegistered: every marked list of MCP tools (the README's, docs/api.md's table) names
// exactly the tools the server registers.
func TestDocumentedMCPToolsAreRegistered(t *testing.T) {
	r := NewRepo(repoFiles(t, repoRoot(t)))
	lists := r.Lists("mcp-tools")
	require.GreaterOrEqual(t, len(lists), 2, "the README and docs/api.md mark their MCP tool lists")
	for _, l := range lists {
		require.ElementsMatch(t, mcp.ToolNames(), l.Names, "%s:%d lists other MCP tools than the server registers", l.Path, l.Line)
	}
}

// TestDocumentedCLICommandsExist: every marked list of the client commands names exactly the command groups of
// package cli ("powercontext " in front of a name is allowed).
func TestDocumentedCLICommandsExist(t *testing.T) {
	var want []string
	for _, c := range cli.Commands() {
		want = append(want, c.Name())
	}
	lists := NewRepo(repoFiles(t, repoRoot(t))).Lists("cli-commands")
	require.NotEmpty(t, lists)
	for _, l := range lists {
		var got []string
		for _, n := range l.Names {
			got = append(got, strings.TrimPrefix(n, "powercontext "))
		}
		require.ElementsMatch(t, want, got, "%s:%d lists other client commands than package cli has", l.Path, l.Line)
	}
}

func TestListsReadMarkedSpans(t *testing.T) {
	r := NewRepo([]File{{Path: "docs/api.md", Content: []byte("Tools <!-- list:mcp-tools -->`a` and `b`\n" +
		"<!-- /list -->, not `c`.\n<!-- list:mcp-tools -->\n| tool | args |\n| --- | --- |\n| `x` | `y` |\n<!-- /list -->\n")}})
	require.Equal(t, []Listed{{Path: "docs/api.md", Line: 1, Names: []string{"a", "b"}},
		{Path: "docs/api.md", Line: 3, Names: []string{"x"}}}, r.Lists("mcp-tools"))
}

// TestRequiredAnchors: the anchors that code comments are written against exist.
func TestRequiredAnchors(t *testing.T) {
	root := repoRoot(t)
	required := map[string][]string{
		"docs/protocol.md": {"engines", "database-time", "creating-rows", "tables", "state-machine", "lock-order",
			"fencing", "enqueue", "claim", "execute", "complete", "errors", "lease-expiry", "scheduler", "membership",
			"rate-limit", "windows-and-cursors", "invariants"},
		"docs/architecture.md": {"what-it-is", "packages", "roles", "engines", "configuration", "privacy",
			"observability", "shutdown"},
	}
	for doc, anchors := range required {
		b, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		have := Anchors(b)
		for _, a := range anchors {
			require.True(t, have[a], "%s has no heading with the anchor #%s", doc, a)
		}
	}
}

// The checks themselves, on small made-up repositories: each must be able to fail.

func TestDanglingAnchorIsReported(t *testing.T) {
	r := NewRepo([]File{
		{Path: "docs/protocol.md", Content: []byte("# Protocol\n\n## Claim\n\ntext\n")},
		{Path: "coordinator/claim.go", Content: []byte("// Claim runs one pass (docs/protocol.md#claim).\n" +
			"// Complete (docs/protocol.md#complete) is elsewhere.\n")},
	})
	problems := r.CheckReferences()
	require.Len(t, problems, 1)
	require.Equal(t, "coordinator/claim.go", problems[0].Path)
	require.Equal(t, 2, problems[0].Line)
	require.Contains(t, problems[0].Message, "no heading with the anchor #complete")
}

func TestMissingDocumentAndLinksAreReported(t *testing.T) {
	r := NewRepo([]File{
		{Path: "README.md", Content: []byte("# Title\n\nSee [the API](docs/api.md), [the guide](CONTRIBUTING.md#tests),\n" +
			"[up](#title), [nowhere](#nowhere), [site](https://example.com/x.md#y) and [out](../other/x.md).\n")},
		{Path: "CONTRIBUTING.md", Content: []byte("# Contributing\n\n## Layout\n")},
		{Path: "client/doc.go", Content: []byte("// Package client speaks docs/http.md.\n")},
		{Path: "docs/protocol.md", Content: []byte("# P\n\nProved by `TestClaimOnce` in `coordinator/claim_test.go`;\n" +
			"see `provider/rate_limited`, `TestGone`, `coordinator/gone_test.go` and `role/host/pid`.\n")},
		{Path: "coordinator/claim_test.go", Content: []byte("package coordinator\n\nfunc TestClaimOnce(t *testing.T) {}\n")},
	})
	var msgs []string
	for _, p := range r.CheckReferences() {
		msgs = append(msgs, p.String())
	}
	require.ElementsMatch(t, []string{
		"README.md:3: link docs/api.md: docs/api.md does not exist",
		"README.md:3: link CONTRIBUTING.md#tests: CONTRIBUTING.md has no heading with the anchor #tests",
		"README.md:4: link #nowhere: no heading with that anchor in this file",
		"README.md:4: link ../other/x.md points outside the repository",
		"client/doc.go:1: docs/http.md does not exist",
		"docs/protocol.md:4: test TestGone is not declared in any _test.go file",
		"docs/protocol.md:4: path coordinator/gone_test.go does not exist",
	}, msgs)
}

// TestGoStringFileNamesAreData: in Go code a bare upper-case file name inside a string literal names a file the
// program handles (the AGENTS.md an agent reads), so it is not checked; in a comment it is, and so is a docs/ path
// in a string (an error message citing a document).
func TestGoStringFileNamesAreData(t *testing.T) {
	r := NewRepo([]File{
		{Path: "skills/sync.go", Content: []byte("package skills\n\nconst agents = \"AGENTS.md\" // not a document\n" +
			"// The sync writes NOTES.md.\n" +
			"var hint = `see docs/skills.md`\n")},
	})
	var msgs []string
	for _, p := range r.CheckReferences() {
		msgs = append(msgs, p.String())
	}
	require.ElementsMatch(t, []string{
		"skills/sync.go:4: NOTES.md does not exist",
		"skills/sync.go:5: docs/skills.md does not exist",
	}, msgs)
}

func TestSlugs(t *testing.T) {
	for heading, want := range map[string]string{
		"Windows and cursors":          "windows-and-cursors",
		"What it is":                   "what-it-is",
		"pc_work_items":                "pc_work_items",
		"`make` targets":               "make-targets",
		"Getting PostgreSQL & MariaDB": "getting-postgresql--mariadb",
		"See [the table](#x) (v2)":     "see-the-table-v2",
		"Schlüssel und Sperren":        "schlüssel-und-sperren",
	} {
		require.Equal(t, want, Slug(heading), heading)
	}
	a := Anchors([]byte("# A\n## Claim\n```\n## Not a heading\n```\n### Claim\n<a id=\"custom\"></a>\n"))
	require.Equal(t, map[string]bool{"a": true, "claim": true, "claim-1": true, "custom": true}, a)
}

func TestForbiddenCitations(t *testing.T) {
	section := "SPEC " + "\u00a7"
	shared := "../" + "shared"
	r := NewRepo([]File{
		{Path: ".ci/run", Content: []byte("eval \"$(" + shared + "/ci/services.sh)\"\n")},
		{Path: "coordinator/claim.go", Content: []byte("// See " + section + "3.5.\n")},
		{Path: "handlers/doc.go", Content: []byte("// The contract is in API" + ".md; docs/api.md is fine, OPENAPI" + ".md too.\n")},
		{Path: "app/layout.go", Content: []byte("// Shaped after STYLE" + ".md.\n")},
		{Path: "README.md", Content: []byte("Start the servers with " + shared + "/ci/services.sh.\n")},
		{Path: "e2e/tools_test.go", Content: []byte("const atlas = \"" + shared + "/tools/atlas\"\nconst other = \"" + shared + "/seed\"\n")},
		{Path: "sql/migrations/postgres/20261202000000_baseline.sql", Content: []byte("-- lock order (" + section + "3.3).\n")},
		{Path: "sql/migrations/postgres/20261206000000_new.sql", Content: []byte("-- lock order (" + section + "3.3).\n")},
	})
	var msgs []string
	for _, p := range r.Forbidden() {
		msgs = append(msgs, p.String())
	}
	require.ElementsMatch(t, []string{
		"coordinator/claim.go:1: cites a section of a design document outside the repository",
		"handlers/doc.go:1: cites an HTTP contract document outside the repository",
		"app/layout.go:1: cites a style document outside the repository",
		"README.md:1: cites a path outside the repository",
		"e2e/tools_test.go:2: cites a path outside the repository",
		"sql/migrations/postgres/20261206000000_new.sql:1: cites a section of a design document outside the repository",
	}, msgs)
}
