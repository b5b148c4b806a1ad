package audit

import "github.com/pullpath/pullpath/internal/report"

// Check is one audit check over a model M for a subnet S (kubeadm preflight's
// shape: ID plus Run). Run returns the check's result; Run fills Status,
// Summary, Evidence, Resources and, for a failure, Changes. ID and Title are
// filled from the check when Run leaves them empty.
type Check[M, S any] interface {
	ID() string
	Title() string
	Run(m M, s S) report.CheckResult
}

// New makes a Check from a function.
func New[M, S any](id, title string, run func(m M, s S) report.CheckResult) Check[M, S] {
	return funcCheck[M, S]{id: id, title: title, run: run}
}

type funcCheck[M, S any] struct {
	id, title string
	run       func(M, S) report.CheckResult
}

func (c funcCheck[M, S]) ID() string                      { return c.id }
func (c funcCheck[M, S]) Title() string                   { return c.title }
func (c funcCheck[M, S]) Run(m M, s S) report.CheckResult { return c.run(m, s) }

// RunAll runs every check on one subnet, in order, and returns the results
// with ID and Title filled in. A check that returns no status is a warn (a
// check must decide or say why it could not; never a silent pass).
func RunAll[M, S any](checks []Check[M, S], m M, s S) []report.CheckResult {
	out := make([]report.CheckResult, 0, len(checks))
	for _, c := range checks {
		r := c.Run(m, s)
		if r.ID == "" {
			r.ID = c.ID()
		}
		if r.Title == "" {
			r.Title = c.Title()
		}
		if r.Status == "" {
			r.Status = report.CheckWarn
			if r.Summary == "" {
				r.Summary = "the check returned no result"
			}
		}
		for i := range r.Changes {
			if r.Changes[i].Check == "" {
				r.Changes[i].Check = r.ID
			}
		}
		out = append(out, r)
	}
	return out
}

// rank orders statuses from best to worst.
func rank(s report.CheckStatus) int {
	switch s {
	case report.CheckFail:
		return 3
	case report.CheckWarn:
		return 2
	case report.CheckPass:
		return 1
	}
	return 0 // skip, empty
}

// Worst is the worst status of checks: fail > warn > pass > skip. No checks
// (or only skipped ones) is a pass.
func Worst(checks []report.CheckResult) report.CheckStatus {
	w := report.CheckPass
	for _, c := range checks {
		if rank(c.Status) > rank(w) {
			w = c.Status
		}
	}
	return w
}

// WorseThan reports whether a is a worse status than b.
func WorseThan(a, b report.CheckStatus) bool { return rank(a) > rank(b) }
