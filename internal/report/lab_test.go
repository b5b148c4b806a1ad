package report

import (
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

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
