package sweep

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// mirrorOf is the hosts.toml mirror that served node n's walk ("" when the
// registry itself did, or nothing did).
func mirrorOf(n *report.SweepNode) string {
	if n.Probe == nil {
		return ""
	}
	for _, h := range n.Probe.Hops {
		if h.Role == verdict.RoleMirror && h.Status == report.StepPass {
			return h.Host
		}
	}
	return ""
}

// mirrorDivergence says when the failing and the healthy nodes differ by
// the mirror that served them: the healthy ones pull through a hosts.toml
// mirror the failing ones do not use (their certs.d lacks it, so they go
// to the broken upstream), or the failing ones go through a mirror the
// healthy ones do not (the mirror is on their broken path). "" when the
// mirrors do not separate them.
func mirrorDivergence(failing, healthy []*report.SweepNode) string {
	fm, hm := map[string]bool{}, map[string]bool{}
	for _, n := range failing {
		fm[mirrorOf(n)] = true
	}
	for _, n := range healthy {
		hm[mirrorOf(n)] = true
	}
	for m := range fm {
		if hm[m] {
			return "" // a mirror (or none) on both sides: not the separation
		}
	}
	switch {
	case !fm[""] || len(fm) > 1:
		return fmt.Sprintf("The failing nodes pull through hosts.toml mirror %s and the healthy ones do not: the mirror is on the failing path (its reachability, TLS and content from those nodes), or their certs.d differ from the healthy nodes'.", setList(fm))
	default:
		return fmt.Sprintf("The healthy nodes pull through hosts.toml mirror %s, which the failing nodes do not use: their /etc/containerd/certs.d lacks the mirror's hosts.toml, so they go to the upstream registry, which is the broken path. Give their pool the same hosts.toml, or repair the upstream path.", setList(hm))
	}
}

// hiddenUpstream is the nodes whose walk was served by a mirror while the
// upstream registry fails from them (MIRROR_HIDES_UPSTREAM, from the
// probe's --check-upstream).
func hiddenUpstream(nodes []report.SweepNode) []string {
	var out []string
	for i := range nodes {
		n := &nodes[i]
		if n.Probe != nil && slices.Contains(n.Probe.Warnings, verdict.MirrorHidesUpstream) {
			out = append(out, n.Name)
		}
	}
	return out
}

// hiddenUpstreamOf is hiddenUpstreamNote for the nodes of a report whose
// walk a mirror served while the upstream fails, naming the mirrors that
// served the healthy ones among them ("", "" when there are none).
func hiddenUpstreamOf(nodes []report.SweepNode, healthy []*report.SweepNode) (string, string) {
	names := hiddenUpstream(nodes)
	if len(names) == 0 {
		return "", ""
	}
	mirrors := map[string]bool{}
	for _, n := range healthy {
		if slices.Contains(names, n.Name) {
			mirrors[mirrorOf(n)] = true
		}
	}
	return hiddenUpstreamNote(names, setList(mirrors))
}

// hiddenUpstreamNote is the sentence and the advice for those nodes.
func hiddenUpstreamNote(names []string, mirror string) (string, string) {
	sort.Strings(names)
	s := fmt.Sprintf(" A mirror hides a broken upstream on %d node(s) (%s, MIRROR_HIDES_UPSTREAM): %s served, the upstream registry fails from them.", len(names), strings.Join(names, ", "), mirror)
	return s, "The first tag the mirror has not stored, or a node without the mirror (a new pool, a scale-up), will fail: repair the upstream path from the nodes (pullpath probe IMAGE --check-upstream on one of them names the upstream failure)."
}

func setList(m map[string]bool) string {
	var xs []string
	for k := range m {
		if k != "" {
			xs = append(xs, k)
		}
	}
	sort.Strings(xs)
	return strings.Join(xs, ", ")
}
