// Package farpath measures what the far side of the path costs and how
// well it is timed (issue 38), in the lab's VPN scenarios (a vxlan tunnel
// of MTU 1400 between the nodes' VNet and an on-premises Harbor), each
// beside a peer in the same round:
//
//   - the MTU proof: `pullpath probe` on the black-holed tunnel
//     (vpn-mtu-blackhole) with its MTU test and with --mtu-budget 0 (the
//     plain TLS_HANDSHAKE_TIMEOUT); containerd on the same lab;
//   - the trace: the probe on a far router without the route back
//     (vpn-no-route-back) with --trace and without; containerd;
//   - the pace: on a 4 Mbit/s link (vpn-slow-link) and a lossy one
//     (vpn-lossy-link), the whole pull's time the probe projects against
//     containerd's real pull of the same image on the same link.
//
// It needs root (network namespaces), containerd and crictl.
package farpath

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// Config says what to run.
type Config struct {
	PullpathBin string
	Rounds      int
	Log         io.Writer
}

// Cost is one round of a scenario whose probe ran with a step and without
// it, and containerd beside.
type Cost struct {
	Scenario   string  `json:"scenario"`
	Round      int     `json:"round"`
	WithSec    float64 `json:"withSec"` // the probe process, with the step
	WithCode   string  `json:"withCode"`
	StepSec    float64 `json:"stepSec"` // the step's own duration in the report
	StepDetail string  `json:"stepDetail"`
	WithoutSec float64 `json:"withoutSec"` // the probe process, without the step
	Without    string  `json:"withoutCode"`
	RuntimeSec float64 `json:"runtimeSec"`
	RuntimeMsg string  `json:"runtimeMessage"`
	Timed      bool    `json:"runtimeTimedOut"` // crictl's deadline ended containerd's pull
}

// Pace is one round of a slow path: the probe's projection and
// containerd's real pull.
type Pace struct {
	Scenario    string  `json:"scenario"`
	Round       int     `json:"round"`
	ProbeSec    float64 `json:"probeSec"`
	ProjectedMS float64 `json:"projectedMs"`
	MBps        float64 `json:"mbps"`
	MaxGapMS    float64 `json:"maxGapMs"`
	RuntimeMS   float64 `json:"runtimeMs"`
	RuntimeOK   bool    `json:"runtimeOk"`
}

// Result is the whole benchmark.
type Result struct {
	Date    time.Time       `json:"date"`
	Machine measure.Machine `json:"machine"`
	Costs   []Cost          `json:"costs"`
	Paces   []Pace          `json:"paces"`
}

// costs are the scenarios whose probe runs with a step and without it:
// the flags that turn the step off.
var costs = []struct{ name, step, off string }{
	{"vpn-mtu-blackhole", "mtu", "--mtu-budget=0"},
	{"vpn-no-route-back", "trace", "--trace"},
}

// paces are the slow links.
var paces = []string{"vpn-slow-link", "vpn-lossy-link"}

// Measure runs every scenario Rounds times. It fails if a lab cannot be
// built, the probe gives no report, or containerd cannot be asked.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.PullpathBin == "" {
		return nil, errors.New("farpath: PullpathBin is required")
	}
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("farpath: Rounds %d, want at least 1", cfg.Rounds)
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "farpath: "+format+"\n", a...)
		}
	}
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine()}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, c := range costs {
			with, err := run(ctx, cfg, c.name, nil, true)
			if err != nil {
				return nil, err
			}
			without, err := run(ctx, cfg, c.name, func(t *scenario.Scenario) { toggle(t, c.off) }, false)
			if err != nil {
				return nil, err
			}
			row := Cost{Scenario: c.name, Round: round, WithSec: with.Timings.ProbeMS / 1000, WithCode: string(with.Verdict.Code),
				WithoutSec: without.Timings.ProbeMS / 1000, Without: string(without.Verdict.Code)}
			for _, s := range with.Probe.Steps {
				if s.Name == c.step {
					row.StepSec, row.StepDetail = s.DurationMS/1000, units.OneLine(s.Detail)
				}
			}
			if row.StepDetail == "" {
				return nil, fmt.Errorf("farpath: %s round %d: the probe ran no %s step", c.name, round, c.step)
			}
			rt, err := runtimeOf(with, c.name, round)
			if err != nil {
				return nil, err
			}
			row.RuntimeSec, row.RuntimeMsg, row.Timed = rt.DurationMS/1000, units.OneLine(rt.Message), rt.TimedOut
			logf("%s round %d: probe %.2fs (%s, %s step %.2fs) / without %.2fs (%s), containerd %.2fs", c.name, round, row.WithSec, row.WithCode, c.step, row.StepSec, row.WithoutSec, row.Without, row.RuntimeSec)
			res.Costs = append(res.Costs, row)
		}
		for _, name := range paces {
			r, err := run(ctx, cfg, name, nil, true)
			if err != nil {
				return nil, err
			}
			tr := r.Probe.Transfer
			if tr == nil || tr.Pace == nil || tr.Pace.ProjectedMS == 0 {
				return nil, fmt.Errorf("farpath: %s round %d: the probe projected no pull time", name, round)
			}
			rt, err := runtimeOf(r, name, round)
			if err != nil {
				return nil, err
			}
			p := Pace{Scenario: name, Round: round, ProbeSec: r.Timings.ProbeMS / 1000, ProjectedMS: tr.Pace.ProjectedMS, MBps: tr.MBps, MaxGapMS: tr.Pace.MaxGapMS,
				RuntimeMS: rt.DurationMS, RuntimeOK: rt.OK}
			logf("%s round %d: projected %.2fs, containerd %.2fs (ok %v)", name, round, p.ProjectedMS/1000, p.RuntimeMS/1000, p.RuntimeOK)
			res.Paces = append(res.Paces, p)
		}
	}
	return res, nil
}

// toggle turns a probe flag of the scenario off: removes it when the
// scenario has it (--trace), else adds it (--mtu-budget=0).
func toggle(t *scenario.Scenario, flag string) {
	if i := slices.Index(t.Probe.Args, flag); i >= 0 {
		t.Probe.Args = slices.Delete(t.Probe.Args, i, i+1)
		return
	}
	t.Probe.Args = append(t.Probe.Args, flag)
}

// run builds the scenario's lab (changed by edit), runs the probe and,
// with runtime, containerd after it.
func run(ctx context.Context, cfg Config, name string, edit func(*scenario.Scenario), runtime bool) (*report.LabRun, error) {
	t, err := scenario.LoadBuiltin(name)
	if err != nil {
		return nil, fmt.Errorf("farpath: %v", err)
	}
	if edit != nil {
		edit(t)
	}
	var hooks []lab.Hook
	if runtime {
		hooks = append(hooks, &labhook.Hook{})
	}
	r := lab.Run(ctx, t, lab.Options{Self: cfg.PullpathBin, Hooks: hooks})
	if r.Error != "" {
		return nil, fmt.Errorf("farpath: %s: lab: %s", name, r.Error)
	}
	if r.Probe == nil || r.Verdict == nil {
		return nil, fmt.Errorf("farpath: %s: the probe gave no report", name)
	}
	return r, nil
}

// runtimeOf is containerd's pull in r.
func runtimeOf(r *report.LabRun, name string, round int) (*report.RuntimePull, error) {
	for _, c := range r.Checks {
		if c.Runtime == nil {
			continue
		}
		if c.Runtime.Error != "" {
			return nil, fmt.Errorf("farpath: %s round %d: containerd: %s", name, round, c.Runtime.Error)
		}
		return c.Runtime, nil
	}
	return nil, fmt.Errorf("farpath: %s round %d: the containerd check did not run", name, round)
}

// Markdown renders the summary and per-round tables.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, kernel %s; load average %s at the start.\n\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.Kernel, r.Machine.LoadAvg)
	b.WriteString("| scenario | probe with the step s (median) | verdict | the step s (median) | probe without s (median) | verdict without | ratio with/without | containerd s (median) | ratio probe/containerd |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range costs {
		var with, step, without, rt []float64
		var last Cost
		for _, row := range r.Costs {
			if row.Scenario == c.name {
				with, step, without, rt = append(with, row.WithSec), append(step, row.StepSec), append(without, row.WithoutSec), append(rt, row.RuntimeSec)
				last = row
			}
		}
		if len(with) == 0 {
			continue
		}
		w, s, wo, cr := measure.Median(with), measure.Median(step), measure.Median(without), measure.Median(rt)
		timed := ""
		if last.Timed {
			timed = " (crictl's deadline)"
		}
		fmt.Fprintf(&b, "| `%s` (%s) | %.2f | %s | %.2f | %.2f | %s | %.2fx | %.2f%s | %.2f |\n", c.name, c.step, w, last.WithCode, s, wo, last.Without, ratio(w, wo), cr, timed, ratio(w, cr))
	}
	b.WriteString("\n| slow link | projected s (median) | containerd s (median) | ratio containerd/projected | rate MB/s | longest gap s |\n|---|---|---|---|---|---|\n")
	for _, name := range paces {
		var proj, rt, rate, gap []float64
		for _, p := range r.Paces {
			if p.Scenario == name {
				proj, rt, rate, gap = append(proj, p.ProjectedMS/1000), append(rt, p.RuntimeMS/1000), append(rate, p.MBps), append(gap, p.MaxGapMS/1000)
			}
		}
		if len(proj) == 0 {
			continue
		}
		pm, cm := measure.Median(proj), measure.Median(rt)
		fmt.Fprintf(&b, "| `%s` | %.2f | %.2f | %.2fx | %.2f | %.2f |\n", name, pm, cm, ratio(cm, pm), measure.Median(rate), measure.Median(gap))
	}
	b.WriteString("\n| scenario | round | with s | step s | without s | containerd s | containerd's message |\n|---|---|---|---|---|---|---|\n")
	for _, c := range r.Costs {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.2f | %.2f | %s |\n", c.Scenario, c.Round, c.WithSec, c.StepSec, c.WithoutSec, c.RuntimeSec, strings.ReplaceAll(gist(c.RuntimeMsg), "|", "\\|"))
	}
	b.WriteString("\n| slow link | round | probe s | projected s | containerd s | containerd ok |\n|---|---|---|---|---|---|\n")
	for _, p := range r.Paces {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.2f | %v |\n", p.Scenario, p.Round, p.ProbeSec, p.ProjectedMS/1000, p.RuntimeMS/1000, p.RuntimeOK)
	}
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// gist keeps the head and the tail of a long runtime message.
func gist(s string) string {
	if len(s) <= 160 {
		return s
	}
	return s[:50] + " ... " + s[len(s)-100:]
}
