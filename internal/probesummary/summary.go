// Package probesummary is the codec of the compact verdict a probe Pod
// writes to its termination message (`probe --verdict-file`): Of reads a
// ProbeReport into a Summary, Marshal encodes it under the kubelet's 4 KiB,
// and Parse reads it back on the sweep's side. The whole ProbeReport goes
// to the Pod's log. It links no Kubernetes client: the node side (probe,
// the monitor agent) writes it.
package probesummary

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Version is the schema of Summary (its "v").
const Version = 1

// MaxTerminationMessage is what the kubelet keeps of a termination message
// (the last 4096 bytes); a Summary stays under it.
const MaxTerminationMessage = 4096

// Summary is the compact verdict a probe Pod writes to its termination
// message: the verdict and one hop per endpoint, under 4 KiB.
type Summary struct {
	V         int               `json:"v"`
	Node      string            `json:"node,omitempty"`
	Image     string            `json:"image"`
	Status    verdict.Status    `json:"status"`
	Stage     verdict.Stage     `json:"stage,omitempty"`
	Cause     verdict.Cause     `json:"cause,omitempty"`
	Condition verdict.Condition `json:"condition,omitempty"`
	Code      verdict.Code      `json:"code"`
	Endpoint  string            `json:"endpoint,omitempty"`
	Role      verdict.Role      `json:"role,omitempty"`
	Summary   string            `json:"summary,omitempty"`
	Hops      []report.SweepHop `json:"hops,omitempty"`
	Mirror    bool              `json:"mirror,omitempty"`
	// Warnings are the codes of the probe's warnings, each once, at most
	// maxWarnings (MIRROR_HIDES_UPSTREAM, IPV6_PATH_BROKEN, ...).
	Warnings []verdict.Code `json:"warnings,omitempty"`
	Bytes    int64          `json:"bytes,omitempty"`
	MS       float64        `json:"ms"`
	Cut      bool           `json:"cut,omitempty"` // hops or summary were shortened to fit

	// Credentials are where the credentials of each walk came from, in
	// the kubelet's order ("secret NAME", "provider NAME", "anonymous"),
	// when the probe walked with the kubelet's identity.
	Credentials []string `json:"credentials,omitempty"`

	// Proxy is how the walk went with the runtime's proxy settings:
	// "proxy HOST:PORT, from ORIGIN" when an endpoint went through a
	// proxy, "direct, from ORIGIN" when none did, "" when no settings
	// were looked for.
	Proxy string `json:"proxy,omitempty"`

	// Traces are the probe's traces (--trace), compact.
	Traces []report.TraceSummary `json:"traces,omitempty"`

	// Runtime is the node's runtime and the config file it reads
	// ("containerd 1.6.20 (k3s) /var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
	// and Mirrors the mirrors in effect for the image's registry, in the
	// runtime's order, each with the file that names it (runtime.go).
	Runtime string   `json:"runtime,omitempty"`
	Mirrors []string `json:"mirrors,omitempty"`
}

// maxWarnings bounds the warning codes a summary carries (the summary
// must fit a termination message: 4 KiB).
const maxWarnings = 6

// Of reads a ProbeReport into its compact summary.
func Of(r *report.ProbeReport) Summary {
	s := Summary{
		V: Version, Node: r.Node, Image: r.Image,
		Status: r.Verdict.Status, Stage: r.Verdict.Stage, Cause: r.Verdict.Cause, Condition: r.Verdict.Condition,
		Code: r.Verdict.Code, Endpoint: r.Verdict.Endpoint, Role: r.Verdict.Role, Summary: r.Verdict.Summary,
		MS: float64(int64(r.DurationMS)),
	}
	if r.Transfer != nil {
		s.Bytes = r.Transfer.Bytes
	}
	if id := r.Identity; id != nil {
		for _, a := range id.Attempts {
			if a.From != "" && len(s.Credentials) < 8 {
				s.Credentials = append(s.Credentials, cutString(a.From, 120))
			}
		}
	}
	s.Proxy = proxyOf(r)
	s.Runtime, s.Mirrors = runtimeOf(r)
	s.Traces = traces(r.Traces)
	for _, w := range r.Warnings {
		if len(s.Warnings) < maxWarnings && !slices.Contains(s.Warnings, w.Code) {
			s.Warnings = append(s.Warnings, w.Code)
		}
	}
	s.Hops, s.Mirror = hops(r)
	return s
}

// hops is one hop per endpoint walked, with the step that failed, and
// whether a mirror served.
func hops(r *report.ProbeReport) (hops []report.SweepHop, mirror bool) {
	failStep := map[string]string{}
	for _, st := range r.Steps {
		if st.Status == report.StepFail && st.Endpoint != "" {
			if _, ok := failStep[st.Endpoint]; !ok {
				failStep[st.Endpoint] = st.Name
			}
		}
	}
	for _, e := range r.Endpoints {
		if e == nil {
			continue
		}
		if e.Role == verdict.RoleMirror && e.Status == report.StepPass {
			mirror = true
		}
		h := report.SweepHop{Host: e.Host, Role: e.Role, Address: reachedAt(e.Addresses), Status: e.Status, Code: e.Code}
		if e.Status == report.StepFail {
			h.Step = failStep[e.Host]
		}
		hops = append(hops, h)
	}
	return hops, mirror
}

// proxyOf says how the walk went with the runtime's proxy: the first proxy
// an endpoint went through, or direct, and where the settings came from.
// Proxy URLs in a report carry no password.
func proxyOf(r *report.ProbeReport) string {
	if r.Proxy == nil {
		return ""
	}
	via := "direct"
	for _, e := range r.Endpoints {
		if e != nil && e.Proxy != nil && e.Proxy.Via == "proxy" && e.Proxy.Proxy != "" {
			via = "proxy " + e.Proxy.Proxy
			if v := e.Proxy.Variable; v != "" {
				// the file line that set it, when the origin does not say
				for _, src := range r.Proxy.Sources {
					if src.Name == v && src.From != "" && !strings.Contains(r.Proxy.Origin, src.From) {
						via += " (" + v + " in " + src.From + ")"
						break
					}
				}
			}
			break
		}
	}
	return cutString(via+", from "+r.Proxy.Origin, 240)
}

// reachedAt is the address a walk reached an endpoint at: the first that
// connected, else the first tried (the one its verdict names); no port.
func reachedAt(as []report.AddrResult) string {
	if len(as) == 0 {
		return ""
	}
	at := as[0].Address
	for _, a := range as {
		if a.Result == "ok" {
			at = a.Address
			break
		}
	}
	return addrscope.Host(at)
}

// Verdict returns the summary as a verdict.
func (s Summary) Verdict() verdict.Verdict {
	return verdict.Verdict{
		Status: s.Status, Stage: s.Stage, Cause: s.Cause, Condition: s.Condition,
		Code: s.Code, Endpoint: s.Endpoint, Role: s.Role, Summary: s.Summary,
	}
}

// cutString is s cut to at most n bytes, on a rune boundary.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
