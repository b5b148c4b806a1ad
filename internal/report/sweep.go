package report

import (
	"time"

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
	// Warnings are the codes of the probe's warnings (probesummary.Summary.Warnings).
	Warnings   []verdict.Code `json:"warnings,omitempty"`
	Cached     *bool          `json:"cached,omitempty"` // canary: the node already held the image
	Evidence   string         `json:"evidence,omitempty"`
	Message    string         `json:"message,omitempty"` // the kubelet's message (redacted) or why nothing came back
	DurationMS float64        `json:"durationMs"`

	// Credentials are where the probe's credentials came from, in the
	// kubelet's order (probesummary.Summary.Credentials).
	Credentials []string `json:"credentials,omitempty"`

	// Proxy is how the probe walked (probesummary.Summary.Proxy): "proxy
	// HOST:PORT, from ORIGIN", "direct, from ORIGIN", or "".
	Proxy string `json:"proxy,omitempty"`

	// Traces are the probe's traces (probesummary.Summary.Traces).
	Traces []TraceSummary `json:"traces,omitempty"`

	// Runtime and Mirrors: the node's runtime, its config file and the
	// mirrors in effect (probesummary.Summary.Runtime, Mirrors).
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
