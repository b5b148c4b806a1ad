package printers

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
)

// printSweepTraces puts a failing node's trace beside a healthy node's
// (sweep with --probe-arg=--trace), marking the hop where they part.
func printSweepTraces(p *printer, c *report.SweepTraceCompare) {
	if c == nil {
		return
	}
	p.f("TRACE toward %s: %s (failing) beside %s (healthy)\n", c.Destination, c.Failing, c.Healthy)
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  TTL\t%s\t%s\t\n", strings.ToUpper(c.Failing), strings.ToUpper(c.Healthy))
	for _, r := range c.Rows {
		mark := ""
		if r.TTL == c.PartAt {
			mark = "<- they part here"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", r.TTL, r.Failing, r.Healthy, mark)
	}
	tw.Flush()
	p.f("\n")
}
