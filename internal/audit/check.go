package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

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

// Inputs is what a model tells RunAll about its contract files: a model
// records, from BeginCheck on, each file a check asked for that was not
// given (Absent), so that a check never fails on a file it did not have.
type Inputs interface {
	// BeginCheck forgets what the previous check asked for.
	BeginCheck()
	// Absent are the files not given that the check asked for since
	// BeginCheck, in the order asked.
	Absent() []string
	// Collect is the command that writes a file, for the warning.
	Collect(file string) string
}

// Leaning is a model whose warns keep their condition, the direction they
// lean (aws: diagnose puts the changes of a check leaning the answer's way
// first). Other models' warns carry none.
type Leaning interface {
	WarnsLean() bool
}

// RunAll runs every check on one subnet, in order, and returns the results
// with ID and Title filled in. A check that returns no status is a warn (a
// check must decide or say why it could not; never a silent pass).
//
// A condition is the direction of a failure: RunAll drops it from a pass
// or a skip, and from a warn unless the model is Leaning.
//
// When the model is Inputs, a check that fails after asking for a file
// that was not given is a warn naming the file and the command that
// collects it (what is present alone does not decide: an endpoint not seen
// may carry what a route does not); its changes are dropped, its summary
// kept as what the folder shows. A warn or fail lists the files it asked
// for in Missing.
func RunAll[M, S any](checks []Check[M, S], m M, s S) []report.CheckResult {
	out := make([]report.CheckResult, 0, len(checks))
	in, tracked := any(m).(Inputs)
	l, ok := any(m).(Leaning)
	leans := ok && l.WarnsLean()
	for _, c := range checks {
		if tracked {
			in.BeginCheck()
		}
		r := c.Run(m, s)
		if tracked {
			r = Undecided(r, in)
		}
		if r.ID == "" {
			r.ID = c.ID()
		}
		if r.Title == "" {
			r.Title = c.Title()
		}
		if r.Status == "" {
			r.Status = report.StepWarn
			if r.Summary == "" {
				r.Summary = "the check returned no result"
			}
		}
		if r.Status != report.StepFail && (r.Status != report.StepWarn || !leans) {
			r.Condition = ""
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
func rank(s report.StepStatus) int {
	switch s {
	case report.StepFail:
		return 3
	case report.StepWarn:
		return 2
	case report.StepPass:
		return 1
	}
	return 0 // skip, empty
}

// Worst is the worst status of checks: fail > warn > pass > skip. No checks
// (or only skipped ones) is a pass.
func Worst(checks []report.CheckResult) report.StepStatus {
	w := report.StepPass
	for _, c := range checks {
		if rank(c.Status) > rank(w) {
			w = c.Status
		}
	}
	return w
}

// WorseThan reports whether a is a worse status than b.
func WorseThan(a, b report.StepStatus) bool { return rank(a) > rank(b) }

// Undecided settles a check's result against the files it asked for that
// were not given: a failure becomes a warn naming them, and any warn or
// fail lists them in Missing.
func Undecided(r report.CheckResult, in Inputs) report.CheckResult {
	return settle(r, in.Absent(), in.Collect)
}

func settle(r report.CheckResult, absent []string, collect func(string) string) report.CheckResult {
	if len(absent) == 0 || r.Status == report.StepPass || r.Status == report.StepSkip {
		return r
	}
	for _, f := range absent {
		if !slices.Contains(r.Missing, f) {
			r.Missing = append(r.Missing, f)
		}
	}
	if r.Status != report.StepFail {
		return r
	}
	var need []string
	for _, f := range absent {
		need = append(need, fmt.Sprintf("%s (%s)", f, collect(f)))
	}
	r.Status = report.StepWarn
	r.Evidence = append([]string{"from what is given: " + r.Summary}, r.Evidence...)
	r.Summary = "cannot decide without " + strings.Join(need, ", ") + "; from what is given it would fail: " + r.Summary
	r.Changes = nil
	return r
}

// Given is a model that says which contract files it was given, for
// checks that state the files they need (NewNeeds).
type Given interface {
	Given(file string) bool
	// Collect is the command that writes a file, for the warning.
	Collect(file string) string
}

// NewNeeds makes a Check that states the files it needs for a subnet
// (needs may depend on what the model shows: the NAT gateways only when a
// host goes out by Cloud NAT): when the model is Given and one of them was
// not given, a failure is a warn naming it and its command, and any warn
// or fail lists it in Missing.
func NewNeeds[M, S any](id, title string, needs func(m M, s S) []string, run func(m M, s S) report.CheckResult) Check[M, S] {
	return funcCheck[M, S]{id: id, title: title, run: func(m M, s S) report.CheckResult {
		r := run(m, s)
		fs, ok := any(m).(Given)
		if !ok {
			return r
		}
		var absent []string
		for _, f := range needs(m, s) {
			if !fs.Given(f) && !slices.Contains(absent, f) {
				absent = append(absent, f)
			}
		}
		return settle(r, absent, fs.Collect)
	}}
}

// MissingResult is the warn of a check whose input file was not given:
// it names the file and the command that collects it.
func MissingResult(file, why, command string) report.CheckResult {
	r := Warn("", fmt.Sprintf("%s not given: cannot decide%s (%s)", file, why, command))
	r.Missing = []string{file}
	return r
}
