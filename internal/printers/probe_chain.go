package printers

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
)

// printChain renders the registry's hosts as containerd walks them: one
// row per host with its own steps, what became of it, how long containerd
// waits on it per request and how often; which host served each step; the
// fall-through cost against the runtime's limits; the upstream check.
func printChain(p *printer, c *report.HostChain, o Options) {
	if c == nil {
		return
	}
	title := "HOSTS (containerd's order"
	if c.Runtime == report.RuntimeCRIO {
		title = "SOURCES (CRI-O's order, containers/image"
	}
	if c.File != "" {
		title += ", " + c.File
	}
	p.f("%s\n", p.bold(title+")"))
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tHOST\tROLE\tCAPS\tSTEPS\tOUTCOME\tHOLD x TRIES")
	for i, h := range c.Hosts {
		role := string(h.Role)
		if h.Server {
			role += " (server)"
		}
		if h.Via != "" {
			role += ", " + h.Via
		}
		caps := strings.Join(h.Capabilities, ",")
		if h.SkipVerify {
			caps += " skip_verify"
		}
		if h.OverridePath {
			caps += " override_path"
		}
		u := h.URL
		if h.Repository != "" {
			u += "/" + h.Repository
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, u, role, caps, chainSteps(h.Steps), chainOutcome(h), chainHold(h))
	}
	tw.Flush()
	for _, h := range c.Hosts {
		if h.Detail != "" && h.Outcome != report.ChainServed {
			d := h.Detail
			if !o.Wide && len(d) > 160 {
				d = d[:157] + "..."
			}
			p.f("  %s: %s\n", h.Host, d)
		}
	}
	sb := c.ServedBy
	if c.Runtime == report.RuntimeCRIO {
		// containers/image takes the whole pull from the first source
		// whose manifest loads: no fall-through per request.
		p.f("  served by: %s\n", orNone(sb.Manifest))
		for i, h := range c.Hosts {
			if h.Source != "" {
				p.f("  %d from %s\n", i+1, h.Source)
			}
		}
		for _, n := range c.Notes {
			p.f("  note: %s\n", n)
		}
		p.f("\n")
		return
	}
	p.f("  served by: resolve %s, manifest %s, blobs %s\n", orNone(sb.Resolve), orNone(sb.Manifest), orNone(sb.Blobs))
	p.f("  fall-through: %s over %d requests; longest wait without a byte %s %s", humanMS(c.FallThroughMS), c.Requests, humanMS(c.LongestWaitMS), chainLimit(c.Limits))
	p.f("\n  kubelet: %s\n", c.Limits.KubeletDeadline)
	if u := c.Upstream; u != nil {
		if u.Status == report.StepPass {
			p.f("  upstream check: %s\n", u.Summary)
		} else {
			p.f("  upstream check: %s FAILS %s: %s\n", u.Host, u.Code, u.Summary)
		}
	}
	p.f("\n")
}

// chainSteps is "resolve ok, connect ok, tls ok, head 404, get 200".
func chainSteps(steps []report.ChainStep) string {
	var parts []string
	for _, s := range steps {
		v := "ok"
		switch {
		case s.HTTPStatus != 0:
			v = fmt.Sprint(s.HTTPStatus)
		case s.Status == report.StepFail && s.Code != "":
			v = string(s.Code)
		}
		parts = append(parts, s.Name+" "+v)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func chainOutcome(h report.ChainHost) string {
	if h.Code != "" && h.Outcome != report.ChainServed {
		return string(h.Outcome) + " " + string(h.Code)
	}
	return string(h.Outcome)
}

func chainHold(h report.ChainHost) string {
	switch {
	case h.HoldMS < 0:
		return "never moves on"
	case h.Tries == 0:
		return "-"
	}
	return fmt.Sprintf("%s x %d", humanMS(h.HoldMS), h.Tries)
}

func chainLimit(l report.ChainLimits) string {
	if l.ProgressTimeoutMS > 0 {
		return "vs image_pull_progress_timeout " + humanMS(l.ProgressTimeoutMS) + " (" + l.Note + ")"
	}
	return "(" + l.Note + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
