package runtimecfg

import (
	"github.com/pullpath/pullpath/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nodeFS and writeTree lay a node's files (node path -> content) out
// under a root (testenv's, shared with the cli and pull tests).
var nodeFS, writeTree = testenv.NodeFS, testenv.WriteTree

// fakeProc adds a process to root's /proc: comm, environ (NUL-separated),
// its network namespace link and cgroup.
func fakeProc(t *testing.T, root, pid, comm, netns, cgroup string, env ...string) {
	t.Helper()
	dir := filepath.Join(root, "proc", pid)
	if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "environ"), []byte(strings.Join(env, "\x00")+"\x00"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup+"\n"), 0o644))
	must(os.Symlink(netns, filepath.Join(dir, "ns", "net")))
}
