// Package buildinfo is what pullpath's binaries say about themselves
// (`pullpath version`, `pullpath-agent version`): the version and commit
// stamped at build time, or what the Go toolchain recorded.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped at build time (hack/release.sh):
//
//	go build -ldflags "-X github.com/pullpath/pullpath/internal/buildinfo.Version=v0.1.0 \
//	  -X github.com/pullpath/pullpath/internal/buildinfo.Commit=$(git rev-parse HEAD)" ./cmd/pullpath
//
// Unstamped, Read falls back to what the Go toolchain records: the module
// version (go install ...@v0.1.0) and the VCS revision of a build inside
// the repository.
var (
	Version string
	Commit  string
)

// Info is what a binary says about its build.
type Info struct {
	Version  string // v0.1.0, or (devel)
	Commit   string // the git revision, "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Go       string // go1.26.0
	Platform string // linux/amd64
}

// Read is this binary's Info.
func Read() Info {
	b := Info{Version: Version, Commit: Commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true" && Commit == ""
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// Line is the one line a version command prints, for the program name:
// "pullpath v0.1.0 (commit 1a2b3c4d5e6f, go1.26.0, linux/amd64)".
func (b Info) Line(program string) string {
	c := "commit unknown"
	if b.Commit != "" {
		short := b.Commit
		if len(short) > 12 {
			short = short[:12]
		}
		c = "commit " + short
		if b.Modified {
			c += "+dirty"
		}
	}
	return fmt.Sprintf("%s %s (%s, %s, %s)", program, b.Version, c, b.Go, b.Platform)
}
