package labhook_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/crirun"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

var (
	scenarioFilter = flag.String("scenarios", "", "comma-separated built-in scenarios to run (default all)")
	update         = flag.Bool("update", false, "write each runtime message as an explain fixture (internal/explain/testdata/runtime/lab-*.txt)")
	parallel       = flag.Int("parallel", 4, "scenarios at once")
)

// TestMain lets the test binary stand in for pullpath: the lab re-executes
// os.Executable() as `lab serve ...` and `probe ...` inside namespaces.
func TestMain(m *testing.M) { labtest.Main(m) }

// needRuntime skips (or with CI=true fails) when the lab or containerd
// cannot run here; it returns crictl's path.
func needRuntime(t *testing.T) string {
	t.Helper()
	reason := testenv.NetnsReason("nft", "sysctl", "containerd", "ctr")
	crictl := ""
	if reason == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		var err error
		if crictl, err = crirun.EnsureCrictl(ctx); err != nil {
			reason = err.Error()
		}
	}
	testenv.Unavailable(t, reason)
	return crictl
}

// TestRuntimeBesideProbe is `pullpath lab test --runtime containerd`: every
// built-in scenario, the probe and the real containerd pulling in the same
// node namespace; the runtime's outcome and explain's reading of its
// message must agree with the probe (or the scenario's expect.runtime),
// and nothing of containerd may be left afterwards.
func TestRuntimeBesideProbe(t *testing.T) {
	crictl := needRuntime(t)
	var names []string
	if *scenarioFilter != "" {
		names = strings.Split(*scenarioFilter, ",")
	}
	all, err := scenario.LoadAll(names)
	if err != nil {
		t.Fatal(err)
	}
	// Cluster scenarios pull with the real kubelet beside the probe
	// (internal/lab/cluster's tests): crictl beside it adds nothing.
	var topos []*scenario.Scenario
	for _, tp := range all {
		if tp.Cluster == nil {
			topos = append(topos, tp)
		}
	}
	hook := &labhook.Hook{Crictl: crictl}
	if *update {
		hook.FixtureDir = "../../explain/testdata/runtime"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep := lab.Test(ctx, topos, *parallel, lab.Options{Hooks: []lab.Hook{hook}}, nil)
	var table []string
	for _, r := range rep.Runs {
		t.Run(r.Scenario, func(t *testing.T) {
			if r.Result == report.LabError {
				t.Fatalf("lab run %s: %s", r.Scenario, r.Error)
			}
			var rc *report.LabCheck
			for i := range r.Checks {
				if r.Checks[i].Name == hook.Name() {
					rc = &r.Checks[i]
				}
			}
			if rc == nil || rc.Runtime == nil {
				t.Fatalf("lab run %s has no runtime check (checks %+v)", r.Scenario, r.Checks)
			}
			rt := rc.Runtime
			checkRuntimePace(t, r, rt)
			pv := "-"
			if r.Verdict != nil {
				pv = fmt.Sprintf("%s %s %s", r.Verdict.Status, r.Verdict.Condition, r.Verdict.Code)
			}
			ex := "-"
			if rt.Explain != nil {
				ex = fmt.Sprintf("%s %s (%s)", rt.Explain.Cause, rt.Explain.Code, rt.Explain.Condition)
			}
			table = append(table, fmt.Sprintf("%-32s probe %5.1fs %-40s | runtime %5.2fs %-16s %s | explain %s", r.Scenario,
				r.Timings.ProbeMS/1000, pv, rt.DurationMS/1000, rt.GRPCCode, labhook.Shorten(rt.Message, rt.Image), ex))
			if !rc.OK {
				t.Errorf("runtime check of %s = %s, want agreement", r.Scenario, rc.Detail)
			}
			if r.Result != report.LabPass {
				t.Errorf("lab run %s = %s, want pass: %v", r.Scenario, r.Result, r.Mismatches)
			}
		})
	}
	t.Logf("%d scenarios in %.1fs:\n%s", len(rep.Runs), rep.DurationMS/1000, strings.Join(table, "\n"))
	// Other lab runs may be live on this machine: look only at our runs'
	// folders (StateDir/PREFIX, the prefix starting the node's namespace).
	for _, r := range rep.Runs {
		if len(r.Node) < 10 || !strings.HasPrefix(r.Node, "ppl") {
			continue
		}
		dir := lab.StateDir + "/" + r.Node[:9]
		pids, err := crirun.ProcessesNaming(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) > 0 {
			t.Errorf("ProcessesNaming(%s) = %v after lab run %s, want nothing left", dir, pids, r.Scenario)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("run folder %s of %s: %v, want it removed", dir, r.Scenario, err)
		}
	}
}
