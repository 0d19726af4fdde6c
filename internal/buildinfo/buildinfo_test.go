package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/powercontext/powercontext",
		Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := resolve(bi, true)
	want := Info{Version: "v1.2.3", Module: "github.com/powercontext/powercontext", Revision: "abc", Modified: true,
		CommitTime: "2026-12-01T10:00:00Z", GoVersion: "go1.26.8", Platform: got.Platform}
	if got != want {
		t.Fatalf("resolve = %+v, want %+v", got, want)
	}

	// A build from a checkout without stamping: "(devel)" is no version.
	bi.Main.Version = "(devel)"
	if v := resolve(bi, true).Version; v != "dev" {
		t.Fatalf("devel build: version %q, want dev", v)
	}
	if v := resolve(nil, false).Version; v != "dev" {
		t.Fatalf("no build info: version %q, want dev", v)
	}

	// The release build's stamps win.
	version, revision, buildTime = "v2.0.0-3-gdeadbee", "deadbeef", "2026-12-02T00:00:00Z"
	defer func() { version, revision, buildTime = "", "", "" }()
	got = resolve(bi, true)
	if got.Version != "v2.0.0-3-gdeadbee" || got.Revision != "deadbeef" || got.BuildTime != "2026-12-02T00:00:00Z" {
		t.Fatalf("stamped: %+v", got)
	}
}
