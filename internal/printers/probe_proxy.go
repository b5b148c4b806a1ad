package printers

import (
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// printProxyConfig says which proxy settings the walk followed and where
// they came from, under the probe's header.
func printProxyConfig(p *printer, c *report.ProxyConfig, o Options) {
	if c == nil {
		return
	}
	if c.Disabled || c.HTTPSProxy == "" && c.HTTPProxy == "" {
		p.f("  proxy: none (%s)\n", c.Origin)
		return
	}
	var parts []string
	for _, v := range []struct{ name, val string }{{"HTTPS_PROXY", c.HTTPSProxy}, {"HTTP_PROXY", c.HTTPProxy}, {"NO_PROXY", c.NoProxy}} {
		if v.val != "" {
			parts = append(parts, v.name+"="+v.val)
		}
	}
	p.f("  proxy: %s\n    from %s\n", strings.Join(parts, "  "), c.Origin)
	if o.Wide {
		for _, s := range c.Sources {
			p.f("    %s set in %s\n", s.Name, s.From)
		}
		for _, n := range c.Notes {
			p.f("    note: %s\n", n)
		}
	}
}

// viaCell is how the runtime reaches an endpoint: through which proxy, or
// direct and which NO_PROXY entry sent it there.
func viaCell(e *report.Endpoint, wide bool) string {
	px := e.Proxy
	switch {
	case px == nil:
		return "-"
	case px.Via == "proxy":
		return "via proxy " + px.Proxy
	case px.NoProxyMatch != "":
		return "direct (NO_PROXY " + px.NoProxyMatch + ")"
	case wide:
		return "direct: " + px.Reason
	}
	return "direct"
}
