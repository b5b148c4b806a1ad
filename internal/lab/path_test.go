package lab_test

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// checkPathScenario asserts what the far-side scenarios (issue 38) prove
// beyond their verdict: the MTU test's numbers where the black hole is
// real, and that the test ran and found no MTU where a filter drops the
// handshake whatever its size. TestBuiltinScenarios calls it for every
// run.
func checkPathScenario(t *testing.T, r *report.LabRun) {
	t.Helper()
	if r.Probe == nil {
		return
	}
	var reg *report.Endpoint
	for _, e := range r.Probe.Endpoints {
		if e.Role == "registry" {
			reg = e
		}
	}
	switch r.Scenario {
	case "vpn-mtu-blackhole":
		m := reg.MTU
		if m == nil || m.Result != report.MTUBlackHole || m.WorkingMSS != 1360 || m.FailingMSS != 1361 || m.PathMTU != 1400 || m.NodeMSS != 1460 {
			t.Errorf("lab run %s: MTU test %+v, want black-hole 1360/1361, path MTU 1400, node MSS 1460", r.Scenario, m)
			return
		}
		if m.Route == nil || m.Route.Interface != "eth0" || m.Route.InterfaceMTU != 1500 {
			t.Errorf("lab run %s: route %+v, want eth0 with MTU 1500", r.Scenario, m.Route)
		}
		if m.DurationMS > m.BudgetMS {
			t.Errorf("lab run %s: the MTU test took %.0f ms, over its budget %.0f ms", r.Scenario, m.DurationMS, m.BudgetMS)
		}
		t.Logf("%s: MTU test %d connections in %.0f ms", r.Scenario, len(m.Attempts), m.DurationMS)
	case "vpn-sni-filter":
		m := reg.MTU
		if m == nil || m.Result != report.MTUNotMTU {
			t.Errorf("lab run %s: MTU test %+v, want not-mtu (the filter drops the handshake whatever its size)", r.Scenario, m)
			return
		}
		for _, a := range m.Attempts {
			if a.Result == "completed" {
				t.Errorf("lab run %s: attempt %+v completed through a filter that drops the registry's handshakes", r.Scenario, a)
			}
		}
		if !strings.Contains(r.Probe.Verdict.Summary, "the MTU test was done") {
			t.Errorf("lab run %s: summary %q does not say the MTU test was done", r.Scenario, r.Probe.Verdict.Summary)
		}
		t.Logf("%s: MTU test %d connections in %.0f ms", r.Scenario, len(m.Attempts), m.DurationMS)
	case "vpn-no-route-back":
		if len(r.Probe.Traces) != 1 {
			t.Errorf("lab run %s: traces %+v, want one to the registry's address", r.Scenario, r.Probe.Traces)
			return
		}
		tr := r.Probe.Traces[0]
		if tr.Reached || tr.LastAnswered != 1 || tr.LastAddress != "10.20.1.1" || tr.FirstSilent != 2 {
			t.Errorf("lab run %s: trace %+v, want the VPN gateway 10.20.1.1 as hop 1, the last that answered, and hop 2 (the on-premises gateway without the route back) silent", r.Scenario, tr)
			return
		}
		if !strings.Contains(r.Probe.Verdict.Summary, "the last hop that answered is hop 1 (10.20.1.1)") {
			t.Errorf("lab run %s: summary %q does not name the last hop", r.Scenario, r.Probe.Verdict.Summary)
		}
		t.Logf("%s: trace %.0f ms", r.Scenario, tr.DurationMS)
	case "vpn-slow-link", "vpn-lossy-link":
		tp := r.Probe.Transfer.Pace
		if tp == nil || tp.ProjectedMS <= tp.PullBudgetMS || len(tp.Hosts) != 1 || tp.Hosts[0].Host != "harbor.corp.example" {
			t.Errorf("lab run %s: pace %+v, want the registry's rate and a projection over the budget", r.Scenario, tp)
			return
		}
		t.Logf("%s: projected %.0f ms at %.2f MB/s (budget %.0f ms)", r.Scenario, tp.ProjectedMS, r.Probe.Transfer.MBps, tp.PullBudgetMS)
	case "vpn-layer-pauses":
		tp := r.Probe.Transfer.Pace
		if tp == nil || tp.MaxGapMS < 11500 || tp.MaxGapHost != "harbor-blobs.corp.example" || !strings.Contains(tp.ProgressNote, "has no progress timeout") {
			t.Errorf("lab run %s: pace %+v, want the 12 s stretch on the blob host and containerd 1.6's lack of a progress timeout", r.Scenario, tp)
		}
	case "vpn-healthy", "vpn-mss-clamped":
		if reg != nil && reg.MTU != nil {
			t.Errorf("lab run %s: an MTU test ran (%+v) on a path that works", r.Scenario, reg.MTU)
		}
	}
}
