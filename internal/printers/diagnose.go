package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
)

// printDiagnose puts the answer first, in three lines (what is broken, what
// to change, how to prove it), then the steps and the evidence of each.
func printDiagnose(w io.Writer, r *report.DiagnoseReport, o Options) error {
	p := &printer{w: w, color: o.Color}
	writeDiagnoseAnswer(p, r.Answer, o.Wide)
	writeDiagnoseSteps(p, w, r)
	if p.err != nil {
		return p.err
	}
	return writeDiagnoseEvidence(p, w, r, o)
}

// writeDiagnoseAnswer is the answer: the verdict, the changes (or where to
// look), the proof, and what else to look at.
func writeDiagnoseAnswer(p *printer, a report.DiagnoseAnswer, wide bool) {
	label := func(s string) string { return p.bold(fmt.Sprintf("%-8s", s)) }
	switch a.Status {
	case report.AnswerUnknown:
		p.f("%s %s\n", p.red(fmt.Sprintf("%-8s", "UNKNOWN")), a.Summary)
		if a.Link != nil {
			p.f("%s %s\n", strings.Repeat(" ", 8), brokenLine(a))
		}
	case report.AnswerBroken:
		p.f("%s %s\n", p.red(fmt.Sprintf("%-8s", "BROKEN")), brokenLine(a))
		if a.Where != "" && a.Where != a.Summary {
			p.f("%s %s\n", strings.Repeat(" ", 8), a.Where)
		}
		if a.Summary != "" {
			p.f("%s %s\n", strings.Repeat(" ", 8), a.Summary)
		}
	case report.AnswerOK:
		p.f("%s %s\n", p.green(fmt.Sprintf("%-8s", "OK")), a.Summary)
	default:
		p.f("%s %s\n", p.green(fmt.Sprintf("%-8s", "NOTHING")), a.Summary)
	}
	for i, c := range a.Changes {
		l := "CHANGE"
		if i > 0 {
			l = ""
		}
		p.f("%s %s: %s\n", label(l), c.Resource, c.Action)
		if c.Command != "" {
			p.f("%s   $ %s\n", strings.Repeat(" ", 8), c.Command)
		}
	}
	if len(a.Changes) == 0 && len(a.Look) > 0 && (a.Status == report.AnswerBroken || a.Status == report.AnswerUnknown) {
		for i, l := range lookLines(a.Look, wide) {
			lab := "LOOK"
			if i > 0 {
				lab = ""
			}
			p.f("%s %s\n", label(lab), l)
		}
	}
	for i, c := range a.Prove {
		l := "PROVE"
		if i > 0 {
			l = ""
		}
		p.f("%s %s\n", label(l), c)
	}
	if len(a.Changes) > 0 && len(a.Look) > 0 {
		p.f("\n%s\n", p.bold("ALSO"))
		for _, l := range lookLines(a.Look, wide) {
			p.f("  - %s\n", l)
		}
	}
}

// writeDiagnoseSteps is the table of the steps, each with its time and,
// for one that did not run, why and what to run by hand.
func writeDiagnoseSteps(p *printer, w io.Writer, r *report.DiagnoseReport) {
	p.f("\n%s  %s, %.1fs of a %.0fs budget\n", p.bold("STEPS"), r.Scope, r.DurationMS/1000, r.BudgetMS/1000)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range r.Steps {
		took := ""
		if s.Status == report.DiagnoseRan || s.DurationMS > 0 {
			took = fmt.Sprintf("%.1fs", s.DurationMS/1000)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Status, s.Name, took, s.Summary)
		if s.Reason != "" {
			fmt.Fprintf(tw, "  \t\t\twhy: %s\n", s.Reason)
		}
		if s.Next != "" {
			fmt.Fprintf(tw, "  \t\t\tby hand: %s\n", s.Next)
		}
	}
	tw.Flush()
}

// writeDiagnoseEvidence prints each engine's own report under its heading.
func writeDiagnoseEvidence(p *printer, w io.Writer, r *report.DiagnoseReport, o Options) error {
	if r.Explain != nil && len(r.Explain.Groups)+len(r.Explain.Findings) > 0 {
		p.f("\n%s\n", p.bold("EVIDENCE: THE EVENTS (pullpath explain)"))
		if err := Print(w, "text", r.Explain, o); err != nil {
			return err
		}
	}
	if r.Sweep != nil {
		p.f("\n%s\n", p.bold("EVIDENCE: THE NODES WALKED (pullpath sweep)"))
		if err := Print(w, "text", r.Sweep, o); err != nil {
			return err
		}
	}
	if r.IdentityWalk != nil {
		p.f("\n%s\n", p.bold("EVIDENCE: THE NODES WALKED WITH THE PODS' OWN PULL IDENTITY (namespace "+r.IdentityWalk.Namespace+")"))
		if err := Print(w, "text", r.IdentityWalk, o); err != nil {
			return err
		}
	}
	if r.Audit != nil {
		p.f("\n%s\n", p.bold("EVIDENCE: THE CLOUD'S CONFIGURATION (pullpath "+r.Audit.Target.Cloud+" audit)"))
		if err := Print(w, "text", r.Audit, o); err != nil {
			return err
		}
	}
	return p.err
}

// maxLook is how many places to look the answer shows (wide: all); the
// evidence below keeps every piece of advice.
const maxLook = 3

// lookLines are the first maxLook places to look, and the last one when it
// names the audit to run (the step that would name the object).
func lookLines(look []string, wide bool) []string {
	if wide || len(look) <= maxLook {
		return look
	}
	out := append([]string(nil), look[:maxLook]...)
	if last := look[len(look)-1]; strings.Contains(last, " audit") || strings.Contains(last, " collect") {
		out = append(out, last)
	}
	return out
}

// brokenLine is "HOST (ROLE, ADDRESS): CODE at STEP [condition], on N nodes".
func brokenLine(a report.DiagnoseAnswer) string {
	l := a.Link
	if l == nil {
		s := string(a.Code)
		if a.Condition != "" {
			s += " [" + string(a.Condition) + "]"
		}
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	if l.Host != "" {
		b.WriteString(l.Host)
		var in []string
		if l.Role != "" {
			in = append(in, string(l.Role))
		}
		if l.Address != "" {
			in = append(in, l.Address)
		}
		if len(in) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(in, ", "))
		}
		b.WriteString(": ")
	}
	b.WriteString(string(l.Code))
	if l.Step != "" {
		fmt.Fprintf(&b, " at %s", l.Step)
	}
	if a.Condition != "" {
		fmt.Fprintf(&b, "  [repair direction: %s]", a.Condition)
	}
	if n := len(l.Nodes); n > 0 {
		fmt.Fprintf(&b, "  on %d node", n)
		if n > 1 {
			b.WriteString("s")
		}
	}
	return b.String()
}
