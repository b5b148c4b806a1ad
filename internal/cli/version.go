package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Stamped at build time (hack/release.sh):
//
//	go build -ldflags "-X github.com/pullpath/pullpath/internal/cli.version=v0.1.0 \
//	  -X github.com/pullpath/pullpath/internal/cli.commit=$(git rev-parse HEAD)" ./cmd/pullpath
//
// Unstamped, buildInfo falls back to what the Go toolchain records: the
// module version (go install ...@v0.1.0) and the VCS revision of a build
// inside the repository.
var (
	version string
	commit  string
)

// buildInfo is what `pullpath version` says.
type buildInfo struct {
	Version  string // v0.1.0, or (devel)
	Commit   string // the git revision, "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Go       string // go1.26.0
	Platform string // linux/amd64
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
				b.Modified = s.Value == "true" && commit == ""
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// String is the one line `pullpath version` prints:
// "pullpath v0.1.0 (commit 1a2b3c4d5e6f, go1.26.0, linux/amd64)".
func (b buildInfo) String() string {
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
	return fmt.Sprintf("pullpath %s (%s, %s, %s)", b.Version, c, b.Go, b.Platform)
}

type versionOptions struct{ streams Streams }

func newVersionCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print pullpath's version, commit, Go version and platform",
		Args:  cobra.NoArgs,
		RunE:  runE(&versionOptions{streams: s}),
	}
}

func (o *versionOptions) Complete(*cobra.Command, []string) error { return nil }
func (o *versionOptions) Validate() error                         { return nil }

func (o *versionOptions) Run(context.Context) error {
	_, err := fmt.Fprintln(o.streams.Out, readBuildInfo())
	return err
}
