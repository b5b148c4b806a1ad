package report

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pullpath/pullpath/internal/verdict"
)

// SweepReport is what `pullpath sweep` returns: the plan (which nodes, why
// the others were left out), one result per chosen node (the probe Pod's
// walk and, with --canary, the real kubelet's pull), the node x endpoint
// matrix grouped by pool/zone/subnet, and the divergence as the verdict.
type SweepReport struct {
	APIVersion  string        `json:"apiVersion"`
	Kind        string        `json:"kind"` // SweepReport
	Image       string        `json:"image"`
	ProbeImage  string        `json:"probeImage"`
	CanaryImage string        `json:"canaryImage,omitempty"`
	Namespace   string        `json:"namespace"`
	RunID       string        `json:"runId"`
	DryRun      bool          `json:"dryRun,omitempty"`
	Plan        SweepPlan     `json:"plan"`
	Nodes       []SweepNode   `json:"nodes,omitempty"`
	Groups      []SweepGroup  `json:"groups,omitempty"`
	Endpoints   []SweepColumn `json:"endpoints,omitempty"` // the matrix's columns: every host the pulls used
	Verdict     SweepVerdict  `json:"verdict"`
	Warnings    []string      `json:"warnings,omitempty"`
	StartedAt   time.Time     `json:"startedAt"`
	DurationMS  float64       `json:"durationMs"`
	// TraceCompare puts a failing node's trace beside a healthy node's
	// (probes run with --trace).
	TraceCompare *SweepTraceCompare `json:"traceCompare,omitempty"`
}

// SweepPlan is which nodes the sweep walks from, decided before any Pod
// exists (printed alone by --dry-run).
type SweepPlan struct {
	// Selection says how nodes were chosen: "one Ready node per pool x
	// zone x subnet", "every node (--all)", "one node per zone", ...
	Selection  string        `json:"selection"`
	Selector   string        `json:"selector,omitempty"` // --nodes
	TotalNodes int           `json:"totalNodes"`         // nodes the selector matched
	Groups     int           `json:"groups"`             // pool x zone x subnet groups among them
	Chosen     []PlannedNode `json:"chosen"`
	Skipped    []SkippedNode `json:"skipped,omitempty"`
	EmptyPools []EmptyPool   `json:"emptyPools,omitempty"`
	Unchosen   int           `json:"unchosen"` // eligible nodes not chosen (another node speaks for their group)
	Parallel   int           `json:"parallel"`
	Canary     bool          `json:"canary"`
	Mounts     []string      `json:"mounts,omitempty"` // host paths the probe Pod reads (read-only)
}

// PlannedNode is one node the sweep walks from.
type PlannedNode struct {
	Name         string `json:"name"`
	Group        string `json:"group"` // pool/zone/subnet
	Pool         string `json:"pool,omitempty"`
	Zone         string `json:"zone,omitempty"`
	Subnet       string `json:"subnet,omitempty"`
	SubnetSource string `json:"subnetSource,omitempty"`
	InternalIP   string `json:"internalIP,omitempty"`
	ProviderID   string `json:"providerID,omitempty"`
	Cloud        string `json:"cloud,omitempty"` // aws | azure | gcp | "" (from providerID: nodeplace.Cloud)
	Cordoned     bool   `json:"cordoned,omitempty"`
	// HasImage says whether node.status.images already lists the target
	// image (nil: unknown, the list is empty or full at 50 entries).
	HasImage *bool `json:"hasImage,omitempty"`
	// Resolved is true when the node's OS runs systemd-resolved, so the
	// Pod also mounts /run/systemd/resolve.
	Resolved bool `json:"systemdResolved,omitempty"`
}

// SkippedNode is a node the sweep cannot walk from, and why.
type SkippedNode struct {
	Name   string `json:"name"`
	Group  string `json:"group,omitempty"`
	Reason string `json:"reason"` // NotReady | Windows | virtual-kubelet | Fargate | cordoned | unschedulable-os
	Detail string `json:"detail,omitempty"`
}

// Skip reasons.
const (
	SkipNotReady       = "NotReady"
	SkipWindows        = "Windows"
	SkipVirtualKubelet = "virtual-kubelet"
	SkipFargate        = "Fargate"
	SkipCordoned       = "cordoned"
)

// EmptyPool is a pool known to exist with no node: it cannot be walked from
// until it scales up, which is exactly when it will fail.
type EmptyPool struct {
	Pool   string `json:"pool"`
	Source string `json:"source"` // "--expect-pool", "cluster-autoscaler-status", ...
}

// SweepNode is the outcome on one chosen node.
type SweepNode struct {
	PlannedNode
	Status SweepStatus  `json:"status"` // ok | fail | no-answer
	Probe  *SweepResult `json:"probe,omitempty"`
	Canary *SweepResult `json:"canary,omitempty"`
	// Agreement reconciles probe and canary: agree-ok, agree-fail,
	// differ-fail, canary-only (probe ok, canary fails), probe-only (probe
	// fails, canary ok), or "" without a canary.
	Agreement string `json:"agreement,omitempty"`
	Reconcile string `json:"reconcile,omitempty"` // what the agreement says
	// ProxyDisagree says how probe and canary went different ways about
	// the runtime's proxy, and that the runtime's way is in effect; ""
	// when they did not.
	ProxyDisagree string `json:"proxyDisagree,omitempty"`
	// Verdict is the node's one answer (the probe's, or the Events' when
	// the probe image itself could not be pulled).
	Verdict verdict.Verdict `json:"verdict"`
}

// SweepStatus is the outcome of a sweep's node, Pod or group.
type SweepStatus string

// Statuses of a sweep's nodes and Pods; a group's may also be SweepMixed.
const (
	SweepOK       SweepStatus = "ok"
	SweepFail     SweepStatus = "fail"
	SweepNoAnswer SweepStatus = "no-answer"
	SweepMixed    SweepStatus = "mixed" // a group whose nodes disagree
)

// Sources of a SweepResult.
const (
	SourceProbe       = "probe"              // the probe Pod's termination message
	SourceProbeLogs   = "probe-logs"         // the probe Pod's log (the message was missing or cut)
	SourceProbeEvents = "probe-image-events" // the probe image could not be pulled: the kubelet's Events
	SourceCanary      = "canary"             // the canary Pod's status and Events
	SourceNone        = "none"               // nothing came back
)

// SweepResult is what one Pod told.
type SweepResult struct {
	Pod     string          `json:"pod"`
	Source  string          `json:"source"`
	Status  SweepStatus     `json:"status"` // ok | fail | no-answer
	Verdict verdict.Verdict `json:"verdict"`
	Hops    []SweepHop      `json:"hops,omitempty"`
	Mirror  bool            `json:"mirror,omitempty"` // a hosts.toml mirror served (probe)
	// Warnings are the codes of the probe's warnings (ProbeSummary.Warnings).
	Warnings   []verdict.Code `json:"warnings,omitempty"`
	Cached     *bool          `json:"cached,omitempty"` // canary: the node already held the image
	Evidence   string         `json:"evidence,omitempty"`
	Message    string         `json:"message,omitempty"` // the kubelet's message (redacted) or why nothing came back
	DurationMS float64        `json:"durationMs"`

	// Credentials are where the probe's credentials came from, in the
	// kubelet's order (ProbeSummary.Credentials).
	Credentials []string `json:"credentials,omitempty"`

	// Proxy is how the probe walked (ProbeSummary.Proxy): "proxy
	// HOST:PORT, from ORIGIN", "direct, from ORIGIN", or "".
	Proxy string `json:"proxy,omitempty"`

	// Traces are the probe's traces (ProbeSummary.Traces).
	Traces []TraceSummary `json:"traces,omitempty"`

	// Runtime and Mirrors: the node's runtime, its config file and the
	// mirrors in effect (ProbeSummary.Runtime, Mirrors).
	Runtime string   `json:"runtime,omitempty"`
	Mirrors []string `json:"mirrors,omitempty"`
}

// SweepHop is one endpoint of one node's pull: the matrix's cell.
type SweepHop struct {
	Host string       `json:"host"`
	Role verdict.Role `json:"role"`
	// Address is the address the node reached the host at (the first that
	// connected), or the first it tried when none did, without the port
	// (IPv4 or IPv6); empty when the host did not resolve.
	Address string       `json:"address,omitempty"`
	Status  StepStatus   `json:"status"`
	Step    string       `json:"step,omitempty"` // the failing step (resolve, connect, tls, ...)
	Code    verdict.Code `json:"code,omitempty"`
}

// SweepColumn is one column of the matrix.
type SweepColumn struct {
	Host string       `json:"host"`
	Role verdict.Role `json:"role"`
}

// SweepGroup is the nodes of one pool/zone/subnet.
type SweepGroup struct {
	Key       string            `json:"key"` // pool/zone/subnet
	Pool      string            `json:"pool,omitempty"`
	Zone      string            `json:"zone,omitempty"`
	Subnet    string            `json:"subnet,omitempty"`
	Nodes     []string          `json:"nodes"`
	Status    SweepStatus       `json:"status"` // ok | fail | mixed | no-answer
	Code      verdict.Code      `json:"code,omitempty"`
	Condition verdict.Condition `json:"condition,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"`
	Role      verdict.Role      `json:"role,omitempty"`
}

// SweepVerdict is the divergence between groups, as one answer.
type SweepVerdict struct {
	Status    verdict.Status    `json:"status"`  // ok | fail
	Pattern   string            `json:"pattern"` // all-ok | subnet | zone | pool | mirror (only the hosts.toml mirror separates) | proxy (only the runtime's proxy separates) | runtime (only the runtime's configuration separates) | all-nodes | mixed | no-answer | none
	Condition verdict.Condition `json:"condition,omitempty"`
	Code      verdict.Code      `json:"code,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"`
	Role      verdict.Role      `json:"role,omitempty"`
	Summary   string            `json:"summary"`
	Advice    []string          `json:"advice,omitempty"`
	Next      []string          `json:"next,omitempty"`
	OK        int               `json:"ok"`
	Failed    int               `json:"failed"`
	NoAnswer  int               `json:"noAnswer"`
	ExitCode  int               `json:"exitCode"` // the sweep's exit code (internal/exitcode), set when it is judged
}

// ProbeSummaryVersion is the schema of ProbeSummary.
const ProbeSummaryVersion = 1

// MaxTerminationMessage is what the kubelet keeps of a termination message
// (the last 4096 bytes); a ProbeSummary stays under it.
const MaxTerminationMessage = 4096

// ProbeSummary is the compact verdict a probe Pod writes to its termination
// message: the verdict and one hop per endpoint, under 4 KiB. The whole
// ProbeReport goes to the Pod's log.
type ProbeSummary struct {
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
	Hops      []SweepHop        `json:"hops,omitempty"`
	Mirror    bool              `json:"mirror,omitempty"`
	// Warnings are the codes of the probe's warnings, each once, at most
	// maxSummaryWarnings (MIRROR_HIDES_UPSTREAM, IPV6_PATH_BROKEN, ...).
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
	Traces []TraceSummary `json:"traces,omitempty"`

	// Runtime is the node's runtime and the config file it reads
	// ("containerd 1.6.20 (k3s) /var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
	// and Mirrors the mirrors in effect for the image's registry, in the
	// runtime's order, each with the file that names it (sweep_runtime.go).
	Runtime string   `json:"runtime,omitempty"`
	Mirrors []string `json:"mirrors,omitempty"`
}

// maxSummaryWarnings bounds the warning codes a summary carries (the
// summary must fit a termination message: 4 KiB).
const maxSummaryWarnings = 6

// SummarizeProbe reads a ProbeReport into its compact summary.
func SummarizeProbe(r *ProbeReport) ProbeSummary {
	s := ProbeSummary{
		V: ProbeSummaryVersion, Node: r.Node, Image: r.Image,
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
	s.Proxy = summarizeProxy(r)
	s.Runtime, s.Mirrors = summarizeRuntime(r)
	s.Traces = SummarizeTraces(r.Traces)
	for _, w := range r.Warnings {
		if len(s.Warnings) < maxSummaryWarnings && !slices.Contains(s.Warnings, w.Code) {
			s.Warnings = append(s.Warnings, w.Code)
		}
	}
	failStep := map[string]string{}
	for _, st := range r.Steps {
		if st.Status == StepFail && st.Endpoint != "" {
			if _, ok := failStep[st.Endpoint]; !ok {
				failStep[st.Endpoint] = st.Name
			}
		}
	}
	for _, e := range r.Endpoints {
		if e == nil {
			continue
		}
		if e.Role == verdict.RoleMirror && e.Status == StepPass {
			s.Mirror = true
		}
		h := SweepHop{Host: e.Host, Role: e.Role, Address: reachedAt(e.Addresses), Status: e.Status, Code: e.Code}
		if e.Status == StepFail {
			h.Step = failStep[e.Host]
		}
		s.Hops = append(s.Hops, h)
	}
	return s
}

// summarizeProxy says how the walk went with the runtime's proxy: the
// first proxy an endpoint went through, or direct, and where the settings
// came from. Proxy URLs in a report carry no password.
func summarizeProxy(r *ProbeReport) string {
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
func reachedAt(as []AddrResult) string {
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
	return AddressHost(at)
}

// AddressHost is the host of an "ip:port" or "[ip]:port" address, or the
// address itself when it has no port.
func AddressHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// Marshal encodes the summary in at most MaxTerminationMessage-96 bytes,
// shortening the summary text, then dropping passing hops, then any hop
// but the failing one, and says so in Cut.
func (s ProbeSummary) Marshal() []byte {
	const limit = MaxTerminationMessage - 96
	b, _ := json.Marshal(s)
	if len(b) <= limit {
		return b
	}
	s.Cut = true
	if len(s.Summary) > 240 {
		s.Summary = s.Summary[:240] + "..."
	}
	for _, h := range s.Hops {
		if len(h.Host) > 253 {
			h.Host = h.Host[:253]
		}
	}
	if b, _ = json.Marshal(s); len(b) <= limit {
		return b
	}
	if len(s.Traces) > 1 {
		s.Traces = s.Traces[:1] // the failing address's, or the first host's
	}
	var keep []SweepHop
	for _, h := range s.Hops {
		if h.Status != StepPass {
			keep = append(keep, h)
		}
	}
	s.Hops = keep
	if b, _ = json.Marshal(s); len(b) <= limit {
		return b
	}
	keep = nil
	for _, h := range s.Hops {
		if h.Host == s.Endpoint {
			keep = append(keep, h)
			break
		}
	}
	s.Hops = keep
	s.Summary = ""
	if len(s.Credentials) > 2 {
		s.Credentials = s.Credentials[:2]
	}
	b, _ = json.Marshal(s)
	return b
}

// Verdict returns the summary as a verdict.
func (s ProbeSummary) Verdict() verdict.Verdict {
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
