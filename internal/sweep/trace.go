package sweep

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/report"
)

// compareTraces puts a failing node's trace (probes run with --trace)
// beside a healthy node's trace to the same address and names the hop
// where they part: a hop that answers the healthy node and not the
// failing one has no route back to the failing node's subnet. A healthy
// node of the failing node's own subnet comes first, then of its pool,
// then any. It adds the finding to the verdict's advice.
func compareTraces(r *report.SweepReport) {
	for i := range r.Nodes {
		f := &r.Nodes[i]
		if f.Status != report.SweepFail || f.Probe == nil {
			continue
		}
		for _, ft := range f.Probe.Traces {
			if ft.Reached {
				continue
			}
			h, ht := healthyTrace(r, f, ft.Destination)
			if h == nil {
				continue
			}
			c := sideBySide(f.Name, h.Name, ft, ht)
			r.TraceCompare = c
			r.Verdict.Advice = append(r.Verdict.Advice, c.Finding)
			return
		}
	}
}

// healthyTrace finds a healthy node's trace to dst, preferring the
// failing node's subnet, then its pool.
func healthyTrace(r *report.SweepReport, f *report.SweepNode, dst string) (*report.SweepNode, report.TraceSummary) {
	var best *report.SweepNode
	var bestTrace report.TraceSummary
	rank := func(n *report.SweepNode) int {
		switch {
		case n.Subnet != "" && n.Subnet == f.Subnet:
			return 0
		case n.Pool != "" && n.Pool == f.Pool:
			return 1
		}
		return 2
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Status != report.SweepOK || n.Probe == nil {
			continue
		}
		for _, t := range n.Probe.Traces {
			if t.Destination == dst && (best == nil || rank(n) < rank(best)) {
				best, bestTrace = n, t
			}
		}
	}
	return best, bestTrace
}

// sideBySide lines two traces up by TTL and names where they part.
func sideBySide(failing, healthy string, ft, ht report.TraceSummary) *report.SweepTraceCompare {
	c := &report.SweepTraceCompare{Destination: ft.Destination, Failing: failing, Healthy: healthy}
	n := max(len(ft.Hops), len(ht.Hops))
	at := func(hops []string, i int) string {
		if i < len(hops) {
			return hops[i]
		}
		return "-"
	}
	// they part where one answers and the other does not; failing that,
	// where both answer from different routers past hop 1 (hop 1 is each
	// node's own gateway, whose address differs by subnet)
	differ := 0
	for i := range n {
		row := report.SweepTraceRow{TTL: i + 1, Failing: at(ft.Hops, i), Healthy: at(ht.Hops, i)}
		c.Rows = append(c.Rows, row)
		fs, hs := silent(row.Failing), silent(row.Healthy)
		if c.PartAt == 0 && fs != hs {
			c.PartAt = row.TTL
		}
		if differ == 0 && row.TTL > 1 && !fs && !hs && row.Failing != row.Healthy {
			differ = row.TTL
		}
	}
	if differ > 0 && (c.PartAt == 0 || differ < c.PartAt) {
		c.PartAt = differ
	}
	// rows past the last answer of either side, but one, say nothing
	answered := 0
	for _, r := range c.Rows {
		if !silent(r.Failing) || !silent(r.Healthy) {
			answered = r.TTL
		}
	}
	c.Rows = c.Rows[:min(len(c.Rows), answered+1)]
	if c.PartAt == 0 {
		c.Finding = fmt.Sprintf("--trace: %s and %s see the same hops toward %s", failing, healthy, ft.Destination)
		return c
	}
	row := c.Rows[c.PartAt-1]
	last := lastAnswer(ft.Hops[:min(c.PartAt-1, len(ft.Hops))])
	switch {
	case silent(row.Failing) && !silent(row.Healthy):
		c.Finding = fmt.Sprintf("--trace toward %s: the paths part at hop %d. %s answers the healthy node %s there and stays silent for %s%s: %s has no route back to %s's subnet (or drops what comes from it), and the far side's return path is what to fix",
			ft.Destination, c.PartAt, row.Healthy, healthy, failing, last, row.Healthy, failing)
	default:
		c.Finding = fmt.Sprintf("--trace toward %s: the paths part at hop %d: %s goes through %s, %s through %s%s",
			ft.Destination, c.PartAt, failing, row.Failing, healthy, row.Healthy, last)
	}
	return c
}

// silent says a hop of a trace summary gave no answer (or is past its
// end).
func silent(hop string) bool { return hop == "*" || hop == "!" || hop == "-" }

// lastAnswer names the last hop of hops that answered, for a message.
func lastAnswer(hops []string) string {
	for i := len(hops) - 1; i >= 0; i-- {
		if hops[i] != "*" && hops[i] != "!" {
			return fmt.Sprintf(" (its last hop that answered: %d, %s)", i+1, hops[i])
		}
	}
	return ""
}
