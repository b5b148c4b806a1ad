package sweep

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// withRuntime sets node n's runtime and mirrors (its probesummary.Summary's).
func withRuntime(n report.SweepNode, runtime string, mirrors ...string) report.SweepNode {
	n.Probe.Runtime, n.Probe.Mirrors = runtime, mirrors
	return n
}

const (
	k3sRuntime   = "containerd 2.0.5-k3s1 (k3s) /var/lib/rancher/k3s/agent/etc/containerd/config.toml"
	plainRuntime = "containerd 1.7.27 /etc/containerd/config.toml"
	k3sMirror    = "mirror.corp.example:5000 (/var/lib/rancher/k3s/agent/etc/containerd/certs.d/registry.corp.example/hosts.toml)"
)

// Nodes of one pool, zone and subnet that differ only in their runtime's
// configuration: the runtime separates them (pattern runtime), named with
// its file and mirrors on each side; alike on both sides, it is not named.
func TestSweepRuntimeSeparatesNodesOfOnePool(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		withRuntime(node("n-1", "p", "z", "s", "", verdict.OK), k3sRuntime, k3sMirror),
		withRuntime(node("n-2", "p", "z", "s", "", verdict.ConnectRefused), plainRuntime),
		withRuntime(node("n-3", "p", "z", "s", "", verdict.ConnectRefused), plainRuntime),
	}}
	judge(r)
	v := r.Verdict
	if v.Pattern != "runtime" {
		t.Fatalf("pattern %q (%s), want runtime", v.Pattern, v.Summary)
	}
	want := "the failing nodes run " + plainRuntime + "; no mirror, the healthy ones " + k3sRuntime + "; mirrors mirror.corp.example:5000"
	if !strings.Contains(v.Summary, want) {
		t.Errorf("summary %q, want %q", v.Summary, want)
	}
	if a := first(v.Advice); !strings.Contains(a, "The runtime's own configuration separates them") || !strings.Contains(a, "/etc/containerd/config.toml") {
		t.Errorf("advice[0] = %q, want the runtime configuration named", a)
	}

	// the same runtime and file, only the mirrors differ: the mirror
	// divergence's to name, not the runtime's
	r = &report.SweepReport{Nodes: []report.SweepNode{
		withRuntime(node("n-1", "p", "z", "s", "", verdict.OK), plainRuntime, k3sMirror),
		withRuntime(node("n-2", "p", "z", "s", "", verdict.ConnectRefused), plainRuntime),
	}}
	judge(r)
	if strings.Contains(r.Verdict.Summary, "runtime's configuration separates") || strings.Contains(first(r.Verdict.Advice), "runtime's own configuration") {
		t.Errorf("mirrors only: pattern %q summary %q advice %q, want the runtime not named", r.Verdict.Pattern, r.Verdict.Summary, first(r.Verdict.Advice))
	}

	// the same configuration on both sides, or a side that did not say:
	// not the separation
	for _, tt := range []struct{ name, a, b string }{{"alike", plainRuntime, plainRuntime}, {"unknown", plainRuntime, ""}} {
		r = &report.SweepReport{Nodes: []report.SweepNode{
			withRuntime(node("n-1", "p", "z", "s", "", verdict.OK), tt.a),
			withRuntime(node("n-2", "p", "z", "s", "", verdict.ConnectRefused), tt.b),
		}}
		judge(r)
		if r.Verdict.Pattern != "mixed" || strings.Contains(r.Verdict.Summary, "runtime's configuration separates") {
			t.Errorf("%s: pattern %q summary %q, want mixed without the runtime", tt.name, r.Verdict.Pattern, r.Verdict.Summary)
		}
	}
}
