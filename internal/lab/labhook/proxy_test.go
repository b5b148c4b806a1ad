package labhook_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// TestRuntimePullsThroughSquid runs proxy-healthy (no route from the node
// to the registry's network) with the real squid and the real containerd:
// containerd, started with the node's running proxy environment, must pull,
// and squid's access log must show the tunnels it opened for containerd to
// the registry and to the blob host, after the probe's.
func TestRuntimePullsThroughSquid(t *testing.T) {
	crictl := needRuntime(t)
	s, err := scenario.LoadBuiltin("proxy-healthy")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, s, lab.StartOptions{Self: self})
	if l != nil {
		defer l.Close()
	}
	if err != nil {
		t.Fatalf("lab.Start(proxy-healthy): %v", err)
	}
	if want := "HTTPS_PROXY=http://proxy.corp.example:3128"; !slices.Contains(l.Env.RuntimeEnv, want) {
		t.Fatalf("Env.RuntimeEnv = %v, want %s among it", l.Env.RuntimeEnv, want)
	}
	probe, err := l.Probe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if probe.Verdict.Status != "ok" {
		t.Fatalf("probe verdict = %s %s: %s, want ok", probe.Verdict.Status, probe.Verdict.Code, probe.Verdict.Summary)
	}
	for _, ep := range probe.Endpoints {
		if ep.Proxy == nil || ep.Proxy.Via != "proxy" {
			t.Errorf("probe endpoint %s (%s) went direct, want via the node's proxy", ep.Host, ep.Role)
		}
	}
	before := len(tunnels(t, l.Env, 0))
	c := (&labhook.Hook{Crictl: crictl}).Check(ctx, l.Env, probe)
	if !c.OK || c.Runtime == nil || !c.Runtime.OK {
		t.Fatalf("runtime check = %s, want containerd's pull ok through the proxy", c.Detail)
	}
	// squid writes a tunnel's line when it closes: containerd has stopped.
	tunnels(t, l.Env, before, "CONNECT registry.vendor.example:443", "CONNECT blobs.vendor.example:443")
}

// tunnels waits (bounded) until squid's access log holds TCP_TUNNEL/200
// lines after its first from that contain each of want, and returns all
// its tunnel lines.
func tunnels(t *testing.T, env *lab.Env, from int, want ...string) []string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		log, err := env.ProxyAccessLog()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "TCP_TUNNEL/200") {
				out = append(out, line)
			}
		}
		missing := ""
		for _, w := range want {
			if len(out) <= from || !strings.Contains(strings.Join(out[from:], "\n"), w) {
				missing = w
			}
		}
		if missing == "" {
			return out
		}
		select {
		case <-timeout:
			t.Fatalf("squid's access log has no tunnel %q after its first %d within 15s, so containerd did not pull through the proxy:\n%s", missing, from, log)
		case <-tick.C:
		}
	}
}
