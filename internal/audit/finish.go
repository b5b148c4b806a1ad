package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Scopes of an audit verdict.
const (
	ScopeNone        = "none"
	ScopeSomeSubnets = "some-subnets"
	ScopeEverySubnet = "every-subnet"
)

// Finish completes a report whose Subnets hold their checks: each subnet's
// verdict, the subnets ordered failing first, the audit verdict and its
// scope, the failing-beside-healthy comparison and the merged changes.
func Finish(r *report.AuditReport) {
	for _, s := range r.Subnets {
		s.Verdict = Worst(s.Checks)
	}
	sort.SliceStable(r.Subnets, func(i, j int) bool {
		return rank(r.Subnets[i].Verdict) > rank(r.Subnets[j].Verdict)
	})
	r.Verdict = Decide(r.Subnets)
	r.Comparison = Compare(r.Subnets)
	r.Changes = Changes(r.Subnets)
	r.Warnings = dedupWarnings(r.Warnings)
}

// Decide is the audit's one answer over its subnets, with the scope rule of
// seed 003: a cause that fails every subnet alike (a permission, a VPC-wide
// setting, the registry) is one cause, not one subnet's path.
func Decide(subnets []*report.AuditSubnet) report.AuditVerdict {
	v := report.AuditVerdict{Status: report.CheckPass, Scope: ScopeNone}
	var failing []*report.AuditSubnet
	for _, s := range subnets {
		if WorseThan(s.Verdict, v.Status) {
			v.Status = s.Verdict
		}
		if s.Verdict == report.CheckFail {
			failing = append(failing, s)
			v.Failing = append(v.Failing, s.ID)
		} else {
			v.Passing = append(v.Passing, s.ID)
		}
	}
	switch {
	case len(subnets) == 0:
		v.Status = report.CheckWarn
		v.Summary = "no node subnets found: nothing to audit"
		return v
	case len(failing) == 0:
		if v.Status == report.CheckWarn {
			v.Summary = fmt.Sprintf("no subnet fails; %s with warnings", plural(countStatus(subnets, report.CheckWarn), "subnet"))
		} else {
			v.Summary = fmt.Sprintf("every node subnet passes (%s)", plural(len(subnets), "subnet"))
		}
		return v
	}
	if len(subnets) == 1 {
		// One subnet audited (a focused audit): say what fails there; an
		// identity fault is still everyone's.
		v.Scope = ScopeEverySubnet
		c := firstFailure(failing[0])
		for _, x := range failing[0].Checks {
			if x.Status == report.CheckFail && x.Condition == verdict.ConditionTLSIdentity {
				c = x
				break
			}
		}
		v.Condition = c.Condition
		v.Summary = fmt.Sprintf("%s fails (%s): %s", failing[0].ID, c.ID, c.Summary)
		if c.Condition == verdict.ConditionTLSIdentity {
			v.Summary += "; one cause for every subnet: identity, not network"
		}
		return v
	}
	if len(failing) == len(subnets) {
		v.Scope = ScopeEverySubnet
		if common := commonFailures(subnets); len(common) > 0 {
			c := common[0]
			v.Condition = c.Condition
			what := "one cause for every subnet, not one subnet's path"
			if c.Condition == verdict.ConditionTLSIdentity {
				what = "one cause for every subnet: identity, not network"
			}
			v.Summary = fmt.Sprintf("every subnet fails the same way (%s): %s: %s", c.ID, what, c.Summary)
			return v
		}
		c := firstFailure(failing[0])
		v.Condition = c.Condition
		v.Summary = fmt.Sprintf("every subnet fails, each for its own reason; %s: %s", failing[0].ID, c.Summary)
		return v
	}
	v.Scope = ScopeSomeSubnets
	c := firstFailure(failing[0])
	v.Condition = c.Condition
	v.Summary = fmt.Sprintf("only %s of %d %s (%s): %s; %s %s",
		plural(len(failing), "subnet"), len(subnets), isAre(len(failing), "fails", "fail"), strings.Join(v.Failing, ", "), c.Summary,
		strings.Join(v.Passing, ", "), isAre(len(v.Passing), "passes", "pass"))
	return v
}

// Condition is the audit's condition when it fails ("" otherwise): the
// CLI's exit code comes from it (internal/cli/exit.go).
func Condition(r *report.AuditReport) (verdict.Condition, bool) {
	if r.Verdict.Status != report.CheckFail {
		return "", false
	}
	return r.Verdict.Condition, true
}

// commonFailures are the checks, in the first subnet's order, that fail on
// every subnet.
func commonFailures(subnets []*report.AuditSubnet) []report.Check {
	var out []report.Check
	for _, c := range subnets[0].Checks {
		if c.Status != report.CheckFail {
			continue
		}
		all := true
		for _, s := range subnets[1:] {
			if st, ok := statusOf(s, c.ID); !ok || st != report.CheckFail {
				all = false
				break
			}
		}
		if all {
			out = append(out, c)
		}
	}
	// An identity fault is the seeds' textbook one-cause-for-all: name it
	// first when it is among the common ones.
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Condition == verdict.ConditionTLSIdentity && out[j].Condition != verdict.ConditionTLSIdentity
	})
	return out
}

func firstFailure(s *report.AuditSubnet) report.Check {
	for _, c := range s.Checks {
		if c.Status == report.CheckFail {
			return c
		}
	}
	return report.Check{}
}

func statusOf(s *report.AuditSubnet, id string) (report.CheckStatus, bool) {
	for _, c := range s.Checks {
		if c.ID == id {
			return c.Status, true
		}
	}
	return "", false
}

func checkOf(s *report.AuditSubnet, id string) (report.Check, bool) {
	for _, c := range s.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return report.Check{}, false
}

// Compare sets the first failing subnet beside a healthy one, check by
// check: a passing subnet that shares a pool with it if there is one, else
// the first passing subnet, else the first subnet that only warns. Nil when
// nothing fails or nothing is healthy.
func Compare(subnets []*report.AuditSubnet) *report.AuditComparison {
	var failing *report.AuditSubnet
	for _, s := range subnets {
		if s.Verdict == report.CheckFail {
			failing = s
			break
		}
	}
	if failing == nil {
		return nil
	}
	healthy := pickHealthy(subnets, failing)
	if healthy == nil {
		return nil
	}
	cmp := &report.AuditComparison{Failing: failing.ID, Healthy: healthy.ID}
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		f, fok := checkOf(failing, id)
		h, hok := checkOf(healthy, id)
		row := report.ComparisonRow{Check: id, FailingSummary: f.Summary, HealthySummary: h.Summary}
		if fok {
			row.Failing = f.Status
		}
		if hok {
			row.Healthy = h.Status
		}
		// A check that does not apply on one side (skip) beside a pass is
		// no difference worth reading.
		quiet := map[report.CheckStatus]bool{report.CheckSkip: true, report.CheckPass: true}
		row.Differs = (row.Failing != row.Healthy || fok != hok) && !(quiet[row.Failing] && quiet[row.Healthy])
		cmp.Rows = append(cmp.Rows, row)
	}
	for _, c := range failing.Checks {
		add(c.ID)
	}
	for _, c := range healthy.Checks {
		add(c.ID)
	}
	return cmp
}

func pickHealthy(subnets []*report.AuditSubnet, failing *report.AuditSubnet) *report.AuditSubnet {
	for _, want := range []report.CheckStatus{report.CheckPass, report.CheckWarn} {
		var first *report.AuditSubnet
		for _, s := range subnets {
			if s.Verdict != want {
				continue
			}
			if first == nil {
				first = s
			}
			if sharesPool(s, failing) {
				return s
			}
		}
		if first != nil {
			return first
		}
	}
	return nil
}

func sharesPool(a, b *report.AuditSubnet) bool {
	for _, p := range a.Pools {
		for _, q := range b.Pools {
			if p == q {
				return true
			}
		}
	}
	return false
}

// Changes merges the changes of every failing or warning check over the
// subnets (failing subnets first): one change per resource, action and
// command, with the subnets that need it.
func Changes(subnets []*report.AuditSubnet) []report.Change {
	type key struct{ resource, action, command, check string }
	idx := map[key]int{}
	var out []report.Change
	for _, s := range subnets {
		for _, c := range s.Checks {
			for _, ch := range c.Changes {
				if ch.Check == "" {
					ch.Check = c.ID
				}
				k := key{ch.Resource, ch.Action, ch.Command, ch.Check}
				i, ok := idx[k]
				if !ok {
					i = len(out)
					idx[k] = i
					ch.Subnets = nil
					out = append(out, ch)
				}
				out[i].Subnets = addUnique(out[i].Subnets, s.ID)
				for _, extra := range ch.Subnets {
					out[i].Subnets = addUnique(out[i].Subnets, extra)
				}
			}
		}
	}
	return out
}

func addUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func dedupWarnings(ws []report.AuditWarning) []report.AuditWarning {
	seen := map[report.AuditWarning]bool{}
	out := ws[:0:0]
	for _, w := range ws {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func countStatus(subnets []*report.AuditSubnet, st report.CheckStatus) int {
	n := 0
	for _, s := range subnets {
		if s.Verdict == st {
			n++
		}
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func isAre(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
