// Package buildinfo names this build: version, module, VCS revision, commit time and build time. `make build` (the
// build the Dockerfile runs) stamps version, revision and build time with -ldflags -X; anything not stamped comes
// from the Go toolchain's build information (runtime/debug), which records the module version of a
// `go install module@version` and the VCS revision and time of a build from a checkout.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Stamped by the release build: -ldflags "-X github.com/powercontext/powercontext/internal/buildinfo.version=…".
var (
	version   string
	revision  string
	buildTime string
)

// Info describes one build. Empty strings mean unknown.
type Info struct {
	Version    string `json:"version"`     // release version (git describe, or the module version); "dev" when unknown
	Module     string `json:"module"`      // main module path
	Revision   string `json:"revision"`    // VCS revision (commit hash)
	Modified   bool   `json:"modified"`    // the working tree had uncommitted changes
	CommitTime string `json:"commit_time"` // time of the revision (RFC 3339)
	BuildTime  string `json:"build_time"`  // time of the build (RFC 3339), stamped by make build
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"` // GOOS/GOARCH
}

var get = sync.OnceValue(func() Info { return resolve(debug.ReadBuildInfo()) })

// Get returns this binary's build information.
func Get() Info { return get() }

// Version returns the release version, "dev" when the build was not stamped and is no tagged module version.
func Version() string { return Get().Version }

func resolve(bi *debug.BuildInfo, ok bool) Info {
	info := Info{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ok && bi != nil {
		info.Module = bi.Main.Path
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		info.Version = version
	}
	if revision != "" {
		info.Revision = revision
	}
	if buildTime != "" {
		info.BuildTime = buildTime
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}
