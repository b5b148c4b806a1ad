package printers

import (
	"fmt"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/verdict"
)

// printProbe renders a probe report for a person: the endpoints, the steps,
// the verdict and what to do next.
func printProbe(w io.Writer, r *report.ProbeReport, o Options) error {
	p := &printer{w: w, color: o.Color}
	p.f("%s  %s\n", p.bold("pullpath probe"), r.Image)
	meta := []string{}
	if r.Node != "" {
		meta = append(meta, "node "+r.Node)
	}
	meta = append(meta, "platform "+r.Platform, r.Mode+" pull")
	if len(r.Resolver.Nameservers) > 0 {
		meta = append(meta, "nameservers "+strings.Join(r.Resolver.Nameservers, ","))
	}
	p.f("  %s\n", strings.Join(meta, "  "))
	printRuntimeConfig(p, r.RuntimeConfig, o)
	printProxyConfig(p, r.Proxy, o)
	p.f("\n")

	printEndpoints(p, w, r, o.Wide)
	printFamilies(p, w, r.Endpoints, o.Wide)

	printChain(p, r.Chain, o)

	printSteps(p, w, r, o.Wide)
	printProbeVerdict(p, r, o)
	return p.err
}

// printEndpoints is the table of the pull's hosts: each step of the
// connection per host (and the proxy each goes through, when one does).
func printEndpoints(p *printer, w io.Writer, r *report.ProbeReport, wide bool) {
	if len(r.Endpoints) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Proxy != nil {
		fmt.Fprintln(tw, "ENDPOINT\tROLE\tVIA\tRESOLVE\tCONNECT\tTLS\tHTTP")
	} else {
		fmt.Fprintln(tw, "ENDPOINT\tROLE\tRESOLVE\tCONNECT\tTLS\tHTTP")
	}
	for _, e := range r.Endpoints {
		via := ""
		if r.Proxy != nil {
			via = viaCell(e, wide) + "\t"
		}
		fmt.Fprintf(tw, "%s:%d\t%s\t%s%s\t%s\t%s\t%s\n", e.Host, e.Port, e.Role, via, resolveCell(e, wide), connectCell(e, wide), tlsCell(e), httpCell(e, wide))
	}
	tw.Flush()
	p.f("\n")
}

// printSteps is the walk's steps, each with its time, and the transfer.
func printSteps(p *printer, w io.Writer, r *report.ProbeReport, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range r.Steps {
		detail := s.Detail
		if s.Code != "" {
			detail = string(s.Code) + "  " + detail
		}
		if !wide && len(detail) > 140 {
			detail = detail[:137] + "..."
		}
		ms := ""
		if s.Status != report.StepSkip && s.DurationMS > 0 {
			ms = fmt.Sprintf("%.0fms", s.DurationMS)
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%s\n", p.mark(s.Status), s.Name, s.Endpoint, ms, detail)
	}
	tw.Flush()
	if t := r.Transfer; t != nil && t.Bytes > 0 {
		v := "digests verified"
		if !t.Verified {
			v = "digests not verified"
		}
		p.f("  %d blobs, %s in %s (%.1f MB/s), %s\n", t.Blobs, units.Bytes(t.Bytes), humanMS(t.DurationMS), t.MBps, v)
	}
	p.f("\n")

}

// printProbeVerdict is the verdict, where to look, the identity, the
// warnings and what the runtime itself did.
func printProbeVerdict(p *printer, r *report.ProbeReport, o Options) {
	v := r.Verdict
	if v.Status == verdict.StatusOK {
		p.f("%s  %s\n", p.green("VERDICT  OK"), v.Summary)
	} else {
		p.f("%s  %s  (condition %s, cause %s, stage %s)\n", p.red("VERDICT  FAIL"), v.Code, v.Condition, v.Cause, v.Stage)
		p.f("  %s\n", v.Summary)
	}
	if len(v.Advice) > 0 {
		p.f("\n%s\n", p.bold("WHERE TO LOOK"))
		for _, a := range v.Advice {
			p.f("  - %s\n", a)
		}
	}
	printProbeIdentity(p, r.Identity, o)
	if len(r.Warnings) > 0 {
		p.f("\n%s\n", p.bold("WARNINGS (the pull is not stopped by these, but they will bite)"))
		for _, x := range r.Warnings {
			p.f("  ! %s  %s\n", x.Code, x.Message)
		}
	}
	if rt := r.Runtime; rt != nil {
		p.f("\n%s\n", p.bold("THE RUNTIME ("+rt.Runtime+")"))
		if rt.OK {
			p.f("  pull OK in %.1fs\n", rt.DurationMS/1000)
		} else {
			p.f("  failed in %.1fs (%s): %s\n", rt.DurationMS/1000, rt.GRPCCode, rt.Message)
			if e := rt.Explain; e != nil {
				p.f("  explain reads it as %s (condition %s, cause %s, stage %s)\n", e.Code, e.Condition, e.Cause, e.Stage)
			}
		}
	}
}

func resolveCell(e *report.Endpoint, wide bool) string {
	r := e.Resolve
	if r == nil && e.Proxy != nil && e.Proxy.Via == "proxy" {
		return "by the proxy"
	}
	if r == nil {
		return "-"
	}
	if r.Code != "" {
		return string(r.Code)
	}
	var as []string
	for _, a := range r.Answers {
		as = append(as, a.Address+" "+a.Scope)
	}
	if !wide && len(as) > 2 {
		as = append(as[:2], fmt.Sprintf("+%d", len(as)-2))
	}
	src := r.Source
	if src == "dns" {
		src = ""
	} else {
		src = " (" + src + ")"
	}
	return strings.Join(as, ", ") + src
}

func connectCell(e *report.Endpoint, wide bool) string {
	addrs, suffix := e.Addresses, ""
	if px := e.Proxy; px != nil && px.Via == "proxy" {
		addrs, suffix = px.Addresses, " (proxy)"
		if c := px.Connect; c != nil && c.Status != 0 {
			suffix += fmt.Sprintf(", CONNECT %d", c.Status)
		}
	}
	if len(addrs) == 0 {
		return "-"
	}
	var parts []string
	for _, a := range addrs {
		s := a.Result
		if a.Result == "ok" || a.Result == "timeout" {
			s += " " + strconv.FormatFloat(a.DurationMS, 'f', 0, 64) + "ms"
		}
		if wide || len(addrs) > 1 {
			s = a.Address + " " + s
		}
		parts = append(parts, s)
	}
	if !wide && len(parts) > 2 {
		parts = append(parts[:2], fmt.Sprintf("+%d", len(parts)-2))
	}
	return strings.Join(parts, ", ") + suffix
}

func tlsCell(e *report.Endpoint) string {
	if e.Scheme == "http" {
		return "plain http"
	}
	t := e.TLS
	if t == nil {
		return "-"
	}
	if t.Code != "" {
		return string(t.Code)
	}
	if t.SkipVerify {
		return "not verified"
	}
	return "verified " + t.Version
}

func httpCell(e *report.Endpoint, wide bool) string {
	if len(e.HTTP) == 0 {
		return "-"
	}
	counts := map[string]int{}
	var order []string
	for _, h := range e.HTTP {
		k := strconv.Itoa(h.Status)
		if h.Status == 0 {
			k = "error"
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var parts []string
	for _, k := range order {
		if counts[k] > 1 {
			parts = append(parts, fmt.Sprintf("%sx%d", k, counts[k]))
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, " ")
}

func humanMS(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.1fs", ms/1000)
}

// printer writes with optional ANSI colour and remembers the first error.
type printer struct {
	w     io.Writer
	color bool
	err   error
}

func (p *printer) f(format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

func (p *printer) bold(s string) string  { return p.paint("1", s) }
func (p *printer) red(s string) string   { return p.paint("1;31", s) }
func (p *printer) green(s string) string { return p.paint("1;32", s) }

func (p *printer) mark(s report.StepStatus) string {
	switch s {
	case report.StepPass:
		return p.paint("32", "ok  ")
	case report.StepWarn:
		return p.paint("33", "warn")
	case report.StepFail:
		return p.paint("31", "FAIL")
	}
	return "skip"
}

// printFamilies shows each endpoint's path per address family when it
// matters: a finding, a host with both families, or -o wide. The finding
// itself is the verdict's or a warning's, printed there.
func printFamilies(p *printer, w io.Writer, eps []*report.Endpoint, wide bool) {
	var show []*report.Endpoint
	for _, e := range eps {
		if f := e.Families; f != nil && (wide || f.Code != "" || f.IPv4.HostAddresses > 0 && f.IPv6.HostAddresses > 0) {
			show = append(show, e)
		}
	}
	if len(show) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ENDPOINT\tFAMILY\tHOST\tNODE\tCONNECT\tDIAL (GO, HAPPY EYEBALLS)")
	for _, e := range show {
		f := e.Families
		for i, x := range []struct {
			name string
			fp   report.FamilyPath
		}{{"IPv4", f.IPv4}, {"IPv6", f.IPv6}} {
			ep, dial := "", ""
			if i == 0 {
				ep, dial = e.Host+":"+strconv.Itoa(e.Port), familyDialCell(f.Dial)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ep, x.name, plural(x.fp.HostAddresses, "address", "addresses"), familyNodeCell(x.fp), orDash(x.fp.Result), dial)
		}
	}
	tw.Flush()
	p.f("\n")
}

func familyNodeCell(fp report.FamilyPath) string {
	var parts []string
	if fp.NodeAddress == "" {
		parts = append(parts, "no address")
	} else {
		parts = append(parts, fp.NodeAddress)
	}
	if fp.DefaultRoute {
		parts = append(parts, "default route")
	} else {
		parts = append(parts, "no default route")
	}
	switch {
	case fp.Source != "":
		parts = append(parts, "source "+fp.Source)
	case fp.NoRoute != "":
		parts = append(parts, "no route: "+fp.NoRoute)
	}
	return strings.Join(parts, ", ")
}

func familyDialCell(d *report.FamilyDial) string {
	switch {
	case d == nil:
		return "-"
	case d.Error != "":
		return d.Error
	case d.FellBack:
		return fmt.Sprintf("%s first, fell back to %s in %.0fms", d.Primary, d.Family, d.DurationMS)
	}
	return fmt.Sprintf("%s first, connected in %.0fms", d.Primary, d.DurationMS)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
