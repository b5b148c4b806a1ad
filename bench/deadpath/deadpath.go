// Package deadpath measures the time to a verdict on a dead pull path: in
// a lab of network namespaces (internal/lab, built-in scenarios), the
// wall time of `pullpath probe` in the node's namespace until it names the
// failure, next to the time containerd (Debian's package, its CRI plugin
// driven by crictl the way the kubelet drives it, internal/crirun via
// internal/lab/labhook) takes to give up on the same path, cold, in the
// same lab right after the probe.
//
// It needs root (network namespaces), containerd and crictl.
package deadpath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// Scenario is one dead path: a built-in lab scenario.
type Scenario struct {
	Name string // built-in scenario name
	What string // the dead path, in words
}

// DefaultScenarios are the black-holed blob host, the black-holed registry
// and the NXDOMAIN registry name.
var DefaultScenarios = []Scenario{
	{Name: "ecr-blob-host-dropped", What: "blob host black-holed (nft drop on the router; registry and manifest answer)"},
	{Name: "ecr-sg-drops-443", What: "registry black-holed (nft drop of 443 to the endpoint)"},
	{Name: "ecr-resolver-no-private-zone", What: "registry name NXDOMAIN at the node's resolver"},
}

// Config says what to run.
type Config struct {
	PullpathBin string
	Scenarios   []Scenario // nil means DefaultScenarios
	Rounds      int
	// ConnectTimeout is the probe's --connect-timeout; 0 keeps pullpath's
	// default (5 s), which is what a user gets.
	ConnectTimeout time.Duration
	// PullTimeout bounds crictl's pull (default 100 s: containerd's own
	// 30 s dial timeout ends it first).
	PullTimeout time.Duration
	Log         io.Writer
}

// Run is one round of one scenario.
type Run struct {
	Scenario     string  `json:"scenario"`
	Round        int     `json:"round"`
	ProbeSec     float64 `json:"probeSec"`       // wall of the probe process in the node namespace
	ProbeCode    string  `json:"probeCode"`      // the verdict's code
	ProbeReport  float64 `json:"probeReportSec"` // the probe's own durationMs
	RuntimeSec   float64 `json:"runtimeSec"`     // crictl pull wall until containerd's error
	RuntimeCode  string  `json:"runtimeGrpcCode"`
	RuntimeMsg   string  `json:"runtimeMessage"`
	RuntimeTimed bool    `json:"runtimeTimedOut"` // crictl's timeout, not containerd, ended it
	Runtime      string  `json:"runtime"`
}

// Row sums up one scenario.
type Row struct {
	Scenario   string  `json:"scenario"`
	What       string  `json:"what"`
	ProbeSec   float64 `json:"probeMedianSec"`
	RuntimeSec float64 `json:"runtimeMedianSec"`
	Ratio      float64 `json:"ratio"` // probe / runtime
	ProbeCode  string  `json:"probeCode"`
	Runtime    string  `json:"runtime"`
	Message    string  `json:"runtimeMessage"`
}

// Result is the whole benchmark.
type Result struct {
	Date           time.Time       `json:"date"`
	Machine        measure.Machine `json:"machine"`
	ConnectTimeout string          `json:"probeConnectTimeout"`
	Runs           []Run           `json:"runs"`
	Rows           []Row           `json:"rows"`
}

// Measure runs every scenario Rounds times. It fails if a lab cannot be
// built, the probe gives no verdict, or containerd cannot be asked.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.PullpathBin == "" {
		return nil, errors.New("deadpath: PullpathBin is required")
	}
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("deadpath: Rounds %d, want at least 1", cfg.Rounds)
	}
	if cfg.Scenarios == nil {
		cfg.Scenarios = DefaultScenarios
	}
	if cfg.PullTimeout == 0 {
		cfg.PullTimeout = 100 * time.Second
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "deadpath: "+format+"\n", a...)
		}
	}
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine(), ConnectTimeout: "5s (pullpath's default)"}
	if cfg.ConnectTimeout > 0 {
		res.ConnectTimeout = cfg.ConnectTimeout.String()
	}
	for _, sc := range cfg.Scenarios {
		var probes, runtimes []float64
		row := Row{Scenario: sc.Name, What: sc.What}
		for round := 1; round <= cfg.Rounds; round++ {
			run, err := once(ctx, cfg, sc, round)
			if err != nil {
				return nil, err
			}
			logf("%s round %d: probe %.2fs (%s), containerd %.2fs (%s%s)", sc.Name, round, run.ProbeSec, run.ProbeCode, run.RuntimeSec, run.RuntimeCode, timedNote(run.RuntimeTimed))
			res.Runs = append(res.Runs, run)
			probes = append(probes, run.ProbeSec)
			runtimes = append(runtimes, run.RuntimeSec)
			row.ProbeCode, row.Runtime, row.Message = run.ProbeCode, run.Runtime, run.RuntimeMsg
		}
		row.ProbeSec, row.RuntimeSec = measure.Median(probes), measure.Median(runtimes)
		if row.RuntimeSec > 0 {
			row.Ratio = row.ProbeSec / row.RuntimeSec
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func timedNote(timed bool) string {
	if timed {
		return ", crictl's timeout ended it"
	}
	return ""
}

func once(ctx context.Context, cfg Config, sc Scenario, round int) (Run, error) {
	t, err := scenario.LoadBuiltin(sc.Name)
	if err != nil {
		return Run{}, fmt.Errorf("deadpath: %v", err)
	}
	// The probe runs with the user's defaults, not the scenario's short
	// test budgets.
	t.Probe.ConnectTimeout = scenario.Duration{Duration: cfg.ConnectTimeout}
	hook := &labhook.Hook{PullTimeout: cfg.PullTimeout}
	r := lab.Run(ctx, t, lab.Options{Self: cfg.PullpathBin, Hooks: []lab.Hook{hook}})
	if r.Error != "" {
		return Run{}, fmt.Errorf("deadpath: %s round %d: lab: %s", sc.Name, round, r.Error)
	}
	if r.Probe == nil || r.Verdict == nil {
		return Run{}, fmt.Errorf("deadpath: %s round %d: the probe gave no report", sc.Name, round)
	}
	run := Run{Scenario: sc.Name, Round: round, ProbeSec: r.Timings.ProbeMS / 1000, ProbeCode: string(r.Verdict.Code), ProbeReport: r.Probe.DurationMS / 1000}
	for _, c := range r.Checks {
		if c.Runtime == nil {
			continue
		}
		rt := c.Runtime
		if rt.Error != "" {
			return Run{}, fmt.Errorf("deadpath: %s round %d: containerd: %s", sc.Name, round, rt.Error)
		}
		if rt.OK {
			return Run{}, fmt.Errorf("deadpath: %s round %d: containerd pulled the image: the path is not dead", sc.Name, round)
		}
		run.RuntimeSec, run.RuntimeCode, run.RuntimeMsg, run.RuntimeTimed, run.Runtime = rt.DurationMS/1000, rt.GRPCCode, oneLine(rt.Message), rt.TimedOut, rt.Runtime
	}
	if run.Runtime == "" {
		return Run{}, fmt.Errorf("deadpath: %s round %d: the containerd check did not run", sc.Name, round)
	}
	return run, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// gist keeps the head and the tail of a long runtime message: the tail
// says what failed (i/o timeout, no such host).
func gist(s string) string {
	if len(s) <= 220 {
		return s
	}
	return s[:60] + " ... " + s[len(s)-150:]
}

// Markdown renders the per-round and summary tables.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, kernel %s; load average %s at the start. Probe connect budget: %s.\n\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.Kernel, r.Machine.LoadAvg, r.ConnectTimeout)
	b.WriteString("| dead path | pullpath probe s (median) | verdict | containerd + crictl s (median) | ratio probe/containerd | containerd's message |\n|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s (`%s`) | %.2f | %s | %.2f | %.2f (1/%.1f) | %s |\n", row.What, row.Scenario, row.ProbeSec, row.ProbeCode, row.RuntimeSec, row.Ratio, safeInv(row.Ratio), strings.ReplaceAll(gist(row.Message), "|", "\\|"))
	}
	b.WriteString("\n| scenario | round | probe s (process) | probe s (report) | containerd s | gRPC code | crictl timeout hit |\n|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.2f | %s | %v |\n", run.Scenario, run.Round, run.ProbeSec, run.ProbeReport, run.RuntimeSec, run.RuntimeCode, run.RuntimeTimed)
	}
	return b.String()
}

func safeInv(x float64) float64 {
	if x == 0 {
		return 0
	}
	return 1 / x
}
