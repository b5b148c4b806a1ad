package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
)

// printSweep renders a sweep for a person: the plan, the node x endpoint
// matrix grouped by pool/zone/subnet, the verdict, advice and next steps.
func printSweep(w io.Writer, r *report.SweepReport, o Options) error {
	p := &printer{w: w, color: o.Color}
	sweepHeader(p, r)
	sweepPlan(p, w, r, o)
	if len(r.Nodes) > 0 {
		sweepMatrix(p, w, r, o)
	}
	printSweepTraces(p, r.TraceCompare)
	sweepVerdict(p, r)
	return p.err
}

// sweepHeader prints the command, the image and where the run's Pods run.
func sweepHeader(p *printer, r *report.SweepReport) {
	title := "pullpath sweep"
	if r.DryRun {
		title += " --dry-run"
	}
	p.f("%s  %s\n", p.bold(title), r.Image)
	meta := []string{"probe image " + r.ProbeImage}
	if r.CanaryImage != "" {
		meta = append(meta, "canary "+r.CanaryImage)
	}
	meta = append(meta, "namespace "+r.Namespace, "run "+r.RunID)
	p.f("  %s\n\n", strings.Join(meta, "  "))
}

// sweepPlan prints the plan: the nodes chosen (every one with --dry-run or
// wide), the skipped ones and the pools with no node.
func sweepPlan(p *printer, w io.Writer, r *report.SweepReport, o Options) {
	pl := r.Plan
	p.f("PLAN  %s: %d of %d node(s) in %d group(s)", pl.Selection, len(pl.Chosen), pl.TotalNodes, pl.Groups)
	if pl.Selector != "" {
		p.f(", --nodes %s", pl.Selector)
	}
	p.f("; at most %d Pods at once\n", pl.Parallel)
	if r.DryRun || o.Wide {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  GROUP (pool/zone/subnet)\tNODE\tNOTE")
		for _, n := range pl.Chosen {
			var note []string
			if n.Cordoned {
				note = append(note, "cordoned (probed anyway)")
			}
			if n.HasImage != nil && *n.HasImage {
				note = append(note, "holds the image")
			}
			if strings.HasPrefix(n.SubnetSource, "InternalIP") {
				note = append(note, "subnet guessed from InternalIP")
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", n.Group, n.Name, strings.Join(note, ", "))
		}
		tw.Flush()
		if len(pl.Mounts) > 0 {
			p.f("  each probe Pod reads the node's %s (read-only)\n", strings.Join(pl.Mounts, ", "))
		}
	}
	if len(pl.Skipped) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range pl.Skipped {
			fmt.Fprintf(tw, "  skipped\t%s\t%s\t%s\n", s.Name, s.Reason, s.Detail)
		}
		tw.Flush()
	}
	for _, e := range pl.EmptyPools {
		p.f("  empty pool  %s  (%s): no node to walk from until it scales up\n", e.Pool, e.Source)
	}
	p.f("\n")
}

// sweepMatrix prints the node x endpoint matrix by group, then what a node's
// row cannot hold (reconciliations, messages, proxies).
func sweepMatrix(p *printer, w io.Writer, r *report.SweepReport, o Options) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"GROUP (pool/zone/subnet)", "NODE", "RESULT"}
	canary := r.CanaryImage != ""
	if canary {
		head = append(head, "CANARY")
	}
	for _, c := range r.Endpoints {
		head = append(head, fmt.Sprintf("%s (%s)", c.Host, c.Role))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	last := ""
	for _, n := range r.Nodes {
		g := n.Group
		if g == last {
			g = `"`
		}
		last = n.Group
		row := []string{g, n.Name, p.sweepResult(n.Status, n.Verdict.Code, sourceNote(n.Probe))}
		if canary {
			row = append(row, canaryCell(n.Canary))
		}
		cells := map[string]string{}
		if n.Probe != nil {
			for _, h := range n.Probe.Hops {
				cells[h.Host] = hopCell(h)
			}
		}
		for _, c := range r.Endpoints {
			v, ok := cells[c.Host]
			if !ok {
				v = "-"
			}
			row = append(row, v)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, n := range r.Nodes {
		switch {
		case n.Reconcile != "" && n.Agreement != "agree-ok":
			p.f("  %s: %s\n", n.Name, n.Reconcile)
		case n.Status == report.SweepNoAnswer && n.Probe != nil && n.Probe.Message != "":
			p.f("  %s: %s\n", n.Name, n.Probe.Message)
		case n.Probe != nil && n.Probe.Source == report.SourceProbeEvents:
			p.f("  %s: the probe image could not be pulled; the kubelet's Events are the verdict\n", n.Name)
		}
	}
	printSweepProxies(p, r.Nodes, o.Wide)
	printSweepRuntimes(p, r.Nodes, o.Wide)
	p.f("\n")
}

// sweepVerdict prints the verdict, its advice, the next steps and warnings.
func sweepVerdict(p *printer, r *report.SweepReport) {
	v := r.Verdict
	status := p.green("OK")
	if v.Status != "ok" {
		status = p.red("FAIL")
	}
	p.f("VERDICT  %s  %s\n", status, v.Summary)
	p.f("  %d ok, %d failing, %d without answer\n", v.OK, v.Failed, v.NoAnswer)
	if len(v.Advice) > 0 {
		p.f("\nADVICE\n")
		for _, a := range v.Advice {
			p.f("  - %s\n", a)
		}
	}
	if len(v.Next) > 0 {
		p.f("\nNEXT\n")
		for _, n := range v.Next {
			p.f("  %s\n", n)
		}
	}
	for _, wn := range r.Warnings {
		p.f("warning: %s\n", wn)
	}
}

func (p *printer) sweepResult(status report.SweepStatus, code any, note string) string {
	s := ""
	switch status {
	case report.SweepOK:
		s = "ok"
	case report.SweepFail:
		s = fmt.Sprint(code)
	default:
		s = "no answer"
	}
	if note != "" {
		s += " " + note
	}
	return s
}

func sourceNote(r *report.SweepResult) string {
	if r == nil {
		return ""
	}
	switch r.Source {
	case report.SourceProbeEvents:
		return "(kubelet Events: probe image)"
	case report.SourceProbeLogs:
		return "(from log)"
	}
	return ""
}

func canaryCell(c *report.SweepResult) string {
	if c == nil {
		return "-"
	}
	switch c.Status {
	case report.SweepOK:
		if c.Cached != nil && *c.Cached {
			return "ok (cached)"
		}
		if c.Cached != nil {
			return "ok (fresh)"
		}
		return "ok"
	case report.SweepFail:
		return string(c.Verdict.Code)
	}
	return "no answer"
}

func hopCell(h report.SweepHop) string {
	switch h.Status {
	case report.StepPass:
		return "ok"
	case report.StepSkip, "":
		return "-"
	}
	s := string(h.Code)
	if h.Step != "" {
		s = h.Step + " " + s
	}
	if s == "" {
		s = string(h.Status)
	}
	return s
}

// printSweepProxies says how each node's walk went with its containerd's
// proxy settings and where they came from: with -o wide always, else when
// the nodes went different ways (one pool through a proxy, another direct).
func printSweepProxies(p *printer, nodes []report.SweepNode, wide bool) {
	ways := map[string]bool{}
	any := false
	for _, n := range nodes {
		if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents {
			continue
		}
		// "proxy HOST:PORT" or "direct"
		way := "direct"
		if f := strings.Fields(n.Probe.Proxy); len(f) > 1 && f[0] == "proxy" {
			way = "proxy " + f[1]
		}
		ways[way] = true
		any = any || n.Probe.Proxy != ""
	}
	if !any || !wide && len(ways) < 2 {
		return
	}
	for _, n := range nodes {
		if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents {
			continue
		}
		px := n.Probe.Proxy
		if px == "" {
			px = "direct: no proxy setting in containerd's environment or files"
		}
		p.f("  %s: %s\n", n.Name, px)
	}
}
