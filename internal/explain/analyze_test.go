package explain

import (
	"testing"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Summarize records the exit code its counts imply, once, where the report
// is built: 0 with no failure, the dominant condition's, 2 without one.
func TestSummarizeExitCode(t *testing.T) {
	f := func(c verdict.Condition) report.ExplainFinding {
		return report.ExplainFinding{Code: verdict.Other, Condition: c}
	}
	tests := []struct {
		name     string
		findings []report.ExplainFinding
		want     int
	}{
		{"nothing failing", nil, 0},
		{"dns dominates", []report.ExplainFinding{f(verdict.ConditionDNS), f(verdict.ConditionDNS), f(verdict.ConditionRoute)}, 4},
		{"only a back-off, no direction", []report.ExplainFinding{f(verdict.ConditionNone)}, 2},
	}
	for _, tt := range tests {
		r := &report.ExplainReport{Findings: tt.findings}
		Summarize(r)
		if r.Summary.ExitCode != tt.want {
			t.Errorf("%s: Summarize exit code = %d, want %d", tt.name, r.Summary.ExitCode, tt.want)
		}
	}
}
