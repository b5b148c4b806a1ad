package audit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The builders name each object once, in the order given: the result's own
// resources, then each change's resource and what it touches.
func TestBuildersNameEachObjectOnce(t *testing.T) {
	c := WithChange(WithResources(WithHost(Fail(verdict.ConditionRoute, "no route", "rtb-1 has none"), "r.example"), "rtb-1", "", "rtb-1"),
		report.Change{Resource: "rtb-1", Touches: []string{"nat-1"}},
		report.Change{Resource: "nat-2", Touches: []string{"rtb-1"}})
	want := report.CheckResult{Status: report.StepFail, Condition: verdict.ConditionRoute, Host: "r.example", Summary: "no route", Evidence: []string{"rtb-1 has none"},
		Resources: []string{"rtb-1", "nat-1", "nat-2"},
		Changes:   []report.Change{{Resource: "rtb-1", Touches: []string{"nat-1"}}, {Resource: "nat-2", Touches: []string{"rtb-1"}}}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("builders (-want +got):\n%s", d)
	}
}
