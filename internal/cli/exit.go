package cli

// The exit policy: where pullpath's exit code comes from.
//
// The numbers are internal/exitcode's one table: a report's exit code is
// its dominant condition (its repair direction), so that a script or a Job
// can act on it without parsing output:
//
//	0  ok: nothing failing       3  route         6  tls-identity
//	1  usage or internal error   4  dns           7  image
//	2  a failure outside the     5  endpoint-set  8  registry
//	   seven repair directions   9  lab: a verdict differs from expect
//	                             10 proxy
//	                             11 audit: nothing could be checked
//
// How a command uses it:
//
//   - A usage, input or internal error is a plain error returned from
//     Complete, Validate or Run: Run prints it on one line and exits 1.
//     Never wrap it in an ExitError.
//   - A command that prints a report ends with `return o.finish(w, rep)`
//     (output.finish): it prints the report and returns the error that
//     makes Run exit with exitForReport(rep).
//   - The engine that builds a report records its exit code in it, once,
//     from internal/exitcode (explain.Summarize, the sweep's judge,
//     diagnose.Answer, the monitor fleet's build, each lab run's by the lab
//     runner's Judge); the CLI writes nothing into a report. The lab's
//     process exit code (a run's, or 9 for a mismatch, 1 for an error) is
//     the lab's own policy too: lab.ExitCode. A new report kind records
//     its code where it is built and adds one case to exitForReport.
//
// `pullpath --help`, `probe --help`, `explain --help`, `diagnose --help`,
// `monitor --help` and docs/verdicts.md render the table with the helpers
// below (its condition rows take their numbers from
// verdict.Condition.ExitCode, which the node-side pullpath-agent exits with
// too), and exit_test.go checks every command's help against it.

import (
	"fmt"
	"io"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
)

// Exit codes that are not a condition's.
const (
	exitOK       = exitcode.OK       // the pull works, nothing failing, every scenario as expected
	exitError    = exitcode.Error    // usage error, bad input, internal error
	exitOther    = exitcode.Other    // a failure that fits none of the repair directions
	exitMismatch = exitcode.Mismatch // lab run / lab test: a verdict differs from the scenario's expect
)

// exitRow is one row of the exit-code table.
type exitRow = exitcode.Row

// exitTable is every exit code pullpath gives, in order.
var exitTable = exitcode.Table

// exitForReport is the exit code of a report: the one its engine recorded
// (the lab's: lab.ExitCode), or, for a report that records none (probe,
// audit), its verdict's. A
// report kind it does not know is an internal error (exit 1, with a
// message saying to add it here).
func exitForReport(rep any) (int, error) {
	switch r := rep.(type) {
	case *report.ProbeReport:
		return exitcode.ForVerdict(r.Verdict), nil
	case *report.ExplainReport:
		return r.Summary.ExitCode, nil
	case *report.AuditReport:
		if c, failed := audit.Condition(r); failed {
			return exitcode.For(c), nil
		}
		if audit.NothingChecked(r) {
			return exitcode.Undecided, nil
		}
		return exitOK, nil
	case *report.DiagnoseReport:
		return r.Answer.Exit, nil
	case *report.LabReport:
		return lab.ExitCode(r)
	case *report.MonitorFleetReport:
		return r.Summary.ExitCode, nil
	case *report.SweepReport:
		return r.Verdict.ExitCode, nil
	}
	return exitError, fmt.Errorf("internal error: no exit policy for a %T (add a case to exitForReport in internal/cli/exit.go)", rep)
}

// finish prints rep in the chosen format and returns what makes Run exit
// with rep's code: nil for 0. Every command that prints a report ends with
// it.
func (o *output) finish(w io.Writer, rep any) error {
	code, err := exitForReport(rep)
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
