package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Lab report modes.
const (
	LabModeRun  = "run"  // lab run: one scenario
	LabModeTest = "test" // lab test: scenarios checked against their expect
	LabModeDemo = "demo" // lab demo: loopback, healthy and broken side by side
)

// LabResult is one lab run checked against its expect block.
type LabResult string

const (
	LabPass      LabResult = "pass"      // the verdict matched expect
	LabMismatch  LabResult = "mismatch"  // the verdict differed from expect
	LabError     LabResult = "error"     // the lab could not run the scenario
	LabUnchecked LabResult = "unchecked" // no expect block
)

// LabReport is what `pullpath lab run`, `lab test` and `lab demo` return.
type LabReport struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"` // LabReport
	Mode       string     `json:"mode"` // run | test | demo
	Runs       []*LabRun  `json:"runs"`
	Summary    LabSummary `json:"summary"`
	StartedAt  time.Time  `json:"startedAt"`
	DurationMS float64    `json:"durationMs"`
}

// LabSummary counts the runs by result.
type LabSummary struct {
	Total     int `json:"total"`
	Passed    int `json:"passed"`
	Mismatch  int `json:"mismatch"`
	Errors    int `json:"errors"`
	Unchecked int `json:"unchecked"`
	// Parallel is how many scenarios ran at once.
	Parallel int `json:"parallel,omitempty"`
}

// LabExpect is what a scenario's verdict must say; empty fields are not
// checked.
type LabExpect struct {
	Status    verdict.Status    `json:"status,omitempty"` // ok | fail
	Condition verdict.Condition `json:"condition,omitempty"`
	Cause     verdict.Cause     `json:"cause,omitempty"`
	Stage     verdict.Stage     `json:"stage,omitempty"`
	Code      verdict.Code      `json:"code,omitempty"`
	Role      verdict.Role      `json:"role,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"`
	Warnings  []verdict.Code    `json:"warnings,omitempty"` // codes that must be among the warnings
	// Runtime is what explain must read from the real runtime's message
	// where it cannot match the probe (lab --runtime containerd).
	Runtime *LabRuntimeExpect `json:"runtime,omitempty"`
}

// LabRun is one scenario run: the built lab, the probe's report from the
// node's namespace, and the check against expect.
type LabRun struct {
	Scenario   string           `json:"scenario"`
	Source     string           `json:"source,omitempty"` // builtin:NAME or a file path
	Summary    string           `json:"summary,omitempty"`
	Image      string           `json:"image,omitempty"`
	Node       string           `json:"node,omitempty"` // the node's namespace (lab run) or address (demo)
	Namespaces int              `json:"namespaces,omitempty"`
	Result     LabResult        `json:"result"` // pass | mismatch | error | unchecked
	Expect     *LabExpect       `json:"expect,omitempty"`
	Mismatches []string         `json:"mismatches,omitempty"`
	Error      string           `json:"error,omitempty"`
	Verdict    *verdict.Verdict `json:"verdict,omitempty"`
	Warnings   []verdict.Code   `json:"warnings,omitempty"`
	ExitCode   int              `json:"exitCode"` // the exit code of the probe's verdict alone (internal/exitcode), set by the lab runner (lab.Judge)
	Probe      *ProbeReport     `json:"probe,omitempty"`
	Checks     []LabCheck       `json:"checks,omitempty"` // results of runner hooks (runtime cross-check, ...)
	Timings    LabTimings       `json:"timings"`
	LogDir     string           `json:"logDir,omitempty"` // kept service logs (--keep-logs)
}

// LabCheck is the result of one extra check a runner hook made after the
// probe (for example the real container runtime's pull of the same image).
type LabCheck struct {
	Name       string  `json:"name"`
	OK         bool    `json:"ok"`
	Detail     string  `json:"detail,omitempty"`
	DurationMS float64 `json:"durationMs"`
	// Runtime is the real container runtime's pull (the containerd hook).
	Runtime *RuntimePull `json:"runtime,omitempty"`
}

// LabTimings are the durations of a run's phases, in milliseconds.
type LabTimings struct {
	BuildMS    float64 `json:"buildMs"`
	ServicesMS float64 `json:"servicesMs"`
	ProbeMS    float64 `json:"probeMs"`
	TeardownMS float64 `json:"teardownMs"`
	TotalMS    float64 `json:"totalMs"`
}

// NewLabReport returns an empty report of a mode.
func NewLabReport(mode string) *LabReport {
	return &LabReport{APIVersion: APIVersion, Kind: LabKind, Mode: mode, StartedAt: time.Now().UTC()}
}

// Finish counts the runs by result and sets the duration. A run's exit
// code is the lab runner's to record (lab.Judge), not the report's.
func (r *LabReport) Finish(parallel int) {
	r.Summary = LabSummary{Total: len(r.Runs), Parallel: parallel}
	for _, run := range r.Runs {
		switch run.Result {
		case LabPass:
			r.Summary.Passed++
		case LabMismatch:
			r.Summary.Mismatch++
		case LabError:
			r.Summary.Errors++
		default:
			r.Summary.Unchecked++
		}
	}
	r.DurationMS = units.MS(time.Since(r.StartedAt))
}

// OK reports whether no run mismatched or failed to run.
func (r *LabReport) OK() bool { return r.Summary.Mismatch == 0 && r.Summary.Errors == 0 }
