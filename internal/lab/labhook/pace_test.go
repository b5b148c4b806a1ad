package labhook_test

import (
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// paceFactor bounds containerd's real pull time against the probe's
// projection of it on the same link: within a factor of two either way.
const paceFactor = 2.0

// checkRuntimePace holds containerd's real pull time on the slow and the
// lossy link against the probe's projection (issue 38), and checks that
// containerd 1.6 waits out a pause no progress timeout of its own ends.
// TestRuntimeBesideProbe calls it for every run.
func checkRuntimePace(t *testing.T, r *report.LabRun, rt *report.RuntimePull) {
	t.Helper()
	if r.Probe == nil || r.Probe.Transfer == nil || r.Probe.Transfer.Pace == nil {
		return
	}
	tp := r.Probe.Transfer.Pace
	switch r.Scenario {
	case "vpn-slow-link", "vpn-lossy-link":
		if !rt.OK || tp.ProjectedMS <= 0 {
			t.Errorf("lab run %s: containerd ok %v, projection %.0f ms; want a pull and a projection", r.Scenario, rt.OK, tp.ProjectedMS)
			return
		}
		ratio := rt.DurationMS / tp.ProjectedMS
		t.Logf("%s: projected %.0f ms at %.2f MB/s, containerd %s pulled in %.0f ms: %.2fx", r.Scenario, tp.ProjectedMS, r.Probe.Transfer.MBps, rt.Runtime, rt.DurationMS, ratio)
		if ratio < 1/paceFactor || ratio > paceFactor {
			t.Errorf("lab run %s: containerd took %.0f ms, the probe projected %.0f ms (%.2fx), want within %.0fx", r.Scenario, rt.DurationMS, tp.ProjectedMS, ratio, paceFactor)
		}
	case "vpn-layer-pauses":
		if !rt.OK || rt.DurationMS < 12000 || tp.MaxGapMS < 11500 {
			t.Errorf("lab run %s: containerd ok %v in %.0f ms, the probe's longest stretch %.0f ms; want containerd 1.6 to wait out the 12 s pause", r.Scenario, rt.OK, rt.DurationMS, tp.MaxGapMS)
		}
	}
}
