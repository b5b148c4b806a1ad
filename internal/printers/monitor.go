package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

// printMonitorFleet prints `pullpath monitor status`: one block per
// pool/zone/subnet, failing groups first, each node with its latest
// verdict. Wide adds each node's Event message.
func printMonitorFleet(w io.Writer, r *report.MonitorFleetReport, o Options) error {
	s := r.Summary
	if _, err := fmt.Fprintf(w, "pullpath monitor status: %s\n%d node(s): %d ok, %d failing, %d unknown\n", r.Source, s.Nodes, s.OK, s.Failing, s.Unknown); err != nil {
		return err
	}
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\nPOOL %s  ZONE %s  SUBNET %s  (%d ok, %d failing, %d unknown)\n", dashed(g.Pool), dashed(g.Zone), dashed(g.Subnet), g.OK, g.Failing, g.Unknown)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tSTATUS\tCODE\tCONDITION\tIMAGE HOST\tSINCE")
		for _, n := range g.Nodes {
			since := "-"
			if n.At != nil {
				since = n.At.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", n.Node, n.Status, dashed(n.Code), dashed(n.Condition), dashed(n.ImageHost), since)
			if o.Wide && n.Message != "" {
				fmt.Fprintf(tw, "  \t%s\t\t\t\t\n", strings.TrimSpace(n.Message))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	return nil
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
