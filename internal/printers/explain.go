package printers

import (
	"fmt"
	"github.com/pullpath/pullpath/internal/report"
	"io"
	"sort"
	"strings"
)

// printExplain prints the report for a person: per image, the verdict, failing
// and healthy nodes, advice and the next commands; then the findings that
// belong to no image group. Wide adds every finding and node detail.
func printExplain(w io.Writer, r *report.ExplainReport, o Options) error {
	ew := &explainWriter{w: w}
	p := ew.printf
	head := r.Source
	if r.Scope != "" {
		head += ", " + r.Scope
	}
	p("pullpath explain: %s\n", head)
	if r.Summary.Failures == 0 {
		p("No pull failure found in %d message(s).\n", r.Summary.Messages)
		writeExplainWaits(p, r.Waits)
		for _, wn := range r.Warnings {
			p("warning: %s\n", wn)
		}
		return ew.err
	}
	p("%d pull failure(s) in %d message(s); dominant condition: %s (exit %d)\n",
		r.Summary.Failures, r.Summary.Messages, explainDash(string(r.Summary.DominantCondition)), r.Summary.ExitCode)
	grouped := map[string]bool{}
	for _, g := range r.Groups {
		grouped[g.Image] = true
		writeExplainGroup(p, g, o.Wide)
	}
	writeExplainFindings(p, r.Findings, grouped, o.Wide)
	writeExplainWaits(p, r.Waits)
	for _, wn := range r.Warnings {
		p("warning: %s\n", wn)
	}
	return ew.err
}

// writeExplainGroup is one image's section: its finding, pattern,
// verdict, nodes, advice and next steps.
func writeExplainGroup(p func(string, ...any), g report.ExplainGroup, wide bool) {
	p("\nIMAGE %s\n", g.Image)
	if g.Code != "" {
		p("  finding:  %s  stage=%s cause=%s condition=%s", g.Code, explainDash(string(g.Stage)), explainDash(string(g.Cause)), explainDash(string(g.Condition)))
		if g.Endpoint != "" {
			p("  endpoint=%s", g.Endpoint)
		}
		p("\n")
	}
	p("  pattern:  %s\n", g.Pattern)
	p("  verdict:  %s\n", g.Verdict)
	var failing, healthy []report.ExplainNode
	for _, n := range g.Nodes {
		if n.Status == report.NodeStatusFailed {
			failing = append(failing, n)
		} else {
			healthy = append(healthy, n)
		}
	}
	writeExplainNodes(p, "failing", failing, wide)
	writeExplainNodes(p, "healthy", healthy, wide)
	if len(g.Advice) > 0 {
		p("  advice:\n")
		for _, a := range g.Advice {
			p("    - %s\n", a)
		}
	}
	if len(g.Next) > 0 {
		p("  next:\n")
		for _, n := range g.Next {
			p("    $ %s\n", n)
		}
	}
}

// writeExplainFindings lists the findings: all of them in wide output;
// otherwise one line per distinct code, endpoint and image, the most
// frequent first, with the kubelet's echoes counted apart.
func writeExplainFindings(p func(string, ...any), findings []report.ExplainFinding, grouped map[string]bool, wide bool) {
	p("\nFINDINGS\n")
	type key struct{ code, endpoint, image string }
	seen := map[key]int{}
	var order []key
	echoes := 0
	for _, f := range findings {
		k := key{string(f.Code), f.Endpoint, f.Image}
		if !wide && f.Rule == "kubelet-backoff" {
			echoes++ // the kubelet repeating that a pull failed: no cause of its own
			continue
		}
		if wide {
			p("  %s  %s  %s\n", f.Event, f.Code, f.Summary)
			if f.Node != "" || f.Pod != "" {
				p("      pod=%s node=%s rule=%s\n", explainDash(f.Pod), explainDash(f.Node), f.Rule)
			}
			if f.URL != "" {
				p("      %s %s\n", f.Method, f.URL)
			}
			continue
		}
		if seen[k] == 0 {
			order = append(order, k)
		}
		seen[k]++
	}
	sort.SliceStable(order, func(i, j int) bool { return seen[order[i]] > seen[order[j]] })
	for _, k := range order {
		var f report.ExplainFinding
		for _, x := range findings {
			if string(x.Code) == k.code && x.Endpoint == k.endpoint && x.Image == k.image {
				f = x
				break
			}
		}
		amb := ""
		if f.Ambiguous {
			amb = " [ambiguous]"
		}
		p("  %3dx %-22s %s%s\n", seen[k], f.Code, f.Summary, amb)
		if !grouped[f.Image] || f.Image == "" {
			for _, a := range f.Advice {
				p("        - %s\n", a)
			}
		}
	}
	if echoes > 0 {
		p("  %3dx kubelet back-off or ErrImagePull events (they repeat a failure; the cause is in the runtime's message)\n", echoes)
	}
}

// writeExplainWaits lists the pulls that waited in a node's kubelet queue.
func writeExplainWaits(p func(string, ...any), waits []report.ExplainWait) {
	if len(waits) == 0 {
		return
	}
	p("\nWAITING BEHIND OTHER PULLS (the kubelet pulls one image at a time by default)\n")
	for _, w := range waits {
		p("  %s\n", w.Summary)
	}
}

func writeExplainNodes(p func(string, ...any), label string, nodes []report.ExplainNode, wide bool) {
	if len(nodes) == 0 {
		p("  %s:  none\n", label)
		return
	}
	p("  %s:  %d node(s)\n", label, len(nodes))
	const max = 10
	for i, n := range nodes {
		if i == max && !wide {
			p("    ... and %d more (-o wide)\n", len(nodes)-max)
			break
		}
		var facts []string
		if n.Pool != "" {
			facts = append(facts, "pool="+n.Pool)
		}
		if n.Zone != "" {
			facts = append(facts, "zone="+n.Zone)
		}
		if n.Subnet != "" {
			s := "subnet=" + n.Subnet
			if strings.HasPrefix(n.SubnetSource, "InternalIP") {
				s += "(guess)"
			}
			facts = append(facts, s)
		}
		if n.Created != nil {
			facts = append(facts, "created="+n.Created.Format("2006-01-02 15:04:05"))
		}
		if n.HasImage != nil {
			facts = append(facts, fmt.Sprintf("image-cached=%v", *n.HasImage))
		}
		ev := ""
		if n.Status != report.NodeStatusFailed {
			ev = "  [" + n.Evidence + "]"
		} else if len(n.Codes) > 0 {
			cs := make([]string, len(n.Codes))
			for i, c := range n.Codes {
				cs[i] = string(c)
			}
			ev = "  [" + strings.Join(cs, ",") + "]"
		}
		p("    %-28s %s  pods=%d%s\n", n.Name, strings.Join(facts, " "), len(n.Pods), ev)
		if wide {
			for _, pod := range n.Pods {
				p("        %s\n", pod)
			}
		}
	}
}

func explainDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// explainWriter keeps the first write error.
type explainWriter struct {
	w   io.Writer
	err error
}

func (e *explainWriter) printf(format string, a ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, a...)
}
