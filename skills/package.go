package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/powercontext/powercontext/api/skillpkg"
	"github.com/powercontext/powercontext/db"
)

// Bounds of a package (docs/skills.md#package-format); the schema's CHECK constraints hold the same ones.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	MaxFiles          = skillpkg.MaxFiles
	MaxTreeBytes      = skillpkg.MaxTreeBytes
	MaxArchiveBytes   = skillpkg.MaxArchiveBytes
	SkillFile         = "SKILL" + ".md" // the skill file at the root of a package
)

// ErrTooLarge means the package would exceed MaxFiles or MaxTreeBytes.
var ErrTooLarge = errors.New("skills: package exceeds its bounds")

// Lesson is one approved Experience candidate as a package sees it.
type Lesson struct {
	CandidateID    string
	Title          string
	Lesson         string
	CitedPositions []int64
	ApprovedAt     time.Time
}

// LessonOf reads a candidate.
func LessonOf(c db.ExperienceCandidate) Lesson {
	var cited []int64
	_ = json.Unmarshal(c.CitedPositions, &cited)
	return Lesson{CandidateID: c.CandidateID, Title: c.Title, Lesson: c.Lesson, CitedPositions: cited, ApprovedAt: c.UpdatedAt}
}

// File is one file of a package tree; Path is slash-separated and relative (the format the agent side shares,
// api/skillpkg).
type File = skillpkg.File

// Package is a built skill: its tree, the deterministic archive of it and their digests.
type Package struct {
	Name          string
	Files         []File // sorted by Path
	Archive       []byte
	TreeDigest    string
	ArchiveDigest string
	ByteSize      int64
}

// Name is the skill name of a lesson title: lowercase letters, digits and single hyphens, at most MaxNameLen
// characters (cut at a hyphen where possible); "lesson" when nothing is left.
func Name(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		default:
			hyphen = true
		}
	}
	name := b.String()
	if len(name) > MaxNameLen {
		name = name[:MaxNameLen]
		if i := strings.LastIndexByte(name, '-'); i > MaxNameLen/2 {
			name = name[:i]
		}
		name = strings.TrimRight(name, "-")
	}
	if name == "" {
		return "lesson"
	}
	return name
}

// ValidName reports whether name is a valid skill name: 1..64 of [a-z0-9-], no leading, trailing or double hyphen.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// Build packages the lessons of one skill (ordered by approval, then candidate id): the skill file (SkillFile) with YAML front matter
// (name, description) and a body with each lesson and the journal positions it cites, and references/evidence.md
// naming the candidates. The same lessons always give the same bytes and digests.
func Build(name string, lessons []Lesson) (Package, error) {
	if !ValidName(name) || len(lessons) == 0 {
		return Package{}, fmt.Errorf("skills: invalid package input")
	}
	lessons = append([]Lesson(nil), lessons...)
	sort.SliceStable(lessons, func(i, j int) bool {
		if !lessons[i].ApprovedAt.Equal(lessons[j].ApprovedAt) {
			return lessons[i].ApprovedAt.Before(lessons[j].ApprovedAt)
		}
		return lessons[i].CandidateID < lessons[j].CandidateID
	})
	latest := lessons[len(lessons)-1]
	desc := cut(oneLine(latest.Title+". "+latest.Lesson), MaxDescriptionLen)
	descJSON, _ := json.Marshal(desc) // a JSON string is a YAML double-quoted scalar
	var md bytes.Buffer
	fmt.Fprintf(&md, "---\nname: %s\ndescription: %s\n---\n\n# %s\n", name, descJSON, oneLine(latest.Title))
	for _, l := range lessons {
		fmt.Fprintf(&md, "\n## %s\n\n%s\n\nEvidence: journal positions %s.\n", oneLine(l.Title), strings.TrimSpace(l.Lesson), positions(l.CitedPositions))
	}
	var ref bytes.Buffer
	ref.WriteString("# Evidence\n\nThe approved Experience candidates this skill was built from, with the journal positions of the Sources each cites.\n\n")
	for _, l := range lessons {
		fmt.Fprintf(&ref, "- candidate %s: positions %s\n", l.CandidateID, positions(l.CitedPositions))
	}
	return FromFiles(name, []File{{Path: SkillFile, Content: md.Bytes()}, {Path: "references/evidence.md", Content: ref.Bytes()}})
}

// FromFiles builds the archive and digests of a tree.
func FromFiles(name string, files []File) (Package, error) {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var size int64
	for _, f := range files {
		size += int64(len(f.Content))
	}
	if len(files) == 0 || len(files) > MaxFiles || size > MaxTreeBytes || size == 0 {
		return Package{}, ErrTooLarge
	}
	archive, err := skillpkg.Write(files)
	if err != nil {
		return Package{}, err
	}
	if len(archive) > MaxArchiveBytes {
		return Package{}, ErrTooLarge
	}
	return Package{Name: name, Files: files, Archive: archive, TreeDigest: TreeDigest(files),
		ArchiveDigest: skillpkg.ArchiveDigest(archive), ByteSize: size}, nil
}

// TreeDigest is the SHA-256 (hex) of the tree: for every file in path order, the line "<sha256 of the content in
// hex> <path>\n". It names the content, not the archive's encoding, so an agent computes it from the folder it wrote.
func TreeDigest(files []File) string { return skillpkg.TreeDigest(files) }

func positions(ps []int64) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ErrBadArchive means a stored archive is not a package (not a tar, an unsafe path or link, or beyond the bounds).
var ErrBadArchive = skillpkg.ErrBadArchive

// Files reads the files of a package archive back, in path order (directories are skipped). An archive that is
// not a ustar archive, holds anything but regular files under safe paths, or more than MaxFiles files or
// MaxTreeBytes bytes, is ErrBadArchive.
func Files(archive []byte) ([]File, error) { return skillpkg.Read(archive) }
