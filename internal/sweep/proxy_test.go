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

// TestSummaryProxy: the compact summary says how the walk went.
func TestSummaryProxy(t *testing.T) {
	rep := &report.ProbeReport{Proxy: &report.ProxyConfig{Origin: "the running containerd (pid 7, containerd.service): /proc/7/environ"},
		Endpoints: []*report.Endpoint{
			{Host: "registry.lab.test", Role: verdict.RoleRegistry, Proxy: &report.EndpointProxy{Via: "direct", NoProxyMatch: ".lab.test"}},
			{Host: "blob.example.com", Role: verdict.RoleBlob, Proxy: &report.EndpointProxy{Via: "proxy", Proxy: "10.0.0.9:3128"}},
		}}
	if got := report.SummarizeProbe(rep).Proxy; got != "proxy 10.0.0.9:3128, from the running containerd (pid 7, containerd.service): /proc/7/environ" {
		t.Errorf("Proxy = %q", got)
	}
	if got := report.SummarizeProbe(&report.ProbeReport{}).Proxy; got != "" {
		t.Errorf("no proxy settings: Proxy = %q, want empty", got)
	}
}
