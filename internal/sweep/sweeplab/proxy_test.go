package sweeplab_test

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// TestLabSweepProxyPool: the nodes reach 443 only through the egress
// proxy (a real squid); pool ng-proxy's containerd has the proxy drop-in
// (in the node's /etc/systemd, where its running containerd's environment
// comes from), pool ng-new's nodes lack it. The probe Pods read the
// node's /etc and /usr (read-only) and walk as containerd does: through
// the proxy on ng-proxy's node, which pulls (and its kubelet, the canary,
// agrees), direct and refused on ng-new's; the verdict names the pool and
// the drop-in one pool has and the other lacks.
func TestLabSweepProxyPool(t *testing.T) {
	e := start(t, "cluster-proxy-pool-no-dropin")
	o := e.options()
	o.Canary = true
	r := e.sweep(o)
	if len(r.Nodes) != 3 {
		t.Fatalf("walked from %d node(s), want 3 (ng-proxy, ng-new in two subnets)", len(r.Nodes))
	}
	withProxy := e.c.NodeName("node-a")
	for _, sn := range r.Nodes {
		if sn.Probe == nil {
			t.Errorf("node %s: no probe result", sn.Name)
			continue
		}
		t.Logf("node %s (%s): %s %s; proxy: %s", sn.Name, sn.Pool, sn.Status, sn.Verdict.Code, sn.Probe.Proxy)
		if sn.Name == withProxy {
			if sn.Status != report.SweepOK || !strings.HasPrefix(sn.Probe.Proxy, "proxy 10.0.40.10:3128") || !strings.Contains(sn.Probe.Proxy, "/etc/systemd/system/containerd.service.d/http-proxy.conf") {
				t.Errorf("ng-proxy node %s: %s, proxy %q; want ok through proxy 10.0.40.10:3128 from its drop-in", sn.Name, sn.Status, sn.Probe.Proxy)
			}
			if sn.Agreement != "agree-ok" {
				t.Errorf("ng-proxy node %s: agreement %q (%s), want agree-ok: the kubelet pulls through the same proxy", sn.Name, sn.Agreement, sn.Reconcile)
			}
			continue
		}
		// no proxy setting found: the report has no proxy section
		if sn.Pool != "ng-new" || sn.Status != report.SweepFail || sn.Probe.Proxy != "" {
			t.Errorf("node %s (%s): %s, proxy %q; want ng-new failing, direct (no proxy setting)", sn.Name, sn.Pool, sn.Status, sn.Probe.Proxy)
		}
		if sn.Agreement != "agree-fail" {
			t.Errorf("ng-new node %s: agreement %q (%s), want agree-fail", sn.Name, sn.Agreement, sn.Reconcile)
		}
	}
	v := r.Verdict
	if v.Pattern != "pool" || !strings.Contains(v.Summary, "ng-new") || !strings.Contains(v.Summary, "the failing nodes go direct (no proxy settings for containerd), the healthy ones through proxy 10.0.40.10:3128") {
		t.Errorf("verdict %s: %q, want pool ng-new and the proxy separating them", v.Pattern, v.Summary)
	}
	if len(v.Advice) == 0 || !strings.Contains(v.Advice[0], "their pool lacks the proxy drop-in") || !strings.Contains(v.Advice[0], "http-proxy.conf") {
		t.Errorf("advice %q, want first the drop-in ng-new lacks", v.Advice)
	}
}
