package printers

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// printProbeIdentity renders how the probe authenticated as the kubelet.
func printProbeIdentity(p *printer, id *report.ProbeIdentity, o Options) {
	if id == nil {
		return
	}
	p.f("\n%s\n", p.bold("THE KUBELET'S IDENTITY"))
	if id.ProviderConfig != "" {
		p.f("  credential provider config %s (bin dir %s), from %s\n", id.ProviderConfig, id.ProviderBinDir, id.From)
	}
	for _, s := range id.PullSecrets {
		p.f("  pull secret %s\n", s)
	}
	for _, pl := range id.Plugins {
		if pl.OK {
			how := "ran"
			if pl.Cached {
				how = "cached"
			}
			extra := ""
			if pl.CacheKey != "" {
				extra = fmt.Sprintf(", cached %s under %s", pl.CacheTTL, pl.CacheKey)
			}
			p.f("  plugin %s %s: credentials for %s%s\n", pl.Name, how, strings.Join(pl.Patterns, ", "), extra)
			continue
		}
		p.f("  plugin %s FAILED: %s\n", pl.Name, pl.Error)
		if pl.Stderr != "" {
			stderr := pl.Stderr
			if !o.Wide && len(stderr) > 300 {
				stderr = stderr[:297] + "..."
			}
			p.f("    stderr: %s\n", strings.ReplaceAll(stderr, "\n", "\n            "))
		}
	}
	for _, a := range id.Attempts {
		mark := " "
		if a.Chosen {
			mark = "*"
		}
		code := string(a.Code)
		if code == "" {
			code = "-"
		}
		p.f("  %s attempt %d with %s: %s\n", mark, a.N, a.Credentials, code)
	}
	for _, n := range id.Notes {
		p.f("  note: %s\n", n)
	}
}
