package sweep

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// runtimeOf is node n's runtime, its config file and the mirrors in effect
// (probesummary.Summary.Runtime and Mirrors, mirrors without their files): ""
// without a walk that said.
func runtimeOf(n *report.SweepNode) string {
	if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents || n.Probe.Runtime == "" {
		return ""
	}
	s := n.Probe.Runtime
	if len(n.Probe.Mirrors) > 0 {
		var hosts []string
		for _, m := range n.Probe.Mirrors {
			h, _, _ := strings.Cut(m, " (")
			hosts = append(hosts, h)
		}
		s += "; mirrors " + strings.Join(hosts, ", ")
	} else {
		s += "; no mirror"
	}
	return s
}

// runtimeDivergence says when the failing and the healthy nodes differ by
// their runtime or the config file it reads: one on each side, not the
// same ("" when it does not separate them, or a side did not say). The
// mirrors alone differing is the mirror divergence's (mirror.go); the
// sentence names them too.
func runtimeDivergence(failing, healthy []*report.SweepNode) string {
	if !runtimeFileSeparates(failing, healthy) {
		return ""
	}
	f, _ := oneRuntime(failing)
	h, _ := oneRuntime(healthy)
	return fmt.Sprintf("The failing nodes' runtime is %s; the healthy nodes' is %s. The runtime's own configuration separates them: the registry configuration the failing nodes' runtime reads (the file named, and the folders its config_path names) lacks what the healthy nodes' has, or names another path; `pullpath probe -o wide` on one of each lists every file read and every file ignored.", f, h)
}

// runtimeFileSeparates: each side has one runtime and config file
// (probesummary.Summary.Runtime), and they differ.
func runtimeFileSeparates(failing, healthy []*report.SweepNode) bool {
	one := func(nodes []*report.SweepNode) string {
		seen := ""
		for _, n := range nodes {
			if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents || n.Probe.Runtime == "" {
				return ""
			}
			if seen != "" && n.Probe.Runtime != seen {
				return ""
			}
			seen = n.Probe.Runtime
		}
		return seen
	}
	f, h := one(failing), one(healthy)
	return f != "" && h != "" && f != h
}

// oneRuntime is the runtime configuration every node of nodes has, false
// when they differ or one did not say.
func oneRuntime(nodes []*report.SweepNode) (string, bool) {
	seen := ""
	for _, n := range nodes {
		r := runtimeOf(n)
		if r == "" || seen != "" && r != seen {
			return "", false
		}
		seen = r
	}
	return seen, seen != ""
}

// runtimeSeparates is the summary's sentence when the runtime
// configuration separates the failing from the healthy nodes.
func runtimeSeparates(failing, healthy []*report.SweepNode) string {
	if runtimeDivergence(failing, healthy) == "" {
		return ""
	}
	f, _ := oneRuntime(failing)
	h, _ := oneRuntime(healthy)
	return fmt.Sprintf(" Their runtime's configuration separates them: the failing nodes run %s, the healthy ones %s.", f, h)
}
