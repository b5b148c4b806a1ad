package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// printAudit prints a cloud audit (AWS, Azure or GCP: one shape) for a person:
// the verdict, the hosts and how they are reached, the subnets, the first
// failing subnet beside a healthy one check by check, every failing and
// warning check with the objects it names, the changes with their
// commands, the cost note and the warnings. Wide adds every check of every
// subnet, with its evidence.
func printAudit(w io.Writer, r *report.AuditReport, o Options) error {
	aw := &auditWriter{w: w}
	aw.verdict(r)
	aw.hosts(r)
	aw.subnets(r, o)
	aw.comparison(r)
	aw.checks(r, o)
	aw.changes(r)
	aw.cost(r)
	aw.warnings(r, o)
	return aw.err
}

// verdict prints the target, the focus and the verdict.
func (aw *auditWriter) verdict(r *report.AuditReport) {
	p := aw.printf
	t := r.Target
	where := []string{}
	for _, s := range []string{t.Region, t.Account, t.ResourceGrp, t.Network} {
		if s != "" {
			where = append(where, s)
		}
	}
	p("pullpath %s audit: cluster %s (%s), from %s\n", t.Cloud, t.Cluster, strings.Join(where, ", "), r.Source)
	if t.FocusSubnet != "" || t.FocusHost != "" {
		p("focused on subnet %s, host %s (probe verdict %s)\n", auditDash(t.FocusSubnet), auditDash(t.FocusHost), auditDash(t.ProbeVerdict))
	}
	v := r.Verdict
	head := strings.ToUpper(string(v.Status))
	if v.Condition != "" {
		head += " (" + string(v.Condition) + ", " + v.Scope + ")"
	} else if v.Scope != "" && v.Scope != "none" {
		head += " (" + v.Scope + ")"
	}
	p("\nVERDICT %s: %s\n", head, v.Summary)
}

// hosts prints the hosts of the pull and how each is reached.
func (aw *auditWriter) hosts(r *report.AuditReport) {
	p := aw.printf
	if len(r.Hosts) > 0 {
		p("\nHOSTS\n")
		tw := tabwriter.NewWriter(aw, 2, 4, 2, ' ', 0)
		for _, h := range r.Hosts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", h.Host, h.Role, auditDash(h.Via))
		}
		tw.Flush()
	}
}

// subnets prints the node subnets and their verdicts.
func (aw *auditWriter) subnets(r *report.AuditReport, o Options) {
	p := aw.printf
	p("\nSUBNETS\n")
	tw := tabwriter.NewWriter(aw, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  SUBNET\tZONE\tCIDR\tPOOLS\tNODES\tVERDICT\n")
	for _, s := range r.Subnets {
		id := s.ID
		if s.Name != "" && o.Wide {
			id += " (" + s.Name + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\n", id, auditDash(s.Zone), auditDash(s.CIDR), auditDash(strings.Join(s.Pools, ",")), s.Nodes, s.Verdict)
	}
	tw.Flush()
}

// comparison prints the failing subnet beside the healthy one, check by check.
func (aw *auditWriter) comparison(r *report.AuditReport) {
	p := aw.printf
	if c := r.Comparison; c != nil {
		p("\nFAILING BESIDE HEALTHY: %s | %s\n", c.Failing, c.Healthy)
		tw := tabwriter.NewWriter(aw, 2, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "    CHECK\tFAILING\tHEALTHY\n")
		for _, row := range c.Rows {
			mark := " "
			if row.Differs {
				mark = "*"
			}
			fmt.Fprintf(tw, "  %s %s\t%s\t%s\n", mark, row.Check, auditDash(string(row.Failing)), auditDash(string(row.Healthy)))
		}
		tw.Flush()
		for _, row := range c.Rows {
			if !row.Differs {
				continue
			}
			p("  * %s\n      %s: %s\n      %s: %s\n", row.Check, c.Failing, auditDash(row.FailingSummary), c.Healthy, auditDash(row.HealthySummary))
		}
	}
}

// checks prints the failing and warning checks (every check when wide).
func (aw *auditWriter) checks(r *report.AuditReport, o Options) {
	p := aw.printf
	printed := false
	for _, s := range r.Subnets {
		for _, c := range s.Checks {
			show := c.Status == report.StepFail || c.Status == report.StepWarn
			if !show && !o.Wide {
				continue
			}
			if !printed {
				if o.Wide {
					p("\nCHECKS\n")
				} else {
					p("\nFINDINGS\n")
				}
				printed = true
			}
			p("  %-4s  %s  %s: %s\n", strings.ToUpper(string(c.Status)), s.ID, c.ID, c.Summary)
			if len(c.Resources) > 0 && (show || o.Wide) {
				p("        resources: %s\n", strings.Join(c.Resources, ", "))
			}
			if o.Wide {
				for _, e := range c.Evidence {
					p("        - %s\n", e)
				}
			}
		}
	}
}

// changes prints the changes to make, with their commands.
func (aw *auditWriter) changes(r *report.AuditReport) {
	p := aw.printf
	if len(r.Changes) > 0 {
		p("\nCHANGES\n")
		for i, ch := range r.Changes {
			kind := ""
			if ch.Kind != "" {
				kind = " (" + ch.Kind + ")"
			}
			p("  %d. %s%s: %s\n", i+1, ch.Resource, kind, ch.Action)
			if len(ch.Touches) > 0 {
				p("     touches %s\n", strings.Join(ch.Touches, ", "))
			}
			p("     for %s on %s\n", ch.Check, auditSubnets(ch.Subnets))
			if ch.Command != "" {
				p("     $ %s\n", ch.Command)
			}
		}
	}
}

// cost prints the NAT cost note.
func (aw *auditWriter) cost(r *report.AuditReport) {
	p := aw.printf
	if c := r.Cost; c != nil {
		p("\nCOST (%s, %s x %d pulls/day = %.1f GB/month)\n", c.Region, units.Bytes(c.ImageBytes), c.PullsPerDay, c.GBPerMonth)
		tw := tabwriter.NewWriter(aw, 2, 4, 2, ' ', 0)
		for _, l := range c.Options {
			fmt.Fprintf(tw, "  %s\t$%.2f/month\t%s\n", l.Path, l.MonthlyUSD, l.Basis)
		}
		tw.Flush()
		if c.Note != "" {
			p("  %s\n", c.Note)
		}
		p("  prices: %s, as of %s\n", c.PriceSource, c.PriceAsOf)
	}
}

// warnings prints what the audit could not read.
func (aw *auditWriter) warnings(r *report.AuditReport, o Options) {
	p := aw.printf
	if len(r.Warnings) > 0 {
		p("\nWARNINGS\n")
		for _, wn := range r.Warnings {
			line := wn.Message
			if wn.File != "" && !strings.Contains(line, wn.File) {
				line = wn.File + ": " + line
			}
			p("  %s\n", line)
			if wn.Command != "" && o.Wide {
				p("    $ %s\n", wn.Command)
			}
		}
	}
}

func auditDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func auditSubnets(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	if len(ids) > 4 {
		return strings.Join(ids[:4], ", ") + fmt.Sprintf(" and %d more", len(ids)-4)
	}
	return strings.Join(ids, ", ")
}

// auditWriter keeps the first write error.
type auditWriter struct {
	w   io.Writer
	err error
}

func (e *auditWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return len(b), nil
	}
	n, err := e.w.Write(b)
	if err != nil {
		e.err = err
	}
	return n, nil
}

func (e *auditWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
