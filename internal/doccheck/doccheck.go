// Package doccheck keeps the repository's documentation honest. Its test (doccheck_test.go) reads every file the
// repository tracks and fails when
//
//   - a reference to a Markdown file with an anchor (docs/protocol.md#claim, README.md#configuration) names a file
//     or a heading that does not exist;
//   - a relative Markdown link ([text](path), [text](path#anchor), [text](#anchor)) or a plain mention of a
//     document (docs/x.md, CONTRIBUTING.md) points at nothing (in Go code, a bare upper-case name inside a string
//     literal is a file the program handles, such as the AGENTS.md an agent reads, and is not checked);
//   - a document under docs/ or CONTRIBUTING.md names, in backticks, a test function that no test file declares or a
//     repository path that does not exist;
//   - a file cites a reference outside the repository (see Forbidden);
//   - a document states how many MCP tools, HTTP routes, work kinds or CLI commands the code has as a number
//     (see StatedCounts), which nothing keeps true.
//
// Anchors are computed the way GitHub renders headings: the heading text lowercased, everything but letters,
// digits, spaces, '-' and '_' removed, spaces turned into '-', and a repeated anchor suffixed -1, -2, …
// `<a id="…">` and `<a name="…">` tags count as anchors too. Only ATX headings ("## Title") are read; the
// repository does not use underlined (setext) headings.
package doccheck

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// File is one repository file: its slash-separated path from the repository root and its content.
type File struct {
	Path    string
	Content []byte
}

// Problem is one broken reference or forbidden citation, with the file and line it was found on.
type Problem struct {
	Path    string
	Line    int
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message) }

// Repo is the set of files to check, by path.
type Repo struct {
	files   map[string][]byte
	dirs    map[string]bool
	anchors map[string]map[string]bool // markdown path → anchors, computed on first use
	tests   map[string]bool            // Test/Fuzz/Benchmark/Example functions declared in *_test.go files
}

// NewRepo indexes files (binary files are kept for existence checks but never scanned).
func NewRepo(files []File) *Repo {
	r := &Repo{files: map[string][]byte{}, dirs: map[string]bool{}, anchors: map[string]map[string]bool{}, tests: map[string]bool{}}
	for _, f := range files {
		r.files[f.Path] = f.Content
		for d := path.Dir(f.Path); d != "." && d != "/"; d = path.Dir(d) {
			r.dirs[d] = true
		}
		if strings.HasSuffix(f.Path, "_test.go") {
			for _, m := range testFuncRE.FindAllSubmatch(f.Content, -1) {
				r.tests[string(m[1])] = true
			}
		}
	}
	return r
}

var testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)\w*)\(`)

// exists reports whether p names a file or a directory of the repository.
func (r *Repo) exists(p string) bool {
	p = strings.TrimSuffix(p, "/")
	_, ok := r.files[p]
	return ok || r.dirs[p] || p == "."
}

// Anchors returns the heading anchors of a Markdown document, GitHub style.
func Anchors(markdown []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence, fence := false, ""
	for _, line := range strings.Split(string(markdown), "\n") {
		trimmed := strings.TrimSpace(line)
		if f := fenceMarker(trimmed); f != "" {
			switch {
			case !inFence:
				inFence, fence = true, f
			case strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "":
				inFence = false
			}
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		base := Slug(m[1])
		id := base
		if n := seen[base]; n > 0 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		seen[base]++
		out[id] = true
	}
	return out
}

var (
	headingRE    = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// fenceMarker returns the fence (``` or ~~~, possibly longer) a trimmed line opens or closes, or "".
func fenceMarker(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(trimmed, c+c+c) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// Slug is the anchor GitHub gives a heading with this text (before de-duplication).
func Slug(heading string) string {
	text := inlineLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (r *Repo) anchorsOf(p string) map[string]bool {
	a, ok := r.anchors[p]
	if !ok {
		a = Anchors(r.files[p])
		r.anchors[p] = a
	}
	return a
}

// resolve finds the repository path a reference made in file from names: relative to the file's directory first
// (Markdown links), then to the repository root (code comments name docs/x.md from the root). ok is false when
// neither exists; outside is true when the reference leaves the repository.
func (r *Repo) resolve(from, ref string) (p string, ok, outside bool) {
	candidates := []string{path.Join(path.Dir(from), ref), path.Clean(ref)}
	for _, c := range candidates {
		if c == ".." || strings.HasPrefix(c, "../") || strings.HasPrefix(ref, "/") {
			outside = true
			continue
		}
		if r.exists(c) {
			return c, true, false
		}
	}
	return "", false, outside
}

var (
	// anchoredRefRE matches a Markdown file name with an anchor anywhere in text: docs/protocol.md#claim,
	// README.md#configuration, ../CONTRIBUTING.md#layout. A URL scheme in front is captured so URLs can be skipped.
	anchoredRefRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)?([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)#([A-Za-z0-9_-]+)`)
	// docMentionRE matches a plain mention of a document: docs/<name>.md or an upper-case root document such as
	// CONTRIBUTING.md. Group 1 is the character before it (which must not continue a longer path or word).
	docMentionRE = regexp.MustCompile(`(^|[^A-Za-z0-9_./-])((?:docs/[A-Za-z0-9_-]+|[A-Z][A-Z0-9_-]*)\.md)\b`)
	// mdLinkRE matches inline Markdown links and images: [text](target "title").
	mdLinkRE = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// wholeLinkRE matches a whole inline link, text included.
	wholeLinkRE = regexp.MustCompile(`!?\[[^\]]*\]\([^)]*\)`)
	// refDefRE matches reference-style link definitions: [label]: target.
	refDefRE = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// backtickRE matches inline code spans in Markdown.
	backtickRE = regexp.MustCompile("`([^`\n]+)`")
	// testNameRE matches a backticked test function name, optionally with a subtest path.
	testNameRE = regexp.MustCompile(`^((?:Test|Fuzz|Benchmark|Example)[A-Z0-9_]\w*)(?:/\S*)?$`)
	// repoPathRE matches a backticked token that looks like a repository file (with an extension) or directory
	// (with a trailing slash); it is checked when its first segment is a top-level file or directory of the
	// repository. Tokens such as provider/rate_limited (an error pair) are neither.
	repoPathRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*(?:\.(?:go|sql|md|mod|sum|yaml|yml|hcl|js|css|html|tmpl|sh)|/)$`)
)

// selfDir holds this checker, whose sources and tests quote made-up references on purpose.
const selfDir = "internal/doccheck/"

// CheckReferences returns every dangling reference in the repository's files (except this package's own).
func (r *Repo) CheckReferences() []Problem {
	var out []Problem
	for _, p := range r.sortedPaths() {
		content := r.files[p]
		if isBinary(content) || strings.HasPrefix(p, selfDir) {
			continue
		}
		isMarkdown := strings.HasSuffix(p, ".md")
		for i, line := range strings.Split(string(content), "\n") {
			add := func(format string, args ...any) {
				out = append(out, Problem{Path: p, Line: i + 1, Message: fmt.Sprintf(format, args...)})
			}
			if isMarkdown {
				for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
					r.checkLink(p, m[1], add)
				}
				line = wholeLinkRE.ReplaceAllString(line, "") // checked once, as links
			}
			for _, m := range anchoredRefRE.FindAllStringSubmatch(line, -1) {
				if m[1] != "" {
					continue // a URL: not ours to check
				}
				r.checkAnchored(p, m[2], m[3], add)
			}
			var literals [][]int
			if strings.HasSuffix(p, ".go") {
				literals = goStringRE.FindAllStringIndex(line, -1)
			}
			for _, m := range docMentionRE.FindAllStringSubmatchIndex(line, -1) {
				name := line[m[4]:m[5]]
				if !strings.HasPrefix(name, "docs/") && within(literals, m[4]) {
					continue // a file name the program handles as data ("AGENTS.md" an agent reads), not a citation
				}
				if _, ok, outside := r.resolve(p, name); !ok && !outside {
					add("%s does not exist", name)
				}
			}
		}
		if isMarkdown {
			out = append(out, r.checkMarkdownDefinitions(p, content)...)
		}
	}
	return out
}

// goStringRE matches a Go string literal that opens and closes on one line (interpreted or raw).
var goStringRE = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`")

// within reports whether offset i falls inside one of spans ([start, end) pairs).
func within(spans [][]int, i int) bool {
	for _, s := range spans {
		if s[0] <= i && i < s[1] {
			return true
		}
	}
	return false
}

func (r *Repo) checkAnchored(from, ref, anchor string, add func(string, ...any)) {
	target, ok, outside := r.resolve(from, ref)
	switch {
	case outside && !ok:
		add("%s#%s points outside the repository", ref, anchor)
	case !ok:
		add("%s#%s: %s does not exist", ref, anchor, ref)
	case !r.anchorsOf(target)[anchor]:
		add("%s#%s: %s has no heading with the anchor #%s", ref, anchor, target, anchor)
	}
}

// checkLink checks one Markdown link target found in from.
func (r *Repo) checkLink(from, target string, add func(string, ...any)) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	ref, anchor, _ := strings.Cut(target, "#")
	if ref == "" {
		if anchor != "" && !r.anchorsOf(from)[anchor] {
			add("link #%s: no heading with that anchor in this file", anchor)
		}
		return
	}
	p := path.Join(path.Dir(from), ref)
	if p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(ref, "/") {
		add("link %s points outside the repository", target)
		return
	}
	if !r.exists(p) {
		add("link %s: %s does not exist", target, p)
		return
	}
	if anchor != "" && strings.HasSuffix(p, ".md") && !r.anchorsOf(p)[anchor] {
		add("link %s: %s has no heading with the anchor #%s", target, p, anchor)
	}
}

// checkMarkdownDefinitions checks reference-style link definitions and, in documentation files, the test names and
// repository paths named in backticks.
func (r *Repo) checkMarkdownDefinitions(p string, content []byte) []Problem {
	var out []Problem
	lineOf := func(offset int) int { return bytes.Count(content[:offset], []byte("\n")) + 1 }
	for _, m := range refDefRE.FindAllSubmatchIndex(content, -1) {
		target := string(content[m[2]:m[3]])
		r.checkLink(p, target, func(format string, args ...any) {
			out = append(out, Problem{Path: p, Line: lineOf(m[0]), Message: fmt.Sprintf(format, args...)})
		})
	}
	if !IsDocumentation(p) {
		return out
	}
	for _, m := range backtickRE.FindAllSubmatchIndex(content, -1) {
		token := string(content[m[2]:m[3]])
		problem := func(format string, args ...any) {
			out = append(out, Problem{Path: p, Line: lineOf(m[0]), Message: fmt.Sprintf(format, args...)})
		}
		if t := testNameRE.FindStringSubmatch(token); t != nil {
			if !r.tests[t[1]] {
				problem("test %s is not declared in any _test.go file", t[1])
			}
			continue
		}
		if repoPathRE.MatchString(token) {
			first, _, _ := strings.Cut(token, "/")
			if r.exists(first) && !r.exists(token) {
				problem("path %s does not exist", token)
			}
		}
	}
	return out
}

// IsDocumentation reports whether p is one of the repository's prose documents, whose backticked test names and
// paths are checked too.
func IsDocumentation(p string) bool {
	return (strings.HasPrefix(p, "docs/") && strings.HasSuffix(p, ".md")) || p == "CONTRIBUTING.md" || p == "README.md"
}

func (r *Repo) sortedPaths() []string {
	out := make([]string, 0, len(r.files))
	for p := range r.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// countedRE matches a count of things the code defines, stated as a number in prose: "four tools", "6 HTTP routes",
// "six kinds", "five CLI commands". Such a number drifts silently when the code adds one; the documents name the
// things (or link to the list) instead. A bare "commands" is not matched ("Two commands" to start a server are
// shell lines, not the code's commands).
var countedRE = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|` +
	`fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|\d+) (?:(?:MCP |HTTP |API )?tools|(?:HTTP |API )?` +
	`(?:routes|endpoints)|(?:work |operation )?kinds|(?:CLI|client|server) (?:sub)?commands)\b`)

// StatedCounts returns every line of the documentation (IsDocumentation) that states how many MCP tools, HTTP
// routes, work kinds or CLI commands the code has as a number: a count the code does not check and that went
// stale before (the architecture once said four MCP tools while the server registered ten).
func (r *Repo) StatedCounts() []Problem {
	var out []Problem
	for _, p := range r.sortedPaths() {
		if !IsDocumentation(p) {
			continue
		}
		for i, line := range strings.Split(string(r.files[p]), "\n") {
			for _, m := range countedRE.FindAllString(line, -1) {
				out = append(out, Problem{Path: p, Line: i + 1, Message: fmt.Sprintf("%q states a count of the code's "+
					"tools, routes, kinds or commands: name them or link to their list instead", m)})
			}
		}
	}
	return out
}

// listSpanRE matches a marked list in a document: <!-- list:NAME --> … <!-- /list --> (HTML comments, invisible
// when rendered), possibly spanning lines.
var listSpanRE = regexp.MustCompile(`(?s)<!-- list:([a-z-]+) -->(.*?)<!-- /list -->`)

// Listed is one marked list of a document: its name, where it starts and the names it gives.
type Listed struct {
	Path  string
	Line  int
	Names []string
}

// Lists returns every marked list named name in the documentation. Its names are the backticked tokens between
// the markers; in a table row only the first cell's count (the other cells may mention other names).
func (r *Repo) Lists(name string) []Listed {
	var out []Listed
	for _, p := range r.sortedPaths() {
		if !IsDocumentation(p) {
			continue
		}
		content := r.files[p]
		for _, m := range listSpanRE.FindAllSubmatchIndex(content, -1) {
			if string(content[m[2]:m[3]]) != name {
				continue
			}
			l := Listed{Path: p, Line: bytes.Count(content[:m[0]], []byte("\n")) + 1}
			for _, line := range strings.Split(string(content[m[4]:m[5]]), "\n") {
				if t := strings.TrimSpace(line); strings.HasPrefix(t, "|") {
					line = strings.SplitN(strings.TrimPrefix(t, "|"), "|", 2)[0]
				}
				for _, b := range backtickRE.FindAllStringSubmatch(line, -1) {
					l.Names = append(l.Names, b[1])
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// Forbidden patterns: citations of documents that live outside the repository. They are assembled from parts so
// that this file does not match itself.
var (
	forbiddenSpec   = regexp.MustCompile(`SPEC ` + "\u00a7")
	forbiddenAPI    = regexp.MustCompile(`(^|[^A-Za-z0-9_])` + `API\.md`)
	forbiddenStyle  = regexp.MustCompile(`(^|[^A-Za-z0-9_])` + `STYLE\.md`)
	forbiddenShared = regexp.MustCompile(`\.\./` + `shared`)
)

// specAllowed exempts, by exact path, the two baseline migrations from the section-citation check. They still carry
// a comment that cites a section of the original design document, and they are applied migrations: editing one
// changes its atlas.sum hash, and every database that already applied it would then refuse to start (the recorded
// hash no longer matches the file). So they stay byte-identical.
var specAllowed = map[string]bool{
	"sql/migrations/mysql/20261202000000_baseline.sql":    true,
	"sql/migrations/postgres/20261202000000_baseline.sql": true,
}

// Forbidden returns every citation of a document outside the repository: a design-document section sign, the
// names of the old contract and style documents, and relative paths into the directory next to the repository.
// Exempt: .ci/run, the CI entry point, which starts the database servers with a script that lives next to the
// repository; test files that use the shared tools directory (for that path only); the two baseline migrations
// (for the section citation only).
func (r *Repo) Forbidden() []Problem {
	var out []Problem
	for _, p := range r.sortedPaths() {
		content := r.files[p]
		if isBinary(content) || p == ".ci/run" {
			continue
		}
		usesSharedTools := strings.HasSuffix(p, "_test.go") && bytes.Contains(content, []byte("../"+"shared/tools"))
		for i, line := range strings.Split(string(content), "\n") {
			add := func(what string) {
				out = append(out, Problem{Path: p, Line: i + 1, Message: "cites " + what + " outside the repository"})
			}
			if forbiddenSpec.MatchString(line) && !specAllowed[p] {
				add("a section of a design document")
			}
			if forbiddenAPI.MatchString(line) {
				add("an HTTP contract document")
			}
			if forbiddenStyle.MatchString(line) {
				add("a style document")
			}
			if forbiddenShared.MatchString(line) {
				if !usesSharedTools || strings.Contains(strings.ReplaceAll(line, "../"+"shared/tools", ""), "../"+"shared") {
					add("a path")
				}
			}
		}
	}
	return out
}
