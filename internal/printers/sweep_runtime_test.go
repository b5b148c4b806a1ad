package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// TestSweepPrintsEachNodesRuntime: the text report names each node's
// runtime, its config file and the mirrors in effect when the nodes
// differ in them; not when they are alike (unless -o wide).
func TestSweepPrintsEachNodesRuntime(t *testing.T) {
	k3s := "containerd (k3s) /var/lib/rancher/k3s/agent/etc/containerd/config.toml"
	mirror := "mirror.corp.example:5000 (/var/lib/rancher/k3s/agent/etc/containerd/certs.d/registry.corp.example/hosts.toml)"
	walked := func(name, runtime string, mirrors ...string) report.SweepNode {
		return report.SweepNode{PlannedNode: report.PlannedNode{Name: name}, Status: report.SweepOK,
			Probe: &report.SweepResult{Status: report.SweepOK, Source: report.SourceProbe, Runtime: runtime, Mirrors: mirrors}}
	}
	print := func(wide bool, nodes ...report.SweepNode) string {
		var b bytes.Buffer
		if err := Print(&b, "text", &report.SweepReport{Nodes: nodes}, Options{Wide: wide}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := print(false, walked("k3s-1", k3s, mirror), walked("plain-1", "containerd /etc/containerd/config.toml"))
	for _, want := range []string{"  k3s-1: " + k3s + "; mirrors " + mirror + "\n", "  plain-1: containerd /etc/containerd/config.toml; no mirror\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if out := print(false, walked("a", k3s, mirror), walked("b", k3s, mirror)); strings.Contains(out, "config.toml") {
		t.Errorf("alike: want no runtime lines without -o wide:\n%s", out)
	}
	if out := print(true, walked("a", k3s, mirror), walked("b", k3s, mirror)); strings.Count(out, "config.toml") != 2 {
		t.Errorf("-o wide: want each node's runtime line:\n%s", out)
	}
}
