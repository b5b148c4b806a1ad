//go:build !fuzzonly

package runtimecfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A snapshot of the running containerd's proxy variables reads back through
// --runtime-env unchanged (quotes, backslashes, dollars, passwords), holds
// nothing but the proxy variables, and says where it came from.
func TestRuntimeEnvSnapshotRoundTrip(t *testing.T) {
	root := nodeFS(t, nil)
	tricky := `http://u:p"a$s\w` + "`" + `d@proxy.corp:3128`
	fakeProc(t, root, "812", "containerd", "net:[4026531840]", "0::/system.slice/containerd.service",
		"PATH=/usr/bin", "HOME=/root", "HTTPS_PROXY="+tricky, "no_proxy=.corp, 10.0.0.0/8")
	snap := RuntimeEnvSnapshot(ProxyDiscoveryOptions{Root: root, SelfNetNS: "net:[4026531840]"})
	first, _, _ := strings.Cut(snap, "\n")
	if !strings.HasPrefix(first, snapshotHeader) || !strings.Contains(first, "pid 812") || !strings.Contains(first, "containerd.service") {
		t.Errorf("first line %q: want the header naming pid 812 of containerd.service", first)
	}
	if strings.Contains(snap, "PATH=") || strings.Contains(snap, "HOME=") {
		t.Errorf("snapshot holds more than the proxy variables:\n%s", snap)
	}
	file := filepath.Join(t.TempDir(), "runtime-env")
	if err := os.WriteFile(file, []byte(snap), 0o600); err != nil {
		t.Fatal(err)
	}
	d := discover(t, ProxyDiscoveryOptions{Root: t.TempDir(), RuntimeEnvFile: file})
	if d.Settings.HTTPS.Value != tricky || d.Settings.NoProxy.Value != ".corp, 10.0.0.0/8" {
		t.Errorf("read back: HTTPS %q NO_PROXY %q, want %q and %q", d.Settings.HTTPS.Value, d.Settings.NoProxy.Value, tricky, ".corp, 10.0.0.0/8")
	}
	if shown := RedactProxyValue(snap); strings.Contains(shown, `p"a$s`) || !strings.Contains(shown, "proxy.corp:3128") {
		t.Errorf("printed snapshot %q: want the password masked and the proxy kept", shown)
	}
}

// No containerd in this network namespace: the snapshot is its header,
// saying why, and reads back as no settings.
func TestRuntimeEnvSnapshotNone(t *testing.T) {
	root := nodeFS(t, nil)
	fakeProc(t, root, "99", "containerd", "net:[4026532999]", "0::/", "HTTPS_PROXY=http://other:1")
	snap := RuntimeEnvSnapshot(ProxyDiscoveryOptions{Root: root, SelfNetNS: "net:[4026531840]"})
	if !strings.HasPrefix(snap, snapshotHeader+"none: ") || strings.Count(snap, "\n") != 1 || strings.Contains(snap, "other:1") {
		t.Fatalf("snapshot %q: want one header line saying none and why", snap)
	}
	file := filepath.Join(t.TempDir(), "runtime-env")
	if err := os.WriteFile(file, []byte(snap), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := discover(t, ProxyDiscoveryOptions{Root: t.TempDir(), RuntimeEnvFile: file}); d.Settings.HTTPS.Value != "" {
		t.Errorf("read back HTTPS %q, want none", d.Settings.HTTPS.Value)
	}
}
