package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// PullpathBuildTimeout bounds PullpathBinary's build: with a cold Go cache,
// beside the compiles of other test binaries, a link of the CLI has taken
// minutes.
const PullpathBuildTimeout = 15 * time.Minute

// PullpathBinary builds the CLI (./cmd/pullpath of the module above the
// working directory) for tests that run it as a program, and returns a
// path to it in dir.
//
// Every lab test binary needs one, and a link of the CLI takes tens of
// seconds, so the build is shared: one folder of the temporary directory
// per checkout and build settings, under a file lock. go build relinks
// only when something the binary is built from changed (it compares the
// build ID of the binary already there), so the first test binary links
// and the others find the binary up to date in seconds. The binary is then
// hard-linked into dir: a later build for a changed tree replaces the
// shared file (a new inode) and never the program under a running test.
func PullpathBinary(ctx context.Context, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{root, runtime.GOOS, runtime.GOARCH, os.Getenv("GOFLAGS"), os.Getenv("CGO_ENABLED")}, "\x00")))
	shared := filepath.Join(os.TempDir(), "pullpath-testbin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return "", fmt.Errorf("build pullpath for the tests: %v", err)
	}
	unlock, err := lockFile(filepath.Join(shared, "lock"))
	if err != nil {
		return "", fmt.Errorf("build pullpath for the tests: %v", err)
	}
	defer unlock()
	bin := filepath.Join(shared, "pullpath")
	ctx, cancel := context.WithTimeout(ctx, PullpathBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pullpath")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/pullpath (in %s): %v: %s", root, err, strings.TrimSpace(string(out)))
	}
	own := filepath.Join(dir, "pullpath")
	os.Remove(own)
	if err := os.Link(bin, own); err != nil {
		return bin, nil // dir on another filesystem: the shared file itself
	}
	return own, nil
}

// Run runs bin with args and no input as a user would, and returns its
// exit code, stdout and stderr; t fails when bin cannot run at all.
func Run(t testing.TB, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var exit *exec.ExitError
	if err := cmd.Run(); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// lockFile takes an exclusive flock on path (created if needed) and
// returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %v", path, err)
	}
	return func() { f.Close() }, nil
}

// ModuleRoot is the folder of the go.mod above the working directory (a
// test runs in its package's folder).
func ModuleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no go.mod above the working directory")
}
