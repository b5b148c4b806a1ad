package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	explaincluster "github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// Run is lab.Run and lab.Up for a scenario with a cluster section (the
// lab.ClusterRunner the CLI passes in lab.Options.Cluster): the lab and
// the cluster, the probe from node.host (checked against expect:), the
// workload's story and explain's reading of the cluster (checked against
// cluster.expect, as the check "cluster").
func Run(ctx context.Context, t *scenario.Scenario, o lab.Options) (*report.LabRun, *lab.KeptRun) {
	start := time.Now()
	r := lab.NewRun(t)
	fail := func(err error) { lab.Fail(r, err) }
	c, err := Start(ctx, t, Options{Self: o.Self, Keep: o.Keep, Progress: o.Progress})
	r.Timings.BuildMS = msSince(start)
	if err != nil {
		fail(err)
		r.Timings.TotalMS = msSince(start)
		return r, nil
	}
	r.Node = c.Prefix + t.Node.Host
	kept := c.kept
	defer func() {
		if !o.Keep {
			td := time.Now()
			if o.KeepLogs {
				r.LogDir = c.SaveLogs(o.LogRoot)
			}
			if err := c.Close(); err != nil && r.Error == "" {
				fail(fmt.Errorf("teardown: %v", err))
			}
			r.Timings.TeardownMS = msSince(td)
		}
		r.Timings.TotalMS = msSince(start)
	}()
	for _, img := range o.Images {
		if err := c.ImportImage(ctx, img); err != nil {
			fail(fmt.Errorf("import %s: %v", img, err))
			return r, kept
		}
	}
	if o.NoProbe {
		// lab up: the workload's story runs, then the cluster stays up
		r.Result = report.LabUnchecked
		if t.Cluster.Workload != nil {
			r.Checks = append(r.Checks, c.clusterCheck(ctx))
			if kept != nil {
				// the scale-up added nodes
				kept.Nodes = c.NodeNames()
				lab.SaveKept(kept)
			}
		}
		return r, kept
	}
	phase := time.Now()
	rep, err := c.lab.Probe(ctx)
	r.Timings.ProbeMS = msSince(phase)
	if err != nil {
		fail(err)
		return r, kept
	}
	r.Probe = rep
	lab.Judge(r, t.Expect, rep)
	if t.Cluster.Workload != nil {
		check := c.clusterCheck(ctx)
		r.Checks = append(r.Checks, check)
		if !check.OK {
			r.Mismatches = append(r.Mismatches, "check cluster: "+check.Detail)
			r.Result = report.LabMismatch
		} else if r.Result == report.LabUnchecked {
			r.Result = report.LabPass
		}
	}
	if ctx.Err() != nil && r.Result != report.LabPass {
		fail(fmt.Errorf("interrupted: %v", ctx.Err()))
	}
	return r, kept
}

// clusterCheck runs the workload and explain, and compares them with
// cluster.expect.
func (c *Cluster) clusterCheck(ctx context.Context) report.LabCheck {
	start := time.Now()
	ch := report.LabCheck{Name: "cluster"}
	done := func(ok bool, detail string) report.LabCheck {
		ch.OK, ch.Detail, ch.DurationMS = ok, redact.String(detail), msSince(start)
		return ch
	}
	states, err := c.RunWorkload(ctx)
	if err != nil {
		return done(false, err.Error())
	}
	c.dumpWorkload(ctx)
	rep, err := c.Explain(ctx)
	if err != nil {
		return done(false, "explain: "+err.Error())
	}
	mism := Check(c.scen.Cluster.Expect, states, rep)
	summary := summarizeCluster(states, rep)
	if len(mism) > 0 {
		return done(false, strings.Join(mism, "; ")+" ("+summary+")")
	}
	return done(true, summary)
}

// Explain runs `pullpath explain deployment/NAME` against the cluster.
func (c *Cluster) Explain(ctx context.Context) (*report.ExplainReport, error) {
	ns, name := c.WorkloadName()
	return explaincluster.Explain(ctx, c.Client, explaincluster.Target{Kind: "deployment", Name: name, Namespace: ns}, explaincluster.Options{})
}

func summarizeCluster(states map[string]ReplicaState, rep *report.ExplainReport) string {
	var parts []string
	fh := failingHosts(states)
	parts = append(parts, fmt.Sprintf("%d replicas, failing on [%s]", len(states), strings.Join(fh, " ")))
	if rep != nil {
		for _, g := range rep.Groups {
			parts = append(parts, fmt.Sprintf("explain: %s %s %s pattern %s: %s", g.Condition, g.Code, g.Endpoint, g.Pattern, g.Verdict))
		}
		if len(rep.Groups) == 0 {
			parts = append(parts, fmt.Sprintf("explain: %d failures", rep.Summary.Failures))
		}
	}
	return strings.Join(parts, "; ")
}

// Check compares the replicas and explain's report with a cluster expect
// block, one line per difference.
func Check(e *scenario.ClusterExpect, states map[string]ReplicaState, rep *report.ExplainReport) []string {
	if e == nil {
		return nil
	}
	var out []string
	got := failingHosts(states)
	want := append([]string(nil), e.FailingNodes...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		out = append(out, fmt.Sprintf("failing nodes: want [%s], got [%s]", strings.Join(want, " "), strings.Join(got, " ")))
	}
	x := e.Explain
	if x == nil || rep == nil {
		return out
	}
	if x.ExitCode != nil && rep.Summary.ExitCode != *x.ExitCode {
		out = append(out, fmt.Sprintf("explain exit code: want %d, got %d", *x.ExitCode, rep.Summary.ExitCode))
	}
	if x.NoFailures {
		if rep.Summary.Failures != 0 {
			out = append(out, fmt.Sprintf("explain: want no pull failure, got %d", rep.Summary.Failures))
		}
		return out
	}
	if len(rep.Groups) != 1 {
		return append(out, fmt.Sprintf("explain: want one group for the workload's image, got %d", len(rep.Groups)))
	}
	g := rep.Groups[0]
	cmp := func(field, want, got string) {
		if want != "" && want != got {
			if got == "" {
				got = "nothing"
			}
			out = append(out, fmt.Sprintf("explain %s: want %s, got %s", field, want, got))
		}
	}
	cmp("pattern", x.Pattern, g.Pattern)
	cmp("condition", x.Condition, string(g.Condition))
	cmp("cause", x.Cause, string(g.Cause))
	cmp("code", x.Code, string(g.Code))
	cmp("stage", x.Stage, string(g.Stage))
	cmp("endpoint", x.Endpoint, g.Endpoint)
	for _, s := range x.SeparatedBy {
		if !slices.Contains(g.SeparatedBy, s) {
			out = append(out, fmt.Sprintf("explain separatedBy: want %s among %v", s, g.SeparatedBy))
		}
	}
	if x.HealthyEvidence != "" {
		for _, n := range g.Nodes {
			if n.Status == report.NodeStatusOK && n.Evidence != x.HealthyEvidence {
				out = append(out, fmt.Sprintf("explain: healthy node %s evidence: want %q, got %q", n.Name, x.HealthyEvidence, n.Evidence))
			}
		}
	}
	// the group's advice and its findings' (where a message's own hint
	// is, e.g. an IPv4 address unreachable from an IPv6-only node)
	advice := append([]string(nil), g.Advice...)
	for _, f := range rep.Findings {
		if f.Image == g.Image {
			advice = append(advice, f.Advice...)
		}
	}
	for _, s := range x.Advises {
		found := false
		for _, a := range advice {
			found = found || strings.Contains(strings.ToLower(a), strings.ToLower(s))
		}
		if !found {
			out = append(out, fmt.Sprintf("explain advice: want a line saying %q, got %q", s, advice))
		}
	}
	for _, s := range x.Says {
		if !strings.Contains(strings.ToLower(g.Verdict), strings.ToLower(s)) {
			out = append(out, fmt.Sprintf("explain verdict: want it to say %q, got %q", s, g.Verdict))
		}
	}
	return out
}

// dumpWorkload writes the workload's pods and events, as the kubelets
// wrote them, to logs/workload.json (kept with --keep-logs), and each
// distinct pull-failure message to logs/kubelet-messages.txt.
func (c *Cluster) dumpWorkload(ctx context.Context) {
	ns, _ := c.WorkloadName()
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	evs, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	b, _ := json.MarshalIndent(map[string]any{"pods": pods.Items, "events": evs.Items}, "", "  ")
	os.WriteFile(filepath.Join(c.RunDir, "logs", "workload.json"), []byte(redact.String(string(b))), 0o644)
	var msgs []string
	seen := map[string]bool{}
	for _, e := range evs.Items {
		if e.Reason == "Failed" && strings.HasPrefix(e.Message, "Failed to pull image") && !seen[e.Message] {
			seen[e.Message] = true
			msgs = append(msgs, e.Message)
		}
	}
	os.WriteFile(filepath.Join(c.RunDir, "logs", "kubelet-messages.txt"), []byte(redact.String(strings.Join(msgs, "\n"))), 0o644)
}

func msSince(t time.Time) float64 { return units.MS(time.Since(t)) }
