package audit

import (
	"slices"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The result builders every cloud's checks use: a status, a one-line
// summary naming the object, and the evidence read. The host, resources and changes
// are added with WithHost, WithResources and WithChange, so a result says plainly
// which objects it names.

// Pass is a check that holds.
func Pass(summary string, evidence ...string) report.CheckResult {
	return report.CheckResult{Status: report.StepPass, Summary: summary, Evidence: evidence}
}

// Skip is a check that does not apply (an S3 interface endpoint makes the
// gateway route moot).
func Skip(summary string) report.CheckResult {
	return report.CheckResult{Status: report.StepSkip, Summary: summary}
}

// Warn is a check that cannot decide (say what would decide it) or a risk
// that does not break the pull today; cond is the direction it leans, if
// any.
func Warn(cond verdict.Condition, summary string, evidence ...string) report.CheckResult {
	return report.CheckResult{Status: report.StepWarn, Condition: cond, Summary: summary, Evidence: evidence}
}

// Fail is a check that breaks the pull; cond is the repair direction.
func Fail(cond verdict.Condition, summary string, evidence ...string) report.CheckResult {
	return report.CheckResult{Status: report.StepFail, Condition: cond, Summary: summary, Evidence: evidence}
}

// WithResources adds the ids the result names, once each.
func WithResources(c report.CheckResult, ids ...string) report.CheckResult {
	for _, id := range ids {
		if id != "" && !slices.Contains(c.Resources, id) {
			c.Resources = append(c.Resources, id)
		}
	}
	return c
}

// WithChange adds changes and names their objects among the resources.
func WithChange(c report.CheckResult, chs ...report.Change) report.CheckResult {
	for _, ch := range chs {
		c.Changes = append(c.Changes, ch)
		c = WithResources(c, ch.Resource)
		c = WithResources(c, ch.Touches...)
	}
	return c
}

// WithHost names the pull host the result is about.
func WithHost(c report.CheckResult, host string) report.CheckResult {
	c.Host = host
	return c
}
