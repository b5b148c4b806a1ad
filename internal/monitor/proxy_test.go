package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestAgentFollowsTheNodesProxy: every walk reads containerd's proxy
// settings under --host-root, as they are at that walk: a drop-in giving
// containerd an HTTPS_PROXY that refuses connections (nothing listens on
// it) turns the healthy walk into PROXY_REFUSED, naming the proxy; with
// the drop-in removed the next walk goes direct and passes again;
// --no-node-proxy walks direct on purpose.
func TestAgentFollowsTheNodesProxy(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.47.53", Registry: "127.0.47.10", Token: "127.0.47.11", Blob: "127.0.47.12", Blob2: "127.0.47.13"}})
	o := labOptions(t, labNode{name: "n1", stack: st})
	root := t.TempDir()
	o.HostRoot = root
	o.Once = true
	unit := filepath.Join(root, "etc/systemd/system/containerd.service")
	drop := filepath.Join(root, "etc/systemd/system/containerd.service.d/http-proxy.conf")
	if err := os.MkdirAll(filepath.Dir(drop), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unit, []byte("[Service]\nExecStart=/usr/bin/containerd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(drop, []byte("[Service]\nEnvironment=\"HTTPS_PROXY=http://127.0.47.9:3128\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := New(o, &syncWriter{b: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tg := a.targets()[0]
	a.walk(ctx, tg, true)
	r := a.results[tg.image]
	if r.Verdict == nil || r.Verdict.Code != verdict.ProxyRefused {
		t.Fatalf("walk with the drop-in: %+v, want PROXY_REFUSED (containerd's proxy refuses)", r.Verdict)
	}
	if !strings.Contains(r.Verdict.Summary, "127.0.47.9:3128") {
		t.Errorf("verdict %q, want the drop-in's proxy named", r.Verdict.Summary)
	}
	if err := os.Remove(drop); err != nil {
		t.Fatal(err)
	}
	a.walk(ctx, tg, true)
	if r := a.results[tg.image]; r.Verdict == nil || r.Verdict.Status != verdict.StatusOK {
		t.Errorf("walk after the drop-in was removed: %+v, want ok (direct)", r.Verdict)
	}
	if err := os.WriteFile(drop, []byte("[Service]\nEnvironment=\"HTTPS_PROXY=http://127.0.47.9:3128\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.o.NoNodeProxy = true
	a.walk(ctx, tg, true)
	if r := a.results[tg.image]; r.Verdict == nil || r.Verdict.Status != verdict.StatusOK {
		t.Errorf("walk with --no-node-proxy: %+v, want ok (direct on purpose)", r.Verdict)
	}
}
