package printers

import (
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// printSweepRuntimes names each node's runtime, the config file it reads
// and the mirrors in effect: with -o wide always, else when the nodes
// differ in them (one pool a k3s layout with a mirror, another the
// default file without).
func printSweepRuntimes(p *printer, nodes []report.SweepNode, wide bool) {
	lines := map[string]bool{}
	for _, n := range nodes {
		if n.Probe == nil || n.Probe.Runtime == "" {
			continue
		}
		lines[runtimeLine(n.Probe)] = true
	}
	if len(lines) == 0 || !wide && len(lines) < 2 {
		return
	}
	for _, n := range nodes {
		if n.Probe == nil || n.Probe.Runtime == "" {
			continue
		}
		p.f("  %s: %s\n", n.Name, runtimeLine(n.Probe))
	}
}

// runtimeLine is "RUNTIME FILE; mirrors M (FILE), ..." or "...; no mirror".
func runtimeLine(r *report.SweepResult) string {
	if len(r.Mirrors) == 0 {
		return r.Runtime + "; no mirror"
	}
	return r.Runtime + "; mirrors " + strings.Join(r.Mirrors, ", ")
}
