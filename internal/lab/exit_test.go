package lab_test

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
)

// The lab's exit policy: lab run exits with its run's recorded code, 9 on
// a mismatch, 1 (with the reason) when it could not run; lab test 9 before
// 1 before 0; lab demo 0.
func TestExitCode(t *testing.T) {
	labReport := func(mode string, runs ...*report.LabRun) *report.LabReport {
		r := report.NewLabReport(mode)
		r.Runs = runs
		r.Finish(1)
		return r
	}
	for _, tt := range []struct {
		name    string
		rep     *report.LabReport
		want    int
		wantErr string
	}{
		{"lab run pass: the code Judge recorded (its probe's: endpoint-set)", labReport(report.LabModeRun, &report.LabRun{Result: report.LabPass, ExitCode: 5}), 5, ""},
		{"lab run mismatch", labReport(report.LabModeRun, &report.LabRun{Result: report.LabMismatch, ExitCode: 3}), 9, ""},
		{"lab run error", labReport(report.LabModeRun, &report.LabRun{Result: report.LabError, Error: "no nft"}), 1, "no nft"},
		{"lab run with two runs", labReport(report.LabModeRun, &report.LabRun{Result: report.LabPass}, &report.LabRun{Result: report.LabPass}), 1, "lab run report with 2 runs, want 1"},
		{"lab test mismatch beats error", labReport(report.LabModeTest, &report.LabRun{Result: report.LabMismatch}, &report.LabRun{Result: report.LabError}), 9, ""},
		{"lab test error", labReport(report.LabModeTest, &report.LabRun{Result: report.LabPass}, &report.LabRun{Result: report.LabError}), 1, ""},
		{"lab test pass, a probe failed as expected", labReport(report.LabModeTest, &report.LabRun{Result: report.LabPass, ExitCode: 4}), 0, ""},
		{"lab demo shows a failure, exits 0", labReport(report.LabModeDemo, &report.LabRun{Result: report.LabUnchecked, ExitCode: 5}), 0, ""},
	} {
		got, err := lab.ExitCode(tt.rep)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: ExitCode = %d, %v; want %d, %q", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
