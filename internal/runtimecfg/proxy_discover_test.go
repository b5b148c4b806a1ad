//go:build !fuzzonly

package runtimecfg

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

func discover(t *testing.T, o ProxyDiscoveryOptions) *ProxyDiscovery {
	t.Helper()
	if o.SelfNetNS == "" {
		o.SelfNetNS = "net:[4026531840]"
	}
	if err := os.MkdirAll(filepath.Join(o.Root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := DiscoverProxy(o)
	if err != nil {
		t.Fatalf("DiscoverProxy: %v", err)
	}
	return d
}

func hasWarning(d *ProxyDiscovery, code verdict.Code) (string, bool) {
	for _, w := range d.Warnings {
		if w.Code == code {
			return w.Message, true
		}
	}
	return "", false
}

// Source: the running containerd's /proc/PID/environ (in the probe's
// network namespace; one in another namespace is not the node's).
func TestDiscoverRunningProcess(t *testing.T) {
	root := nodeFS(t, nil)
	fakeProc(t, root, "812", "containerd", "net:[4026531840]", "0::/system.slice/containerd.service",
		"PATH=/usr/bin", "HTTPS_PROXY=http://proxy.corp:3128", "NO_PROXY=.corp,10.0.0.0/8")
	fakeProc(t, root, "99", "containerd", "net:[4026532999]", "0::/", "HTTPS_PROXY=http://other:1")
	fakeProc(t, root, "100", "dockerd", "net:[4026531840]", "0::/", "HTTPS_PROXY=http://other:1")
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Running == nil || d.Running.PID != 812 || d.Running.Unit != "containerd.service" {
		t.Fatalf("Running = %+v, want pid 812 of containerd.service", d.Running)
	}
	s := d.Settings
	if s.HTTPS.Value != "http://proxy.corp:3128" || s.HTTPS.From != "/proc/812/environ" || s.NoProxy.Value != ".corp,10.0.0.0/8" {
		t.Errorf("Settings = %+v, want the running process's values from /proc/812/environ", s)
	}
	if !strings.Contains(s.Origin, "pid 812") || !strings.Contains(strings.Join(d.Notes, "; "), "other network namespaces") {
		t.Errorf("Origin %q, notes %q: want pid 812 named and the other namespace's process noted", s.Origin, d.Notes)
	}
}

// Source: the real /proc, with a process really named containerd started
// with a proxy environment in a network namespace of its own.
func TestDiscoverRealProc(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Unavailable(t, "needs root to read another process's environ in its own network namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.Unavailable(t, "needs unshare (apt-get install util-linux)")
	}
	// A script named containerd: the kernel names the process after it
	// (comm), it says when it runs, and it lives until its stdin closes.
	bin := filepath.Join(t.TempDir(), "containerd")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho ready\nread x\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", bin)
	cmd.Env = []string{"HTTPS_PROXY=http://proxy.lab:3128", "no_proxy=.lab", "OTHER=x", "PATH=/usr/bin:/bin"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("the fake containerd: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the fake containerd did not start within 30s")
	}
	pid := cmd.Process.Pid // unshare execs the script in place
	ns, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "net"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DiscoverProxy(ProxyDiscoveryOptions{Root: "/", SelfNetNS: ns})
	if err != nil {
		t.Fatal(err)
	}
	if d.Running == nil || d.Running.PID != pid {
		t.Fatalf("Running = %+v, want pid %d (notes %q)", d.Running, pid, d.Notes)
	}
	if d.Settings.HTTPS.Value != "http://proxy.lab:3128" || d.Settings.NoProxy.Value != ".lab" || d.Settings.NoProxy.Var != "no_proxy" {
		t.Errorf("Settings = %+v, want HTTPS_PROXY and no_proxy of the process", d.Settings)
	}
	if _, ok := d.Running.Vars["OTHER"]; ok {
		t.Error("a variable that is not a proxy variable was kept")
	}
}

// Source: a systemd drop-in (the common way: /etc/systemd/system/
// containerd.service.d/http-proxy.conf), with no running process seen.
func TestDiscoverDropIn(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"lib/systemd/system/containerd.service": "[Service]\nExecStart=/usr/bin/containerd\n",
		"etc/systemd/system/containerd.service.d/http-proxy.conf": "[Service]\n" +
			"Environment=\"HTTP_PROXY=http://proxy.corp:3128\" \"HTTPS_PROXY=http://proxy.corp:3128\"\n" +
			"Environment=\"NO_PROXY=localhost,127.0.0.1,.svc,10.0.0.0/8\"\n",
		// a later drop-in overrides one variable
		"etc/systemd/system/containerd.service.d/zz-override.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://proxy2.corp:3128\n",
	})
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Running != nil || d.Unit != "containerd.service" {
		t.Fatalf("Running %+v, Unit %q: want no process and containerd.service's files", d.Running, d.Unit)
	}
	s := d.Settings
	if s.HTTPS.Value != "http://proxy2.corp:3128" || !strings.Contains(s.HTTPS.From, "zz-override.conf:2 (Environment=)") {
		t.Errorf("HTTPS = %+v, want the later drop-in's value and its file:line", s.HTTPS)
	}
	if s.NoProxy.Value != "localhost,127.0.0.1,.svc,10.0.0.0/8" {
		t.Errorf("NoProxy = %+v", s.NoProxy)
	}
	if _, ok := hasWarning(d, verdict.ProxyFromFiles); !ok {
		t.Errorf("warnings %+v: want %s (no running process read)", d.Warnings, verdict.ProxyFromFiles)
	}
}

// Source: EnvironmentFile= named by a drop-in, quoting as systemd reads it.
func TestDiscoverEnvironmentFile(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"etc/systemd/system/containerd.service": "[Service]\nEnvironment=HTTPS_PROXY=http://from-environment:1\nEnvironmentFile=-/etc/containerd/proxy.env\nEnvironmentFile=-/etc/containerd/missing.env\n",
		"etc/containerd/proxy.env":              "# proxy for pulls\nHTTPS_PROXY=\"http://bob:p@ss@proxy.corp:3128\"\nexport NO_PROXY=.corp\n",
	})
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	s := d.Settings
	if s.HTTPS.Value != "http://bob:p@ss@proxy.corp:3128" || !strings.Contains(s.HTTPS.From, "/etc/containerd/proxy.env:2") {
		t.Errorf("HTTPS = %+v: EnvironmentFile= wins over Environment=", s.HTTPS)
	}
	if s.NoProxy.Value != "" {
		t.Errorf("NoProxy = %+v: systemd ignores an \"export NO_PROXY\" line", s.NoProxy)
	}
	notes := strings.Join(d.Notes, "\n")
	if !strings.Contains(notes, `"export NO_PROXY" is not a variable name`) {
		t.Errorf("notes %q: want the export line named", notes)
	}
}

// Source: the manager's DefaultEnvironment=, where AKS writes its
// httpProxyConfig (AgentBaker cse_config.sh configureEtcEnvironment).
func TestDiscoverDefaultEnvironment(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"lib/systemd/system/containerd.service": "[Service]\nExecStart=/usr/bin/containerd\n",
		"etc/systemd/system.conf.d/proxy.conf": "[Manager]\n" +
			"DefaultEnvironment=\"HTTPS_PROXY=http://10.0.0.4:3128/\"\n" +
			"DefaultEnvironment=\"https_proxy=http://10.0.0.4:3128/\"\n" +
			"DefaultEnvironment=\"NO_PROXY=localhost,127.0.0.1,konnectivity,10.224.0.0/16\"\n",
		"etc/environment": "HTTPS_PROXY=http://10.0.0.4:3128/\nhttps_proxy=http://10.0.0.4:3128/\n",
	})
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	s := d.Settings
	if s.HTTPS.Value != "http://10.0.0.4:3128/" || !strings.Contains(s.HTTPS.From, "system.conf.d/proxy.conf:2 (DefaultEnvironment=)") {
		t.Errorf("HTTPS = %+v, want the manager's DefaultEnvironment", s.HTTPS)
	}
	if s.NoProxy.Value != "localhost,127.0.0.1,konnectivity,10.224.0.0/16" {
		t.Errorf("NoProxy = %+v", s.NoProxy)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "/etc/environment sets HTTPS_PROXY, https_proxy, but containerd.service does not read it") {
		t.Errorf("notes %q: want /etc/environment named as not read by the runtime", d.Notes)
	}
}

// Source: /etc/environment, when the runtime's unit names it.
func TestDiscoverEtcEnvironment(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"etc/systemd/system/containerd.service":                     "[Service]\nExecStart=/usr/bin/containerd\n",
		"etc/systemd/system/containerd.service.d/10-httpproxy.conf": "[Service]\nEnvironmentFile=/etc/environment\n",
		"etc/environment": "PATH=\"/usr/local/sbin:/usr/bin\"\nHTTPS_PROXY=http://proxy.corp:3128\nNO_PROXY=.corp\n",
	})
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Settings.HTTPS.Value != "http://proxy.corp:3128" || !strings.Contains(d.Settings.HTTPS.From, "/etc/environment:2") {
		t.Errorf("HTTPS = %+v, want /etc/environment:2", d.Settings.HTTPS)
	}
	for _, n := range d.Notes {
		if strings.Contains(n, "does not read it") {
			t.Errorf("note %q: the unit does read /etc/environment", n)
		}
	}
}

// Source: k3s's /etc/default/k3s (EnvironmentFile=-/etc/default/%N):
// CONTAINERD_HTTPS_PROXY is the containerd's HTTPS_PROXY, over a plain one.
func TestDiscoverK3s(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"etc/systemd/system/k3s-agent.service": "[Service]\nType=notify\nEnvironmentFile=-/etc/default/%N\nEnvironmentFile=-/etc/sysconfig/%N\nEnvironmentFile=-/etc/systemd/system/k3s-agent.service.env\nExecStart=/usr/local/bin/k3s agent\n",
		"etc/default/k3s-agent":                "HTTPS_PROXY=http://for-k3s-itself:3128\nCONTAINERD_HTTPS_PROXY=http://for-containerd:3128\nCONTAINERD_NO_PROXY=.lab\n",
	})
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Unit != "k3s-agent.service" {
		t.Fatalf("Unit = %q, want k3s-agent.service", d.Unit)
	}
	s := d.Settings
	if s.HTTPS.Value != "http://for-containerd:3128" || !strings.Contains(s.HTTPS.From, "as CONTAINERD_HTTPS_PROXY") {
		t.Errorf("HTTPS = %+v, want CONTAINERD_HTTPS_PROXY's value", s.HTTPS)
	}
	if s.NoProxy.Value != ".lab" {
		t.Errorf("NoProxy = %+v", s.NoProxy)
	}
}

// Source: rke2's /etc/default/rke2-agent, found through the running
// containerd's cgroup (rke2-agent.service), with the running process
// agreeing with the files.
func TestDiscoverRKE2(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"usr/lib/systemd/system/rke2-agent.service": "[Service]\nEnvironmentFile=-/etc/default/%N\nEnvironmentFile=-/etc/sysconfig/%N\nEnvironmentFile=-/usr/lib/systemd/system/%N.env\n",
		"etc/default/rke2-agent":                    "CONTAINERD_HTTPS_PROXY=http://proxy.corp:3128\n",
		// a containerd.service exists too: the process's cgroup decides
		"lib/systemd/system/containerd.service": "[Service]\nEnvironment=HTTPS_PROXY=http://wrong:1\n",
	})
	fakeProc(t, root, "4242", "containerd", "net:[4026531840]", "0::/system.slice/rke2-agent.service", "HTTPS_PROXY=http://proxy.corp:3128")
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Unit != "rke2-agent.service" || d.Running == nil || d.Running.Unit != "rke2-agent.service" {
		t.Fatalf("Unit %q, Running %+v: want rke2-agent.service from the cgroup", d.Unit, d.Running)
	}
	if msg, ok := hasWarning(d, verdict.ProxyRestartPending); ok {
		t.Errorf("restart pending reported though process and files agree: %s", msg)
	}
	if d.Intent["HTTPS_PROXY"].Value != "http://proxy.corp:3128" {
		t.Errorf("Intent = %+v", d.Intent)
	}
}

// The running process and its files differ: the walk follows the process
// and a restart is pending.
func TestDiscoverRestartPending(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"etc/systemd/system/containerd.service.d/http-proxy.conf": "[Service]\nEnvironment=HTTPS_PROXY=http://new-proxy:3128 NO_PROXY=.corp\n",
	})
	fakeProc(t, root, "700", "containerd", "net:[4026531840]", "0::/system.slice/containerd.service", "HTTPS_PROXY=http://old-proxy:3128")
	d := discover(t, ProxyDiscoveryOptions{Root: root})
	if d.Settings.HTTPS.Value != "http://old-proxy:3128" {
		t.Errorf("HTTPS = %+v, want the running process's", d.Settings.HTTPS)
	}
	msg, ok := hasWarning(d, verdict.ProxyRestartPending)
	if !ok {
		t.Fatalf("warnings %+v: want %s", d.Warnings, verdict.ProxyRestartPending)
	}
	for _, want := range []string{`HTTPS_PROXY is "http://old-proxy:3128" in /proc/700/environ`, `"http://new-proxy:3128" in /etc/systemd/system/containerd.service.d/http-proxy.conf:2`, "NO_PROXY is unset in the running process"} {
		if !strings.Contains(msg, want) {
			t.Errorf("restart warning %q: want %q", msg, want)
		}
	}
}

// Source: --runtime-env FILE, as /proc/PID/environ or KEY=VALUE lines.
func TestDiscoverRuntimeEnvFile(t *testing.T) {
	dir := t.TempDir()
	environ := filepath.Join(dir, "environ")
	os.WriteFile(environ, []byte("HTTPS_PROXY=http://p:1\x00NO_PROXY=.x\x00"), 0o644)
	lines := filepath.Join(dir, "env")
	os.WriteFile(lines, []byte("# saved\nhttps_proxy='http://q:2'\n"), 0o644)
	for file, want := range map[string]string{environ: "http://p:1", lines: "http://q:2"} {
		d := discover(t, ProxyDiscoveryOptions{Root: t.TempDir(), RuntimeEnvFile: file})
		if d.Settings.HTTPS.Value != want || !strings.Contains(d.Settings.Origin, "--runtime-env") {
			t.Errorf("--runtime-env %s: Settings %+v, want HTTPS %s", file, d.Settings, want)
		}
	}
	_, err := DiscoverProxy(ProxyDiscoveryOptions{Root: t.TempDir(), RuntimeEnvFile: filepath.Join(dir, "nope")})
	if err == nil || !strings.Contains(err.Error(), "--runtime-env") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("missing --runtime-env file: error %v, want one line naming the flag", err)
	}
}

// Flags replace single values; --no-node-proxy walks direct.
func TestDiscoverFlags(t *testing.T) {
	root := nodeFS(t, map[string]string{
		"etc/systemd/system/containerd.service": "[Service]\nEnvironment=HTTPS_PROXY=http://files:1 NO_PROXY=.files\n",
	})
	np := ".flag"
	d := discover(t, ProxyDiscoveryOptions{Root: root, NoProxy: &np})
	if d.Settings.HTTPS.Value != "http://files:1" || d.Settings.NoProxy.Value != ".flag" || d.Settings.NoProxy.From != "flag --no-proxy" {
		t.Errorf("Settings = %+v, want the files' proxy and the flag's NO_PROXY", d.Settings)
	}
	d = discover(t, ProxyDiscoveryOptions{Root: root, NoNodeProxy: true})
	if d.Settings.Active() || !d.Settings.Disabled {
		t.Errorf("--no-node-proxy: Settings %+v, want disabled", d.Settings)
	}
}

// A masked unit and a unit with none of the runtimes' names.
func TestDiscoverNothing(t *testing.T) {
	d := discover(t, ProxyDiscoveryOptions{Root: nodeFS(t, nil)})
	if d.Settings.Active() || !strings.Contains(d.Settings.Origin, "none found") {
		t.Errorf("empty node: Settings %+v, want none found", d.Settings)
	}
}
