package report

import (
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// A hop's address is where the walk reached the host: the first address
// that connected, else the first tried (the one the verdict names), with
// no port, IPv6 as well as IPv4.
func TestSummarizeProbeHopAddress(t *testing.T) {
	r := &ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Endpoint: "blob.example"},
		Endpoints: []*Endpoint{
			{Host: "reg.example", Role: verdict.RoleRegistry, Status: StepPass, Addresses: []AddrResult{
				{Address: "10.0.0.1:443", Result: "timeout"}, {Address: "10.0.0.2:443", Result: "ok"}}},
			{Host: "blob.example", Role: verdict.RoleBlob, Status: StepFail, Code: verdict.ConnectTimeout, Addresses: []AddrResult{
				{Address: "[fd00:20::10]:443", Result: "timeout"}, {Address: "10.0.20.10:443", Result: "timeout"}}},
			{Host: "auth.example", Role: verdict.RoleAuth, Status: StepFail, Code: verdict.DNSNXDomain},
		},
		Steps: []Step{{Name: "connect", Endpoint: "blob.example", Status: StepFail}},
	}
	s := SummarizeProbe(r)
	want := map[string]string{"reg.example": "10.0.0.2", "blob.example": "fd00:20::10", "auth.example": ""}
	if len(s.Hops) != len(want) {
		t.Fatalf("hops = %+v, want %d", s.Hops, len(want))
	}
	for _, h := range s.Hops {
		if h.Address != want[h.Host] {
			t.Errorf("hop %s address = %q, want %q", h.Host, h.Address, want[h.Host])
		}
	}
}

func TestAddressHost(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.20.10:443":        "10.0.20.10",
		"[fd00::1]:443":         "fd00::1",
		"10.0.20.10":            "10.0.20.10",
		"fd00::1":               "fd00::1",
		"":                      "",
		"registry.example:5000": "registry.example",
	} {
		if got := AddressHost(in); got != want {
			t.Errorf("AddressHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// Finish records each lab run's exit code: its probe's verdict alone.
func TestLabFinishExitCodes(t *testing.T) {
	fail := &ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionRegistry}}
	r := NewLabReport(LabModeTest)
	r.Runs = []*LabRun{{Result: LabPass, Probe: fail}, {Result: LabError}, {Result: LabPass, Probe: &ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusOK}}}}
	r.Finish(1)
	for i, want := range []int{8, 0, 0} {
		if got := r.Runs[i].ExitCode; got != want {
			t.Errorf("run %d exit code = %d, want %d", i, got, want)
		}
	}
}
