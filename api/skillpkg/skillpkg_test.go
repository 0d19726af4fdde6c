package skillpkg_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/powercontext/powercontext/api/skillpkg"
)

func tarOf(t *testing.T, hs ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteReadRoundTrip: the archive is deterministic whatever the input order, reads back in path order, and the
// tree digest is the documented line format.
func TestWriteReadRoundTrip(t *testing.T) {
	files := []skillpkg.File{{Path: "a/references/evidence.md", Content: []byte("ev\n")}, {Path: "a/SKILL.md", Content: []byte("---\n")}}
	a1, err := skillpkg.Write(files)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := skillpkg.Write([]skillpkg.File{files[1], files[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a1, a2) {
		t.Fatal("the same files must give the same archive bytes")
	}
	got, err := skillpkg.Read(a1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != "a/SKILL.md" || got[1].Path != "a/references/evidence.md" || string(got[1].Content) != "ev\n" {
		t.Fatalf("read back %+v", got)
	}
	if skillpkg.TreeDigest(got) != skillpkg.TreeDigest(files) {
		t.Fatal("the tree digest does not depend on the order of the files")
	}
	// The digest of the documented lines "<sha256 hex> <path>\n", in path order.
	lines := ""
	for _, f := range got {
		lines += skillpkg.ArchiveDigest(f.Content) + " " + f.Path + "\n"
	}
	if skillpkg.TreeDigest(files) != skillpkg.ArchiveDigest([]byte(lines)) {
		t.Fatal("the tree digest is not the SHA-256 of its lines")
	}
	if d := skillpkg.TreeDigest(files); len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		t.Fatalf("tree digest %q is not 64 lowercase hex characters", d)
	}
	if d := skillpkg.ArchiveDigest(a1); len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		t.Fatalf("archive digest %q is not 64 lowercase hex characters", d)
	}
}

// TestReadRefuses: links, unsafe paths, repeated paths and archives beyond the bounds are ErrBadArchive.
func TestReadRefuses(t *testing.T) {
	cases := map[string][]byte{
		"symlink":     tarOf(t, tar.Header{Typeflag: tar.TypeSymlink, Name: "a/SKILL.md", Linkname: "/etc/passwd"}),
		"hard link":   tarOf(t, tar.Header{Typeflag: tar.TypeLink, Name: "a/x", Linkname: "a/SKILL.md"}),
		"absolute":    tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "/a/SKILL.md", Size: 1, Mode: 0o644}),
		"dot-dot":     tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "a/../../x", Size: 1, Mode: 0o644}),
		"backslash":   tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: `a\..\x`, Size: 1, Mode: 0o644}),
		"twice":       tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "a/x", Size: 1, Mode: 0o644}, tar.Header{Typeflag: tar.TypeReg, Name: "a/x", Size: 1, Mode: 0o644}),
		"too large":   tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "a/x", Size: skillpkg.MaxTreeBytes + 1, Mode: 0o644}),
		"not a tar":   []byte(strings.Repeat("not a tar archive ", 40)),
		"over 2 MiB":  make([]byte, skillpkg.MaxArchiveBytes+1),
		"truncated":   tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "a/x", Size: 1000, Mode: 0o644})[:700],
		"empty parts": tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "a//x", Size: 1, Mode: 0o644}),
	}
	var many []tar.Header
	for i := range skillpkg.MaxFiles + 1 {
		many = append(many, tar.Header{Typeflag: tar.TypeReg, Name: "a/f" + strings.Repeat("x", i), Size: 1, Mode: 0o644})
	}
	cases["too many files"] = tarOf(t, many...)
	for name, archive := range cases {
		if _, err := skillpkg.Read(archive); !errors.Is(err, skillpkg.ErrBadArchive) {
			t.Errorf("%s: got %v, want ErrBadArchive", name, err)
		}
	}
	if _, err := skillpkg.Write([]skillpkg.File{{Path: "../x", Content: []byte("x")}}); !errors.Is(err, skillpkg.ErrBadArchive) {
		t.Errorf("Write of an unsafe path: got %v, want ErrBadArchive", err)
	}
}
