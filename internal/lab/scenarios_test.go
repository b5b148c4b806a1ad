package lab_test

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

var scenarioFilter = flag.String("scenarios", "", "comma-separated built-in scenarios to run (default all)")

// TestBuiltinScenarios is `pullpath lab test` over every built-in scenario:
// each verdict must match the scenario's expect block.
func TestBuiltinScenarios(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	var names []string
	if *scenarioFilter != "" {
		names = strings.Split(*scenarioFilter, ",")
	}
	all, err := scenario.LoadAll(names)
	if err != nil {
		t.Fatal(err)
	}
	// cluster scenarios need the Kubernetes binaries: TestClusterScenarios
	var topos []*scenario.Scenario
	for _, tp := range all {
		if tp.Cluster == nil {
			topos = append(topos, tp)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep := lab.Test(ctx, topos, 3, lab.Options{}, nil)
	for _, r := range rep.Runs {
		t.Run(r.Scenario, func(t *testing.T) {
			t.Logf("%s %.1fs build %.0fms services %.0fms probe %.0fms teardown %.0fms", r.Result, r.Timings.TotalMS/1000,
				r.Timings.BuildMS, r.Timings.ServicesMS, r.Timings.ProbeMS, r.Timings.TeardownMS)
			if r.Result != report.LabPass {
				var v string
				if r.Verdict != nil {
					v = string(r.Verdict.Status) + " " + string(r.Verdict.Condition) + " " + string(r.Verdict.Code) + " " + string(r.Verdict.Role) + ": " + r.Verdict.Summary
				}
				t.Errorf("lab run %s = %s (%s; verdict %s), want pass: %v", r.Scenario, r.Result, r.Error, v, r.Mismatches)
			}
			// ipv6-only-nat64's AAAA is unbound's DNS64 answer (the
			// scenario has only the A record), and the A address of a
			// family the node lacks is no unreachable address
			if r.Scenario == "ipv6-only-nat64" && r.Probe != nil {
				var got []string
				for _, ep := range r.Probe.Endpoints {
					if ep.Resolve != nil {
						for _, a := range ep.Resolve.Answers {
							got = append(got, a.Address)
						}
					}
				}
				if !slices.Contains(got, "2001:db8:64::a3d:a14") {
					t.Errorf("lab run %s: the registry resolved to %v, want the AAAA unbound's DNS64 synthesizes, 2001:db8:64::a3d:a14", r.Scenario, got)
				}
				if slices.Contains(r.Warnings, verdict.AddressUnreachable) {
					t.Errorf("lab run %s: warnings %v, want no ADDRESS_UNREACHABLE for the A address of a family the node lacks", r.Scenario, r.Warnings)
				}
			}
			checkPathScenario(t, r)
			// the failing step says what the verdict says (an IPv6-only
			// node's connect step once said CONNECT_UNREACHABLE under an
			// ADDRESS_FAMILY_UNUSABLE verdict)
			if r.Verdict != nil && r.Probe != nil && r.Verdict.Code == verdict.AddressFamilyUnusable {
				var codes []verdict.Code
				for _, st := range r.Probe.Steps {
					if st.Status == report.StepFail {
						codes = append(codes, st.Code)
					}
				}
				if len(codes) == 0 || codes[len(codes)-1] != r.Verdict.Code {
					t.Errorf("lab run %s: failing steps' codes %v, want the last to be the verdict's %s", r.Scenario, codes, r.Verdict.Code)
				}
			}
		})
	}
	t.Logf("%d scenarios in %.1fs", len(rep.Runs), rep.DurationMS/1000)
	for _, r := range rep.Runs {
		if p := labtest.RunPrefix(r); p != "" {
			if left := lab.Leftovers(p); len(left) > 0 {
				t.Errorf("after lab test, Leftovers(%q) of %s = %v, want none", p, r.Scenario, left)
			}
		}
	}
}
