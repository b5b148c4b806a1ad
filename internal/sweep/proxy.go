package sweep

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// proxyOf is how node n's walk went with its runtime's proxy settings:
// "proxy HOST:PORT" or "direct" (a walk that found no proxy setting
// reports none: direct, as its runtime goes); "" without a probe result.
func proxyOf(n *report.SweepNode) string {
	if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents || n.Probe.Status == report.SweepNoAnswer {
		return "" // no walk ran
	}
	if n.Probe.Proxy == "" {
		return "direct"
	}
	via, _, _ := strings.Cut(n.Probe.Proxy, ", from ")
	if p, ok := strings.CutPrefix(via, "proxy "); ok {
		host, _, _ := strings.Cut(p, " ")
		return "proxy " + host
	}
	return "direct"
}

// proxyDivergence says when the failing and the healthy nodes differ by
// the proxy their runtime goes through: the healthy ones pull through a
// proxy the failing ones' containerd has no settings for (their unit
// lacks the drop-in: a pool built without it), or the failing ones go
// through a proxy the healthy ones do not use. "" when the proxy does not
// separate them, or a side did not say.
func proxyDivergence(failing, healthy []*report.SweepNode) string {
	fp, hp := map[string]bool{}, map[string]bool{}
	for _, n := range failing {
		fp[proxyOf(n)] = true
	}
	for _, n := range healthy {
		hp[proxyOf(n)] = true
	}
	if fp[""] || hp[""] || len(fp) != 1 || len(hp) != 1 {
		return ""
	}
	var f, h string
	for k := range fp {
		f = k
	}
	for k := range hp {
		h = k
	}
	switch {
	case f == h:
		return ""
	case f == "direct":
		return fmt.Sprintf("The healthy nodes' containerd goes through %s; the failing nodes' has no proxy setting in its environment or files, so they go direct, where the network refuses them: their pool lacks the proxy drop-in (/etc/systemd/system/containerd.service.d/, or the EnvironmentFile= it names). Give their pool the same drop-in (the node template or user data), then restart containerd; or open their direct path.", fromOf(healthy))
	case h == "direct":
		return fmt.Sprintf("The failing nodes' containerd goes through %s, and the healthy ones go direct: the proxy is on the failing path (its reachability, ACL and egress from those nodes), or their NO_PROXY lacks the registry.", fromOf(failing))
	default:
		return fmt.Sprintf("The failing nodes' containerd goes through %s, the healthy ones' through %s: the failing nodes' proxy settings differ from the healthy nodes'.", fromOf(failing), fromOf(healthy))
	}
}

// fromOf is how the first node's walk went and where its proxy settings
// came from (its probesummary.Summary.Proxy).
func fromOf(nodes []*report.SweepNode) string {
	for _, n := range nodes {
		if n.Probe != nil && n.Probe.Proxy != "" {
			return n.Probe.Proxy
		}
	}
	return "no proxy setting in containerd's environment or files"
}

// proxySeparates is the summary's sentence when the proxy separates the
// failing from the healthy nodes ("" when it does not).
func proxySeparates(failing, healthy []*report.SweepNode) string {
	if proxyDivergence(failing, healthy) == "" {
		return ""
	}
	return fmt.Sprintf(" The runtime's proxy separates them: the failing nodes go %s, the healthy ones %s.", viaWords(proxyOf(failing[0])), viaWords(proxyOf(healthy[0])))
}

func viaWords(via string) string {
	if via == "direct" {
		return "direct (no proxy settings for containerd)"
	}
	return "through " + via
}
