package cli

// The exit policy: the one place pullpath decides its exit code.
//
// An exit code is the report's dominant condition (its repair direction),
// so that a script or a Job can act on it without parsing output:
//
//	0  ok: nothing failing       3  route         6  tls-identity
//	1  usage or internal error   4  dns           7  image
//	2  a failure outside the     5  endpoint-set  8  registry
//	   seven repair directions   9  lab: a verdict differs from expect
//	                             10 proxy
//
// How a command uses it:
//
//   - A usage, input or internal error is a plain error returned from
//     Complete, Validate or Run: Run prints it on one line and exits 1.
//     Never wrap it in an ExitError.
//   - A command that prints a report ends with `return o.finish(w, rep)`
//     (output.finish): it records the exit code in the report's own
//     exitCode fields, prints the report and returns the error that makes
//     Run exit with exitForReport(rep).
//   - A new report kind adds one case to exitForReport, deciding its code
//     from its dominant condition with exitFor (or exitForVerdict).
//
// The table below is the only source of the numbers (its condition rows
// take theirs from verdict.Condition.ExitCode, which the node-side
// pullpath-agent exits with too): `pullpath --help`,
// `probe --help`, `explain --help` and docs/verdicts.md are generated from
// it, and exit_test.go checks the printed help against it.

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Exit codes that are not a condition's.
const (
	exitOK       = 0 // the pull works, nothing failing, every scenario as expected
	exitError    = 1 // usage error, bad input, internal error
	exitOther    = 2 // a failure that fits none of the repair directions
	exitMismatch = 9 // lab run / lab test: a verdict differs from the scenario's expect
)

// exitRow is one row of the exit-code table.
type exitRow struct {
	Code      int
	Condition verdict.Condition // "" for the codes that are not a condition's
	Meaning   string
}

// exitTable is every exit code pullpath gives, in order.
var exitTable = []exitRow{
	{exitOK, "", "the pull works from this node (probe), nothing failing (explain), every scenario as expected (lab test)"},
	{exitError, "", "usage error, bad input, internal error"},
	{exitOther, "", "a failure that fits none of the repair directions"},
	{verdict.ConditionRoute.ExitCode(), verdict.ConditionRoute, verdict.ConditionRoute.Meaning()},
	{verdict.ConditionDNS.ExitCode(), verdict.ConditionDNS, verdict.ConditionDNS.Meaning()},
	{verdict.ConditionEndpointSet.ExitCode(), verdict.ConditionEndpointSet, verdict.ConditionEndpointSet.Meaning()},
	{verdict.ConditionTLSIdentity.ExitCode(), verdict.ConditionTLSIdentity, verdict.ConditionTLSIdentity.Meaning()},
	{verdict.ConditionImage.ExitCode(), verdict.ConditionImage, verdict.ConditionImage.Meaning()},
	{verdict.ConditionRegistry.ExitCode(), verdict.ConditionRegistry, verdict.ConditionRegistry.Meaning()},
	{exitMismatch, "", "`lab run` / `lab test`: a scenario's verdict differs from its `expect:` block"},
	{verdict.ConditionProxy.ExitCode(), verdict.ConditionProxy, verdict.ConditionProxy.Meaning()},
}

// exitFor is the exit code of a failure with condition c; a failure with
// no condition, or one this table does not know, gives exitOther.
func exitFor(c verdict.Condition) int {
	for _, r := range exitTable {
		if r.Condition != "" && r.Condition == c {
			return r.Code
		}
	}
	return exitOther
}

// exitForVerdict is the exit code of one verdict: 0 when the pull works,
// else its condition's.
func exitForVerdict(v verdict.Verdict) int {
	if v.Status == verdict.StatusOK {
		return exitOK
	}
	return exitFor(v.Condition)
}

// exitForReport is the exit code of a report, from its dominant condition.
// A report kind it does not know is an internal error (exit 1, with a
// message saying to add it here).
func exitForReport(rep any) (int, error) {
	switch r := rep.(type) {
	case *report.ProbeReport:
		return exitForVerdict(r.Verdict), nil
	case *report.ExplainReport:
		if r.Summary.Failures == 0 {
			return exitOK, nil
		}
		return exitFor(r.Summary.DominantCondition), nil
	case *report.AuditReport:
		if c, failed := audit.Condition(r); failed {
			return exitFor(c), nil
		}
		return exitOK, nil
	case *report.DiagnoseReport:
		switch r.Answer.Status {
		case report.AnswerOK, report.AnswerNothing:
			return exitOK, nil
		}
		return exitFor(r.Answer.Condition), nil
	case *report.LabReport:
		return exitForLab(r)
	case *report.MonitorFleetReport:
		if r.Summary.Failing == 0 {
			return exitOK, nil
		}
		return exitFor(r.Summary.DominantCondition), nil
	case *report.SweepReport:
		switch {
		case r.Verdict.Status == verdict.StatusOK:
			return exitOK, nil
		case r.Verdict.Failed == 0:
			return exitOther, nil // only nodes without an answer
		}
		return exitFor(r.Verdict.Condition), nil
	}
	return exitError, fmt.Errorf("internal error: no exit policy for a %T (add a case to exitForReport in internal/cli/exit.go)", rep)
}

// exitForLab: lab demo shows; it exits 0 when it could show both paths.
// lab run exits with its probe's code, unless the lab could not run (1,
// with the reason) or the verdict differs from expect (9). lab test exits 9
// when a verdict differed, else 1 when a scenario could not run, else 0.
func exitForLab(r *report.LabReport) (int, error) {
	switch r.Mode {
	case report.LabModeRun:
		if len(r.Runs) != 1 {
			return exitError, fmt.Errorf("internal error: lab run report with %d runs, want 1", len(r.Runs))
		}
		run := r.Runs[0]
		switch run.Result {
		case report.LabError:
			return exitError, errors.New(run.Error)
		case report.LabMismatch:
			return exitMismatch, nil
		}
		return labRunExit(run), nil
	case report.LabModeTest:
		switch {
		case r.Summary.Mismatch > 0:
			return exitMismatch, nil
		case r.Summary.Errors > 0:
			return exitError, nil
		}
	}
	return exitOK, nil
}

// labRunExit is the exit code of one lab run's probe (0 when it has none).
func labRunExit(run *report.LabRun) int {
	if run.Probe == nil {
		return exitOK
	}
	return exitForVerdict(run.Probe.Verdict)
}

// recordExit writes the exit code into the report fields that show it
// (explain's summary; each lab run, the code its probe alone would give),
// so every output format says what the process exits with.
func recordExit(rep any, code int) {
	switch r := rep.(type) {
	case *report.ExplainReport:
		r.Summary.ExitCode = code
	case *report.DiagnoseReport:
		r.Answer.Exit = code
		// The reports it holds say what they alone would exit with.
		if r.Explain != nil {
			c, _ := exitForReport(r.Explain)
			recordExit(r.Explain, c)
		}
		if r.Sweep != nil {
			c, _ := exitForReport(r.Sweep)
			recordExit(r.Sweep, c)
		}
	case *report.MonitorFleetReport:
		r.Summary.ExitCode = code
	case *report.SweepReport:
		r.Verdict.ExitCode = code
	case *report.LabReport:
		for _, run := range r.Runs {
			run.ExitCode = labRunExit(run)
		}
	}
}

// finish records the exit code in rep, prints rep in the chosen format and
// returns what makes Run exit with rep's code: nil for 0. Every command
// that prints a report ends with it.
func (o *output) finish(w io.Writer, rep any) error {
	code, err := exitForReport(rep)
	recordExit(rep, code)
	if perr := o.render(w, rep); perr != nil {
		return perr
	}
	return exitWith(code, err)
}

// exitWith is the error that makes Run exit with code, printing err when
// it is not nil; nil when code is 0.
func exitWith(code int, err error) error {
	switch {
	case code == exitOK && err == nil:
		return nil
	case code == exitError && err != nil:
		return err
	}
	return &ExitError{Code: code, Err: err}
}

// exitHelp renders rows of the table for --help, one line each.
func exitHelp(rows ...exitRow) string {
	var b strings.Builder
	for _, r := range rows {
		meaning := strings.ReplaceAll(r.Meaning, "`", "")
		if r.Condition != "" {
			fmt.Fprintf(&b, "  %d  %-13s %s\n", r.Code, r.Condition, meaning)
		} else {
			fmt.Fprintf(&b, "  %d  %s\n", r.Code, meaning)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// exitConditions lists the condition codes in one line for prose help:
// "3 route, 4 dns, ...".
func exitConditions() string {
	var parts []string
	for _, r := range exitTable {
		if r.Condition != "" {
			parts = append(parts, fmt.Sprintf("%d %s", r.Code, r.Condition))
		}
	}
	return strings.Join(parts, ", ")
}

// exitRows returns the rows of the table with the given codes, in the
// table's order.
func exitRows(codes ...int) []exitRow {
	var out []exitRow
	for _, r := range exitTable {
		for _, c := range codes {
			if r.Code == c {
				out = append(out, r)
			}
		}
	}
	return out
}

// conditionRows are the rows of the repair directions.
func conditionRows() []exitRow {
	var out []exitRow
	for _, r := range exitTable {
		if r.Condition != "" {
			out = append(out, r)
		}
	}
	return out
}

// exitMarkdown renders the table for docs/verdicts.md.
func exitMarkdown() string {
	var b strings.Builder
	b.WriteString("| exit | condition | meaning |\n|---|---|---|\n")
	for _, r := range exitTable {
		cond := " " + string(r.Condition) + " "
		if r.Condition == "" {
			cond = " "
		}
		fmt.Fprintf(&b, "| %d |%s| %s |\n", r.Code, cond, r.Meaning)
	}
	return b.String()
}
