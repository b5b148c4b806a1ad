package printers

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// printRuntimeConfig says which runtime and file the walk followed and how
// they were found (step 0), under the probe's header; -o wide adds every
// candidate, file and source.
func printRuntimeConfig(p *printer, c *report.RuntimeConfig, o Options) {
	if c == nil {
		return
	}
	p.f("  runtime: %s  %s\n    found: %s\n", c.Name(), c.File(), c.HowFound)
	if c.Override != "" {
		p.f("    override: %s\n", c.Override)
	}
	if len(c.Sources) > 0 {
		var s []string
		for _, src := range c.Sources {
			s = append(s, sourceCell(src))
		}
		p.f("    registry config: %s\n", strings.Join(s, "; "))
	}
	if !o.Wide {
		return
	}
	if c.Rules != "" {
		p.f("    rules: %s\n", c.Rules)
	}
	if c.VersionFrom != "" {
		p.f("    version from %s\n", c.VersionFrom)
	}
	if len(c.Files) > 1 {
		p.f("    files read: %s\n", strings.Join(c.Files, ", "))
	}
	for _, cand := range c.Candidates {
		if cand.Chosen {
			p.f("    * %s %s (%s, %s)\n", cand.Layout, cand.ConfigFile, cand.Runtime, cand.Seen)
			continue
		}
		p.f("      %s %s (%s, %s): %s\n", cand.Layout, cand.ConfigFile, cand.Runtime, cand.Seen, cand.Why)
	}
	for _, n := range c.Notes {
		p.f("    note: %s\n", n)
	}
}

// sourceCell is one registry configuration source in a line:
// "config_path /etc/containerd/certs.d (missing)".
func sourceCell(s report.RegistrySource) string {
	out := s.Kind + " " + s.Path
	if s.Line > 0 {
		out += fmt.Sprintf(":%d", s.Line)
	}
	if s.Registry != "" {
		out += " for " + s.Registry
	}
	if s.Missing {
		out += " (missing)"
	}
	return out
}
