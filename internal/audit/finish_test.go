package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

type model struct{ denied map[string]bool }

var (
	routeCheck = New("route", "route to the registry", func(m model, s string) report.CheckResult {
		if m.denied["route:"+s] {
			return report.CheckResult{Status: report.StepFail, Condition: verdict.ConditionRoute, Summary: "rtb-" + s + " has no route",
				Changes: []report.Change{{Resource: "rtb-" + s, Action: "add the route"}}}
		}
		return report.CheckResult{Status: report.StepPass, Summary: "route ok"}
	})
	identityCheck = New("identity", "node role", func(m model, s string) report.CheckResult {
		if m.denied["identity"] {
			return report.CheckResult{Status: report.StepFail, Condition: verdict.ConditionTLSIdentity, Summary: "role lacks ecr:BatchGetImage",
				Changes: []report.Change{{Resource: "arn:aws:iam::1:role/node", Action: "attach AmazonEC2ContainerRegistryReadOnly", Command: "aws iam attach-role-policy"}}}
		}
		return report.CheckResult{Status: report.StepPass, Summary: "role ok"}
	})
	silentCheck = New("silent", "says nothing", func(model, string) report.CheckResult { return report.CheckResult{} })
)

func build(m model, subnets ...string) *report.AuditReport {
	r := &report.AuditReport{}
	for _, s := range subnets {
		r.Subnets = append(r.Subnets, &report.AuditSubnet{ID: s, Pools: []string{"ng"},
			Checks: RunAll([]Check[model, string]{routeCheck, identityCheck}, m, s)})
	}
	Finish(r, Focus{})
	return r
}

func TestRunAllFillsIDAndNeverPassesSilently(t *testing.T) {
	got := RunAll([]Check[model, string]{silentCheck, routeCheck}, model{denied: map[string]bool{"route:a": true}}, "a")
	if got[0].ID != "silent" || got[0].Status != report.StepWarn || got[0].Title != "says nothing" {
		t.Errorf("RunAll(silent) = %+v, want id silent, status warn", got[0])
	}
	if got[1].Changes[0].Check != "route" {
		t.Errorf("RunAll(route).Changes[0].Check = %q, want route", got[1].Changes[0].Check)
	}
}

type leaningModel struct{ model }

func (leaningModel) WarnsLean() bool { return true }

// A condition is the direction of a failure: RunAll drops it from a pass,
// a skip and (unless the model's warns lean) a warn.
func TestRunAllKeepsAConditionOnAFailure(t *testing.T) {
	checks := []Check[model, string]{}
	for _, st := range []report.StepStatus{report.StepFail, report.StepWarn, report.StepPass, report.StepSkip} {
		checks = append(checks, New(string(st), string(st), func(model, string) report.CheckResult {
			return report.CheckResult{Status: st, Condition: verdict.ConditionDNS, Summary: string(st)}
		}))
	}
	leaning := []Check[leaningModel, string]{}
	for _, c := range checks {
		leaning = append(leaning, New(c.ID(), c.Title(), func(m leaningModel, s string) report.CheckResult { return c.Run(m.model, s) }))
	}
	conds := func(rs []report.CheckResult) []verdict.Condition {
		var out []verdict.Condition
		for _, r := range rs {
			out = append(out, r.Condition)
		}
		return out
	}
	if got, want := conds(RunAll(checks, model{}, "a")), []verdict.Condition{verdict.ConditionDNS, "", "", ""}; !cmp.Equal(got, want) {
		t.Errorf("RunAll conditions = %q, want %q", got, want)
	}
	if got, want := conds(RunAll(leaning, leaningModel{}, "a")), []verdict.Condition{verdict.ConditionDNS, verdict.ConditionDNS, "", ""}; !cmp.Equal(got, want) {
		t.Errorf("RunAll conditions (warns lean) = %q, want %q", got, want)
	}
}

func TestWorst(t *testing.T) {
	tests := []struct {
		in   []report.StepStatus
		want report.StepStatus
	}{
		{nil, report.StepPass},
		{[]report.StepStatus{report.StepSkip}, report.StepPass},
		{[]report.StepStatus{report.StepPass, report.StepWarn}, report.StepWarn},
		{[]report.StepStatus{report.StepFail, report.StepWarn, report.StepPass}, report.StepFail},
	}
	for _, tt := range tests {
		var cs []report.CheckResult
		for _, s := range tt.in {
			cs = append(cs, report.CheckResult{Status: s})
		}
		if got := Worst(cs); got != tt.want {
			t.Errorf("Worst(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestOneSubnetFailsBesideHealthy(t *testing.T) {
	r := build(model{denied: map[string]bool{"route:b": true}}, "a", "b", "c")
	if r.Verdict.Scope != ScopeSomeSubnets || r.Verdict.Condition != verdict.ConditionRoute || r.Verdict.Status != report.StepFail {
		t.Fatalf("verdict = %+v, want some-subnets route fail", r.Verdict)
	}
	if r.Subnets[0].ID != "b" {
		t.Errorf("Subnets[0] = %s, want the failing subnet b first", r.Subnets[0].ID)
	}
	if !strings.Contains(r.Verdict.Summary, "only 1 subnet of 3 fails (b)") || !strings.Contains(r.Verdict.Summary, "rtb-b has no route") {
		t.Errorf("summary = %q", r.Verdict.Summary)
	}
	if diff := cmp.Diff([]string{"b"}, r.Verdict.Failing); diff != "" {
		t.Errorf("failing (-want +got):\n%s", diff)
	}
	if r.Comparison == nil || r.Comparison.Failing != "b" || r.Comparison.Healthy != "a" {
		t.Fatalf("comparison = %+v, want b beside a", r.Comparison)
	}
	want := []report.ComparisonRow{
		{Check: "route", Failing: report.StepFail, Healthy: report.StepPass, Differs: true, FailingSummary: "rtb-b has no route", HealthySummary: "route ok"},
		{Check: "identity", Failing: report.StepPass, Healthy: report.StepPass, FailingSummary: "role ok", HealthySummary: "role ok"},
	}
	if diff := cmp.Diff(want, r.Comparison.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if c, failed := Condition(r); !failed || c != verdict.ConditionRoute {
		t.Errorf("Condition = %q, %v; want route, true", c, failed)
	}
}

func TestIdentityFailsEverySubnetAlike(t *testing.T) {
	r := build(model{denied: map[string]bool{"identity": true, "route:b": true}}, "a", "b")
	if r.Verdict.Scope != ScopeEverySubnet || r.Verdict.Condition != verdict.ConditionTLSIdentity {
		t.Fatalf("verdict = %+v, want every-subnet tls-identity", r.Verdict)
	}
	if !strings.Contains(r.Verdict.Summary, "one cause for every subnet: identity, not network") || !strings.Contains(r.Verdict.Summary, "b: route (rtb-b), identity") {
		t.Errorf("summary = %q, want the identity named as every subnet's and b's route beside it", r.Verdict.Summary)
	}
	if r.Comparison != nil {
		t.Errorf("comparison = %+v, want nil (nothing healthy)", r.Comparison)
	}
	// One change for the role, naming both subnets; one for b's table.
	want := []report.Change{
		{Resource: "arn:aws:iam::1:role/node", Action: "attach AmazonEC2ContainerRegistryReadOnly", Command: "aws iam attach-role-policy", Check: "identity", Subnets: []string{"a", "b"}},
		{Resource: "rtb-b", Action: "add the route", Check: "route", Subnets: []string{"b"}},
	}
	if diff := cmp.Diff(want, r.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if c, failed := Condition(r); !failed || c != verdict.ConditionTLSIdentity {
		t.Errorf("Condition = %q, %v; want tls-identity, true", c, failed)
	}
}

func TestAllPass(t *testing.T) {
	r := build(model{}, "a", "b")
	if _, failed := Condition(r); failed || r.Verdict.Status != report.StepPass || r.Verdict.Scope != ScopeNone || len(r.Changes) != 0 {
		t.Errorf("verdict = %+v, changes %v, want pass none", r.Verdict, r.Changes)
	}
	if r.Verdict.Summary != "every node subnet passes (2 subnets)" {
		t.Errorf("summary = %q", r.Verdict.Summary)
	}
}

func TestNoSubnetsWarns(t *testing.T) {
	r := &report.AuditReport{}
	Finish(r, Focus{})
	if _, failed := Condition(r); failed || r.Verdict.Status != report.StepWarn || r.Verdict.Scope != ScopeNothing {
		t.Errorf("verdict = %+v, want warn, nothing-checked", r.Verdict)
	}
}

func TestEveryFailsDifferently(t *testing.T) {
	// route fails on both, each in its own table: two causes, not one
	// (issue 42: "every subnet fails the same way" was printed here).
	r := build(model{denied: map[string]bool{"route:a": true, "route:b": true}}, "a", "b")
	want := "every subnet fails, each for its own cause: a: route (rtb-a); b: route (rtb-b)"
	if r.Verdict.Scope != ScopeEverySubnet || r.Verdict.Summary != want {
		t.Errorf("verdict = %+v, want summary %q", r.Verdict, want)
	}
	// The same check on the same object everywhere is one cause.
	same := New("route", "route", func(m model, s string) report.CheckResult {
		return report.CheckResult{Status: report.StepFail, Condition: verdict.ConditionRoute, Summary: "vpc-1 has DNS off",
			Changes: []report.Change{{Resource: "vpc-1", Action: "turn DNS on"}}}
	})
	r = &report.AuditReport{}
	for _, s := range []string{"a", "b"} {
		r.Subnets = append(r.Subnets, &report.AuditSubnet{ID: s, Checks: RunAll([]Check[model, string]{same}, model{}, s)})
	}
	Finish(r, Focus{})
	if !strings.Contains(r.Verdict.Summary, "every subnet fails the same way (route): one cause for every subnet, not one subnet's path") {
		t.Errorf("summary = %q, want the same-way sentence", r.Verdict.Summary)
	}
}

func TestOneSubnetAudited(t *testing.T) {
	r := build(model{denied: map[string]bool{"route:a": true}}, "a")
	if r.Verdict.Summary != "a fails (route): rtb-a has no route" || strings.Contains(r.Verdict.Summary, "every subnet") {
		t.Errorf("summary = %q, want the one subnet's failure without the every-subnet sentence", r.Verdict.Summary)
	}
	r = build(model{denied: map[string]bool{"route:a": true, "identity": true}}, "a")
	if r.Verdict.Condition != verdict.ConditionTLSIdentity || !strings.Contains(r.Verdict.Summary, "identity, not network") {
		t.Errorf("verdict = %+v, want identity named first", r.Verdict)
	}
}
