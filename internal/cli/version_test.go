package cli

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	run := func() string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), []string{"pullpath", "version"}, Streams{Out: &out, ErrOut: &errOut}); code != 0 {
			t.Fatalf("pullpath version = exit %d: %s", code, errOut.String())
		}
		return out.String()
	}
	shape := regexp.MustCompile(`^pullpath \S+ \(commit (unknown|[0-9a-f]{1,12}(\+dirty)?), go\S+, [a-z0-9]+/[a-z0-9]+\)\n$`)
	if got := run(); !shape.MatchString(got) || !strings.Contains(got, runtime.Version()) {
		t.Errorf("pullpath version = %q, want %s with %s", got, shape, runtime.Version())
	}
	// What -ldflags -X stamps wins over the toolchain's build info.
	oldV, oldC := buildinfo.Version, buildinfo.Commit
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit = oldV, oldC })
	buildinfo.Version, buildinfo.Commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	want := "pullpath v1.2.3 (commit 0123456789ab, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if got := run(); got != want {
		t.Errorf("stamped pullpath version = %q, want %q", got, want)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_pullpath", "zsh": "#compdef pullpath", "fish": "complete -c pullpath"} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), []string{"pullpath", "completion", shell}, Streams{Out: &out, ErrOut: &errOut})
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("pullpath completion %s = exit %d, output without %q (%d bytes); stderr %q", shell, code, want, out.Len(), errOut.String())
		}
	}
}
