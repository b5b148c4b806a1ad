package sweep

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestReconcileProxy: probe and canary that went different ways about the
// proxy are said to disagree, and the runtime's way is named in effect.
func TestReconcileProxy(t *testing.T) {
	fail := func(code verdict.Code, cond verdict.Condition, host string) report.SweepResult {
		return report.SweepResult{Status: report.SweepFail, Verdict: verdict.Verdict{Status: verdict.StatusFail, Code: code, Condition: cond, Endpoint: host}}
	}
	ok := report.SweepResult{Status: report.SweepOK, Verdict: verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}}
	tests := []struct {
		name          string
		probe, canary report.SweepResult
		probeProxy    string
		want          string // in ProxyDisagree; "" for none
	}{
		{"probe through the proxy, runtime dials the registry itself", ok, fail(verdict.ConnectTimeout, verdict.ConditionRoute, "registry.lab.test"),
			"proxy 10.0.0.9:3128, from the files of containerd.service", "the runtime resolved or dialed registry.lab.test itself (CONNECT_TIMEOUT)"},
		{"probe direct, runtime through a proxy", ok, fail(verdict.ProxyDenied, verdict.ConditionProxy, "blob.lab.test"),
			"", "the runtime goes through a proxy (PROXY_DENIED) while the probe went direct: no proxy settings found"},
		{"both through the proxy, both refused", fail(verdict.ProxyDenied, verdict.ConditionProxy, "blob.lab.test"), fail(verdict.ProxyDenied, verdict.ConditionProxy, "blob.lab.test"),
			"proxy 10.0.0.9:3128, from the running containerd (pid 7)", ""},
		{"both direct, both time out", fail(verdict.ConnectTimeout, verdict.ConditionRoute, "r"), fail(verdict.ConnectTimeout, verdict.ConditionRoute, "r"), "direct, from none found", ""},
		{"canary pulls: nothing to compare", ok, ok, "proxy 10.0.0.9:3128, from x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, c := tt.probe, tt.canary
			p.Proxy = tt.probeProxy
			n := report.SweepNode{Probe: &p, Canary: &c}
			reconcile(&n)
			if tt.want == "" {
				if n.ProxyDisagree != "" {
					t.Errorf("ProxyDisagree = %q, want none", n.ProxyDisagree)
				}
				return
			}
			if !strings.Contains(n.ProxyDisagree, tt.want) || !strings.Contains(n.ProxyDisagree, "the runtime's way is in effect") || !strings.Contains(n.Reconcile, "disagree about the proxy") {
				t.Errorf("ProxyDisagree %q, Reconcile %q: want %q and the runtime's way in effect", n.ProxyDisagree, n.Reconcile, tt.want)
			}
		})
	}
}

// withProxy sets how node n's walk went with its runtime's proxy (its
// probesummary.Summary.Proxy).
func withProxy(n report.SweepNode, proxy string) report.SweepNode {
	n.Probe.Proxy = proxy
	return n
}

const (
	viaDropIn = "proxy 10.0.40.10:3128 (HTTPS_PROXY in /etc/systemd/system/containerd.service.d/http-proxy.conf:3 (Environment=)), from the files of containerd.service (no running runtime's environment could be read)"
	noProxy   = "direct, from none found: no proxy variable in the running runtime's environment or its files"
)

// A pool whose containerd has the proxy drop-in the other pool's lacks,
// with no direct path: the pool separates them, and the summary and the
// first advice name the proxy on one side and its absence on the other.
func TestSweepNamesTheProxyAPoolLacks(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		withProxy(node("a-1", "ng-proxy", "z1", "s1", "", verdict.OK), viaDropIn),
		withProxy(node("b-1", "ng-new", "z1", "s1", "", verdict.ConnectRefused), noProxy),
		withProxy(node("b-2", "ng-new", "z2", "s2", "", verdict.ConnectRefused), ""), // no setting found: no proxy section
	}}
	judge(r)
	v := r.Verdict
	if v.Pattern != "pool" || v.Code != verdict.ConnectRefused {
		t.Fatalf("verdict %s %s, want pool CONNECT_REFUSED: %s", v.Pattern, v.Code, v.Summary)
	}
	if !strings.Contains(v.Summary, "the failing nodes go direct (no proxy settings for containerd), the healthy ones through proxy 10.0.40.10:3128") {
		t.Errorf("summary %q, want the proxy named as what separates them", v.Summary)
	}
	a := first(v.Advice)
	for _, want := range []string{"The healthy nodes' containerd goes through proxy 10.0.40.10:3128", "http-proxy.conf:3", "their pool lacks the proxy drop-in"} {
		if !strings.Contains(a, want) {
			t.Errorf("advice[0] = %q, want %q", a, want)
		}
	}
}

// Only the proxy separates (same pool, zone, subnet): pattern proxy; the
// failing side is the one through the proxy. Both sides alike: the proxy
// is not named.
func TestSweepProxyOnTheFailingPath(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		withProxy(node("n-1", "p", "z", "s", "", verdict.OK), noProxy),
		withProxy(node("n-2", "p", "z", "s", "", verdict.ProxyDenied), viaDropIn),
	}}
	judge(r)
	if r.Verdict.Pattern != "proxy" || !strings.Contains(first(r.Verdict.Advice), "The failing nodes' containerd goes through proxy 10.0.40.10:3128") {
		t.Errorf("pattern %q advice %q, want proxy and the failing nodes' proxy", r.Verdict.Pattern, first(r.Verdict.Advice))
	}
	for _, tt := range []struct{ name, a, b string }{{"same proxy", viaDropIn, viaDropIn}, {"both direct", noProxy, ""}} {
		r = &report.SweepReport{Nodes: []report.SweepNode{
			withProxy(node("n-1", "p", "z", "s", "", verdict.OK), tt.a),
			withProxy(node("n-2", "p", "z", "s", "", verdict.ConnectTimeout), tt.b),
		}}
		judge(r)
		if r.Verdict.Pattern != "mixed" || strings.Contains(r.Verdict.Summary, "proxy separates") {
			t.Errorf("%s: pattern %q summary %q, want mixed without the proxy", tt.name, r.Verdict.Pattern, r.Verdict.Summary)
		}
	}
}
