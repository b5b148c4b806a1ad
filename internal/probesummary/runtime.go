package probesummary

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// maxMirrors bounds the mirrors a summary names (4 KiB in all).
const maxMirrors = 4

// runtimeOf is the node's runtime and config file in one line, and
// the mirrors in effect for the walked image: the chain's mirrors in the
// runtime's order (else the mirror endpoints walked), each "HOST (FILE)".
func runtimeOf(r *report.ProbeReport) (string, []string) {
	var rt string
	if c := r.RuntimeConfig; c != nil {
		rt = c.Name() + " " + c.File()
		if c.Override != "" {
			rt += "; --certs-dir override"
		}
		rt = cutString(rt, 200)
	}
	var mirrors []string
	add := func(host, source string) {
		if len(mirrors) >= maxMirrors {
			return
		}
		m := host
		if source != "" {
			m = fmt.Sprintf("%s (%s)", host, source)
		}
		mirrors = append(mirrors, cutString(m, 160))
	}
	if r.Chain != nil {
		for _, h := range r.Chain.Hosts {
			if h.Role == verdict.RoleMirror {
				add(h.Host, h.Source)
			}
		}
		return rt, mirrors
	}
	for _, e := range r.Endpoints {
		if e != nil && e.Role == verdict.RoleMirror {
			add(e.Host, "")
		}
	}
	return rt, mirrors
}
