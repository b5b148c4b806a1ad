package lab

import (
	"errors"
	"fmt"

	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/report"
)

// ExitCode is the exit code of a lab report, the lab's own policy: lab
// demo shows, and exits 0 when it could show both paths. lab run exits
// with its probe's code (the run's, recorded by Judge), unless the lab
// could not run (1, with the reason) or the verdict differs from expect
// (9). lab test exits 9 when a verdict differed, else 1 when a scenario
// could not run, else 0.
func ExitCode(r *report.LabReport) (int, error) {
	switch r.Mode {
	case report.LabModeRun:
		if len(r.Runs) != 1 {
			return exitcode.Error, fmt.Errorf("internal error: lab run report with %d runs, want 1", len(r.Runs))
		}
		run := r.Runs[0]
		switch run.Result {
		case report.LabError:
			return exitcode.Error, errors.New(run.Error)
		case report.LabMismatch:
			return exitcode.Mismatch, nil
		}
		return run.ExitCode, nil
	case report.LabModeTest:
		switch {
		case r.Summary.Mismatch > 0:
			return exitcode.Mismatch, nil
		case r.Summary.Errors > 0:
			return exitcode.Error, nil
		}
	}
	return exitcode.OK, nil
}
