package lab_test

import (
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Judge records each run's exit code: its probe's verdict alone, whether
// or not the verdict matched expect; a run that never probed keeps 0.
func TestJudgeRecordsTheExitCode(t *testing.T) {
	registry := &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionRegistry}}
	for _, tt := range []struct {
		name   string
		expect *scenario.Expect
		probe  *report.ProbeReport
		want   int
		result report.LabResult
	}{
		{"registry failure as expected", &scenario.Expect{Status: verdict.StatusFail, Condition: verdict.ConditionRegistry}, registry, 8, report.LabPass},
		{"registry failure, expected ok", &scenario.Expect{Status: verdict.StatusOK}, registry, 8, report.LabMismatch},
		{"no expect", nil, registry, 8, report.LabUnchecked},
		{"ok", nil, &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusOK}}, 0, report.LabUnchecked},
	} {
		run := &report.LabRun{ExitCode: -1}
		lab.Judge(run, tt.expect, tt.probe)
		if run.ExitCode != tt.want || run.Result != tt.result {
			t.Errorf("%s: exit code %d, result %s; want %d, %s", tt.name, run.ExitCode, run.Result, tt.want, tt.result)
		}
	}
	// Finish leaves the recorded codes as they are, and a run that did not
	// probe at 0.
	rep := report.NewLabReport(report.LabModeTest)
	judged := &report.LabRun{}
	lab.Judge(judged, nil, registry)
	rep.Runs = []*report.LabRun{judged, {Result: report.LabError}}
	rep.Finish(1)
	if rep.Runs[0].ExitCode != 8 || rep.Runs[1].ExitCode != 0 || rep.Summary.Errors != 1 || rep.Summary.Unchecked != 1 {
		t.Errorf("after Finish: exit codes %d, %d, summary %+v; want 8, 0, one error and one unchecked", rep.Runs[0].ExitCode, rep.Runs[1].ExitCode, rep.Summary)
	}
}
