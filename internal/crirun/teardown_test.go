package crirun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// assertGone checks that nothing of a runtime is left: no process naming
// its folder, no containerd pid, no socket, no mount, no folder, and no
// process in the namespace.
func assertGone(t *testing.T, wd string, pid int, ns string) {
	t.Helper()
	if pids, err := ProcessesNaming(wd); err != nil || len(pids) > 0 {
		t.Errorf("ProcessesNaming(%s) = %v, %v, want none", wd, pids, err)
	}
	if pid > 0 {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("containerd pid %d still exists (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "containerd.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket %s/containerd.sock: %v, want it gone", wd, err)
	}
	if m, err := MountsUnder(wd); err != nil || len(m) > 0 {
		t.Errorf("MountsUnder(%s) = %v, %v, want none (checked /proc/self/mountinfo)", wd, m, err)
	}
	if _, err := os.Stat(wd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work folder %s: %v, want it removed", wd, err)
	}
	if ns != "" {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("ip netns pids %s = %q, %v, want no process", ns, out, err)
		}
	}
}

func TestStopLeavesNothing(t *testing.T) {
	crictl := needRuntime(t)
	ns := testNetns(t, "127.0.0.53")
	wd := filepath.Join(t.TempDir(), "ctrd")
	r, err := Start(context.Background(), Options{Netns: ns, WorkDir: wd, Crictl: crictl})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := r.Pid()
	if pids, _ := ProcessesNaming(wd); len(pids) == 0 {
		t.Fatalf("ProcessesNaming(%s) found nothing while containerd (pid %d) runs", wd, pid)
	}
	// A pull leaves a containerd that has done real work.
	if res := r.Pull(context.Background(), "127.0.0.1:1/lab/app:v1", nil, 10*time.Second); res.OK || res.Error != "" {
		t.Fatalf("Pull(refused) = %+v, want the runtime's refusal", res)
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertGone(t, wd, pid, ns)
	if err := r.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil (idempotent)", err)
	}
}

// TestCleanupAfterOwnerDied is the sweep after a run killed with SIGKILL:
// containerd still runs, nobody holds its Runtime; Cleanup(dir) removes it.
func TestCleanupAfterOwnerDied(t *testing.T) {
	crictl := needRuntime(t)
	ns := testNetns(t, "127.0.0.53")
	wd := filepath.Join(t.TempDir(), "ctrd")
	r, err := Start(context.Background(), Options{Netns: ns, WorkDir: wd, Crictl: crictl})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	pid := r.Pid()
	if err := Cleanup(wd); err != nil {
		t.Fatalf("Cleanup(%s): %v", wd, err)
	}
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("containerd (pid %d) not reaped after Cleanup", pid)
	}
	assertGone(t, wd, pid, ns)
}

// TestStartFailureLeavesNothing: a containerd that dies at once gives an
// error naming its log, and Start leaves no folder behind.
func TestStartFailureLeavesNothing(t *testing.T) {
	crictl := needRuntime(t)
	ns := testNetns(t, "127.0.0.53")
	fake := filepath.Join(t.TempDir(), "containerd")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'containerd github.com/containerd/containerd 9.9.9 fake'; exit 0; fi\necho 'fake containerd: refusing to start' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// ctr is looked up beside the binary, then in PATH.
	wd := filepath.Join(t.TempDir(), "ctrd")
	r, err := Start(context.Background(), Options{Netns: ns, WorkDir: wd, Crictl: crictl, Containerd: fake, StartTimeout: 10 * time.Second})
	if err == nil {
		_ = r.Stop()
		t.Fatal("Start with a containerd that exits = nil error, want one")
	}
	if !strings.Contains(err.Error(), "exited during start") || !strings.Contains(err.Error(), "refusing to start") {
		t.Errorf("Start error = %v, want it to say containerd exited and quote its log", err)
	}
	assertGone(t, wd, 0, ns)
}
