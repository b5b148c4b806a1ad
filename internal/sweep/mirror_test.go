package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// node is a walked node of pool/zone/subnet, served by mirror (or the
// registry when mirror is ""), failing with code (or OK).
func node(name, pool, zone, subnet, mirror string, code verdict.Code, warnings ...verdict.Code) report.SweepNode {
	res := &report.SweepResult{Status: report.SweepOK, Verdict: verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}, Warnings: warnings}
	if mirror != "" {
		res.Mirror = true
		res.Hops = append(res.Hops, report.SweepHop{Host: mirror, Role: verdict.RoleMirror, Status: report.StepPass})
	}
	reg := report.SweepHop{Host: "registry.lab.test", Role: verdict.RoleRegistry, Status: report.StepPass}
	if code != verdict.OK {
		res.Status = report.SweepFail
		res.Verdict = verdict.Verdict{Status: verdict.StatusFail, Code: code, Condition: verdict.ConditionRoute, Endpoint: "registry.lab.test", Role: verdict.RoleRegistry}
		reg.Status, reg.Code = report.StepFail, code
	}
	res.Hops = append(res.Hops, reg)
	return report.SweepNode{PlannedNode: report.PlannedNode{Name: name, Pool: pool, Zone: zone, Subnet: subnet, Group: pool + "/" + zone + "/" + subnet}, Probe: res}
}

// A pool whose nodes have a hosts.toml mirror the other pool's lack, with
// the upstream broken: the pool separates them, and the advice names the
// mirror the failing nodes do not use.
func TestSweepNamesTheMirrorAPoolLacks(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		node("a-1", "cached", "z1", "s1", "mirror.lab.test:5000", verdict.OK),
		node("a-2", "cached", "z2", "s1", "mirror.lab.test:5000", verdict.OK),
		node("b-1", "plain", "z1", "s1", "", verdict.ConnectTimeout),
	}}
	judge(r)
	v := r.Verdict
	if v.Pattern != "pool" || v.Code != verdict.ConnectTimeout {
		t.Fatalf("verdict %s %s, want pool CONNECT_TIMEOUT: %s", v.Pattern, v.Code, v.Summary)
	}
	if len(v.Advice) == 0 || !strings.Contains(v.Advice[0], "The healthy nodes pull through hosts.toml mirror mirror.lab.test:5000, which the failing nodes do not use") {
		t.Errorf("advice[0] = %q, want the mirror the failing pool lacks", first(v.Advice))
	}
}

// The same, the cached pool's probes with --check-upstream: their OK is
// the cache's, and the verdict says so beside the failing pool.
func TestSweepMirrorPoolHidesUpstream(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		node("a-1", "cached", "z1", "s1", "mirror.lab.test:5000", verdict.OK, verdict.MirrorHidesUpstream),
		node("b-1", "plain", "z1", "s1", "", verdict.ConnectRefused),
	}}
	judge(r)
	v := r.Verdict
	if v.Pattern != "pool" || !strings.Contains(v.Summary, "A mirror hides a broken upstream on 1 node(s) (a-1, MIRROR_HIDES_UPSTREAM): mirror.lab.test:5000 served") {
		t.Errorf("verdict %s %q, want pool and the cached node's hidden upstream", v.Pattern, v.Summary)
	}
	if !strings.Contains(first(v.Advice), "which the failing nodes do not use") {
		t.Errorf("advice[0] = %q, want the mirror the failing pool lacks", first(v.Advice))
	}
}

// The same subnets, zones and pools on both sides: only the mirror
// separates them, and the failing side is the one through the mirror.
func TestSweepMirrorOnTheFailingPath(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		node("n-1", "p", "z", "s", "", verdict.OK),
		node("n-2", "p", "z", "s", "mirror.lab.test:5000", verdict.ConnectTimeout),
	}}
	judge(r)
	if r.Verdict.Pattern != "mirror" || !strings.Contains(first(r.Verdict.Advice), "The failing nodes pull through hosts.toml mirror mirror.lab.test:5000") {
		t.Errorf("pattern %q advice %q, want mirror and the failing nodes' mirror", r.Verdict.Pattern, first(r.Verdict.Advice))
	}
	// mirrors on both sides do not separate
	r = &report.SweepReport{Nodes: []report.SweepNode{
		node("n-1", "p", "z", "s", "mirror.lab.test:5000", verdict.OK),
		node("n-2", "p", "z", "s", "mirror.lab.test:5000", verdict.ConnectTimeout),
	}}
	judge(r)
	if r.Verdict.Pattern != "mixed" {
		t.Errorf("pattern %q, want mixed when the same mirror serves both", r.Verdict.Pattern)
	}
}

// Every node pulls, one of them from a cache whose upstream fails
// (--check-upstream's warning): the verdict stays ok and says so.
func TestSweepMirrorHidesUpstream(t *testing.T) {
	r := &report.SweepReport{Nodes: []report.SweepNode{
		node("a-1", "cached", "z1", "s1", "cache.lab.test:5000", verdict.OK, verdict.MirrorHidesUpstream),
		node("b-1", "plain", "z1", "s1", "", verdict.OK),
	}}
	judge(r)
	v := r.Verdict
	if v.Status != verdict.StatusOK || v.ExitCode != 0 {
		t.Fatalf("verdict %s exit %d, want ok 0: a hiding cache is a warning", v.Status, v.ExitCode)
	}
	if !strings.Contains(v.Summary, "A mirror hides a broken upstream on 1 node(s) (a-1, MIRROR_HIDES_UPSTREAM): cache.lab.test:5000 served") ||
		!strings.Contains(strings.Join(v.Advice, "\n"), "a node without the mirror") {
		t.Errorf("summary %q advice %q: want the hiding cache named", v.Summary, v.Advice)
	}
}

// Sweep's probe Pods ask for --check-upstream when told to.
func TestCheckUpstreamArg(t *testing.T) {
	for _, on := range []bool{false, true} {
		o := PodOptions{Image: "registry.lab.test/app:1", ProbeImage: "agent:1", Deadline: 60, CheckUpstream: on}
		args := o.ProbePod("p", report.PlannedNode{Name: "node-1"}).Spec.Containers[0].Args
		if slices.Contains(args, "--check-upstream") != on {
			t.Errorf("CheckUpstream %v: args %v", on, args)
		}
	}
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}
