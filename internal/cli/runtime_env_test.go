package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuntimeEnvCommand: `pullpath runtime-env` reads the running
// containerd of this network namespace under --host-root, prints its proxy
// variables with the password masked, and with --out writes them whole
// (mode 0640) for `probe --runtime-env`, the values never on the terminal.
func TestRuntimeEnvCommand(t *testing.T) {
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "812")
	if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]string{
		"comm":    "containerd\n",
		"cgroup":  "0::/system.slice/containerd.service\n",
		"environ": "PATH=/usr/bin\x00HTTPS_PROXY=http://puller:env-secret-7@proxy.corp:3128\x00NO_PROXY=.corp\x00",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(self, filepath.Join(dir, "ns", "net")); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, "", "runtime-env", "--host-root", root)
	if code != 0 || !strings.Contains(out, "proxy.corp:3128") || !strings.Contains(out, "pid 812") || strings.Contains(out+errOut, "env-secret-7") {
		t.Errorf("print: exit %d\nstdout:\n%s\nstderr:\n%s\nwant the proxy and pid 812, the password masked", code, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "runtime-env")
	code, out, errOut = runCLI(t, "", "runtime-env", "--host-root", root, "--out", file)
	if code != 0 || strings.Contains(out+errOut, "env-secret-7") {
		t.Fatalf("--out: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `HTTPS_PROXY="http://puller:env-secret-7@proxy.corp:3128"`) || strings.Contains(string(b), "PATH=") {
		t.Errorf("--out file:\n%s\nwant HTTPS_PROXY whole and nothing but the proxy variables", b)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("--out mode: %v %v, want 0640", fi.Mode(), err)
	}

	if code, _, errOut := runCLI(t, "", "runtime-env", "--gid", "65532"); code != 1 || !strings.Contains(errOut, "--gid needs --out") {
		t.Errorf("--gid without --out: exit %d, stderr %q; want a usage error", code, errOut)
	}
}
