//go:build !fuzzonly

package pull

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// traceStep is the report's trace step.
func traceStep(t *testing.T, rep *report.ProbeReport) report.Step {
	t.Helper()
	for _, st := range rep.Steps {
		if st.Name == "trace" {
			return st
		}
	}
	t.Fatalf("no trace step in %+v", rep.Steps)
	return report.Step{}
}

// TestProbeTrace: --trace runs only for a failure by timeout, on the
// address that failed; a stall past TCP shows the SYNs reaching it.
func TestProbeTrace(t *testing.T) {
	withTrace := func(o *Options, _ *labsvc.Stack) { o.Trace = true; o.NoMTUTest = true }

	// a walk that works traces each endpoint's address: what sweep puts
	// beside a failing node's trace
	rep, st := probeStack(t, labsvc.StackConfig{}, withTrace)
	a := st.Config.Addrs
	var dests []string
	for _, tr := range rep.Traces {
		if !tr.Reached || len(tr.Hops) != 1 {
			t.Errorf("healthy pull: trace %+v, want the address reached at hop 1 (loopback)", tr)
		}
		dests = append(dests, tr.Hops[len(tr.Hops)-1].Address)
	}
	if got := strings.Join(dests, ","); got != a.Registry+","+a.Token+","+a.Blob {
		t.Errorf("healthy pull traced %s, want the registry, token and blob hosts %s,%s,%s", got, a.Registry, a.Token, a.Blob)
	}

	rep, _ = probeStack(t, labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Forbidden: true}}, withTrace)
	if st := traceStep(t, rep); st.Status != report.StepSkip || !strings.Contains(st.Detail, "BLOB_FORBIDDEN is not a timeout") {
		t.Errorf("403: trace step %+v, want skipped as no timeout", st)
	}

	rep, st = probeStack(t, labsvc.StackConfig{BlobFaults: labsvc.BlobFaults{Trickle: "*"}}, withTrace)
	if rep.Verdict.Code != verdict.BlobStalled {
		t.Fatalf("verdict %s, want BLOB_STALLED", rep.Verdict.Code)
	}
	if len(rep.Traces) != 1 {
		t.Fatalf("traces %+v, want one, to the blob host", rep.Traces)
	}
	tr := rep.Traces[0]
	if !tr.Reached || len(tr.Hops) != 1 || tr.Hops[0].Address != st.Config.Addrs.Blob {
		t.Fatalf("trace %+v, want the blob host %s reached at hop 1 (loopback)", tr, st.Config.Addrs.Blob)
	}
	if !strings.Contains(rep.Verdict.Summary, "--trace to "+st.Config.Addrs.Blob) || !strings.Contains(rep.Verdict.Summary, "the stall is past TCP") {
		t.Errorf("summary %q does not say the SYNs reach the blob host", rep.Verdict.Summary)
	}
}

func TestTraceFinding(t *testing.T) {
	tests := []struct {
		tr   report.Trace
		want string
	}{
		{report.Trace{Skipped: "the trace needs Linux"}, "not run: the trace needs Linux"},
		{report.Trace{MaxHops: 12, Hops: []report.TraceHop{{TTL: 1, Result: report.HopSilent}}}, "no hop answered, not even the first router"},
		{report.Trace{LastAnswered: 2, LastAddress: "10.0.0.1", FirstSilent: 3}, "the last hop that answered is hop 2 (10.0.0.1); hop 3 and every hop after it stayed silent"},
		{report.Trace{Reached: true, Hops: []report.TraceHop{{TTL: 3, Address: "10.0.9.9", Result: report.HopRefused}}}, "SYNs reach 10.0.9.9 at hop 3 (it answers refused)"},
	}
	for _, tt := range tests {
		if got := TraceFinding(&tt.tr); !strings.Contains(got, tt.want) {
			t.Errorf("TraceFinding(%+v) = %q, want it to say %q", tt.tr, got, tt.want)
		}
	}
}
