// Package skillpkg is the skill package format both ends share (docs/skills.md#package-format): the file tree, its
// tree digest, and the deterministic ustar archive the server writes and the agent's sync reads back.
//
// It imports nothing of this module (the server's skills package and the standard-library-only Go client both
// use it), so the tree digest and the archive rules are written once.
package skillpkg

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Bounds of a package; the server's CHECK constraints on pc_skill_revisions hold the same ones.
const (
	MaxFiles        = 64
	MaxTreeBytes    = 1 << 20
	MaxArchiveBytes = 2 << 20
	maxPathLen      = 255
)

// ErrBadArchive means an archive is not a package: not a ustar archive, a file that is not a regular file or a
// directory, an unsafe path, or beyond the bounds. Read's errors wrap it with the reason.
var ErrBadArchive = errors.New("skill package: unreadable archive")

// File is one file of a package tree; Path is slash-separated and relative.
type File struct {
	Path    string
	Content []byte
}

// TreeDigest is the SHA-256 (hex) of the tree: for every file in path order, the line "<sha256 of the content in
// hex> <path>\n". It names the content, not the archive's encoding, so an agent computes it from the folder it wrote.
func TreeDigest(files []File) string {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		sum := sha256.Sum256(f.Content)
		fmt.Fprintf(h, "%s %s\n", hex.EncodeToString(sum[:]), f.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ArchiveDigest is the SHA-256 (hex) of an archive's bytes.
func ArchiveDigest(archive []byte) string {
	sum := sha256.Sum256(archive)
	return hex.EncodeToString(sum[:])
}

// Write is the deterministic ustar archive of files: in path order, each preceded by its directories, mode 0644
// (directories 0755), owner 0, time the Unix epoch. The same files always give the same bytes.
func Write(files []File) ([]byte, error) {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	dirs := map[string]bool{}
	for _, f := range sorted {
		if !SafePath(f.Path) {
			return nil, fmt.Errorf("%w: unsafe path %q", ErrBadArchive, f.Path)
		}
		parts := strings.Split(f.Path, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: 0o644, Size: int64(len(f.Content)),
			ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read reads the files of a package archive back, in path order (directories are skipped). It refuses, with an
// error wrapping ErrBadArchive, anything that is not a ustar archive, entries that are neither regular files nor
// directories (links, devices), unsafe paths (absolute, "..", ".", empty parts, backslashes, colons, NUL), a path
// twice, and more than MaxFiles files, MaxTreeBytes bytes of content or MaxArchiveBytes bytes of archive.
func Read(archive []byte) ([]File, error) {
	if len(archive) > MaxArchiveBytes {
		return nil, fmt.Errorf("%w: archive exceeds %d bytes", ErrBadArchive, MaxArchiveBytes)
	}
	tr := tar.NewReader(bytes.NewReader(archive))
	var out []File
	var size int64
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: %q is not a regular file", ErrBadArchive, h.Name)
		}
		if !SafePath(h.Name) || seen[h.Name] {
			return nil, fmt.Errorf("%w: unsafe or repeated path %q", ErrBadArchive, h.Name)
		}
		if h.Size < 0 || size+h.Size > MaxTreeBytes || len(out) == MaxFiles {
			return nil, fmt.Errorf("%w: more than %d files or %d bytes", ErrBadArchive, MaxFiles, MaxTreeBytes)
		}
		content := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, content); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		size += h.Size
		seen[h.Name] = true
		out = append(out, File{Path: h.Name, Content: content})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// SafePath reports whether p is a clean relative slash path of at most 255 bytes without "..", "." or empty parts,
// backslashes, colons or NUL: a path that stays inside the folder it is written to on every platform.
func SafePath(p string) bool {
	if p == "" || p[0] == '/' || len(p) > maxPathLen {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "\\:\x00") {
			return false
		}
	}
	return true
}
