package sweeplab_test

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// TestLabSweepK3sLayout: the registry takes the nodes only through the
// pull-through cache. Pool ng-k3s's node is k3s-like (containerd's config
// and certs.d under /var/lib/rancher/k3s/agent/etc/containerd, the cache
// in its hosts.toml); pool ng-plain's keeps /etc/containerd without a
// hosts.toml. No registry folder is given by hand: each probe Pod finds its
// node's runtime config through the read-only /etc and /var/lib mounts,
// walks the k3s node through the cache (ok, the kubelet's canary agreeing)
// and the plain node direct (refused), and the verdict names the pool and
// the runtime configuration that separates them.
func TestLabSweepK3sLayout(t *testing.T) {
	e := start(t, "cluster-k3s-pool-mirror")
	o := e.options()
	o.DockerCerts = "" // the runtime's own configuration, found on each node
	o.Canary = true
	r := e.sweep(o)
	if len(r.Nodes) != 2 {
		t.Fatalf("walked from %d node(s), want 2 (ng-k3s, ng-plain)", len(r.Nodes))
	}
	const k3sConfig = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
	k3sNode := e.c.NodeName("node-a")
	for _, sn := range r.Nodes {
		if sn.Probe == nil {
			t.Fatalf("node %s: no probe result", sn.Name)
		}
		t.Logf("node %s (%s): %s %s; runtime %q mirrors %q", sn.Name, sn.Pool, sn.Status, sn.Verdict.Code, sn.Probe.Runtime, sn.Probe.Mirrors)
		if sn.Name == k3sNode {
			if sn.Status != report.SweepOK || !strings.Contains(sn.Probe.Runtime, "(k3s) "+k3sConfig) {
				t.Errorf("ng-k3s node %s: %s, runtime %q; want ok, k3s's config found under /var/lib", sn.Name, sn.Status, sn.Probe.Runtime)
			}
			if len(sn.Probe.Mirrors) != 1 || !strings.HasPrefix(sn.Probe.Mirrors[0], "mirror.corp.example:5000 (/var/lib/rancher/k3s/agent/etc/containerd/certs.d/") {
				t.Errorf("ng-k3s node %s: mirrors %q, want the cache from k3s's certs.d", sn.Name, sn.Probe.Mirrors)
			}
			if sn.Agreement != "agree-ok" {
				t.Errorf("ng-k3s node %s: agreement %q (%s), want agree-ok: its kubelet pulls through the same cache", sn.Name, sn.Agreement, sn.Reconcile)
			}
			continue
		}
		if sn.Status != report.SweepFail || !strings.Contains(sn.Probe.Runtime, "/etc/containerd/config.toml") || len(sn.Probe.Mirrors) != 0 {
			t.Errorf("ng-plain node %s: %s, runtime %q mirrors %q; want failing on /etc/containerd/config.toml with no mirror", sn.Name, sn.Status, sn.Probe.Runtime, sn.Probe.Mirrors)
		}
		if sn.Agreement != "agree-fail" {
			t.Errorf("ng-plain node %s: agreement %q (%s), want agree-fail", sn.Name, sn.Agreement, sn.Reconcile)
		}
	}
	v := r.Verdict
	if v.Pattern != "pool" || !strings.Contains(v.Summary, "ng-plain") || !strings.Contains(v.Summary, "Their runtime's configuration separates them") || !strings.Contains(v.Summary, k3sConfig) {
		t.Errorf("verdict %s: %q, want pool ng-plain and the runtime configuration separating them", v.Pattern, v.Summary)
	}
	if len(v.Advice) == 0 || !strings.Contains(v.Advice[0], "The runtime's own configuration separates them") {
		t.Errorf("advice %q, want first the runtime configuration that differs", v.Advice)
	}
}
