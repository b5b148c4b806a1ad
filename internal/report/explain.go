package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// ExplainReport is what `pullpath explain` returns: one finding per pull
// failure message, and the correlation of failing and healthy nodes per image.
type ExplainReport struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`            // ExplainReport
	Source     string           `json:"source"`          // "cluster" or "file NAME (FORMAT)"
	Scope      string           `json:"scope,omitempty"` // "pod ns/name", "deployment ns/name", "namespace ns", "all namespaces"
	Findings   []ExplainFinding `json:"findings"`
	Groups     []ExplainGroup   `json:"groups,omitempty"`
	Summary    ExplainSummary   `json:"summary"`
	// Waits are pulls that waited, or wait, in a node's kubelet queue behind
	// other pulls (the kubelet pulls one image at a time by default).
	Waits    []ExplainWait `json:"waits,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
}

// ExplainWait is one pull that waited in the kubelet's queue: a Pulled
// event whose "(D including waiting)" exceeds the pull's own time, or a
// Pulling event with no result yet behind an earlier one on the same node.
type ExplainWait struct {
	Node  string `json:"node"`
	Pod   string `json:"pod,omitempty"`
	Image string `json:"image"`
	// Waited is how long a finished pull sat in the queue (a Pulled event's
	// total minus its pull time); Since is when a pull still open was asked
	// for (its Pulling event).
	Waited string     `json:"waited,omitempty"`
	Pulled string     `json:"pulled,omitempty"` // the pull's own time, for a finished pull
	Since  *time.Time `json:"since,omitempty"`
	// Behind are the earlier pulls of the node still open when this one was
	// asked for ("POD IMAGE since TIME"), the first of them the one pulling.
	Behind  []string `json:"behind,omitempty"`
	Summary string   `json:"summary"`
}

// ExplainFinding is one pull-failure message, read.
type ExplainFinding struct {
	Event     string            `json:"event"` // namespace/name of the Event, "pod ns/name" for a container status, or "line N"
	Pod       string            `json:"pod,omitempty"`
	Node      string            `json:"node,omitempty"`
	Reason    string            `json:"reason,omitempty"` // the kubelet's reason: Failed, BackOff, ErrImagePull, ...
	Count     int               `json:"count,omitempty"`
	Image     string            `json:"image,omitempty"`
	Registry  string            `json:"registry,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"` // the host that failed
	Address   string            `json:"address,omitempty"`
	Role      verdict.Role      `json:"role,omitempty"`
	Method    string            `json:"method,omitempty"`
	URL       string            `json:"url,omitempty"` // redacted
	Step      string            `json:"step,omitempty"`
	Stage     verdict.Stage     `json:"stage,omitempty"`
	Cause     verdict.Cause     `json:"cause"`
	Code      verdict.Code      `json:"code"`
	Condition verdict.Condition `json:"condition,omitempty"`
	Ambiguous bool              `json:"ambiguous,omitempty"`
	Rule      string            `json:"rule"`
	Summary   string            `json:"summary"`
	Advice    []string          `json:"advice,omitempty"`
	Progress  string            `json:"progress,omitempty"` // a stalled pull's timeout and last progress, as the runtime said it
	Message   string            `json:"message"`            // the original text, redacted and cut to 1 KiB
	Attempts  []ExplainAttempt  `json:"attempts,omitempty"` // a multi-attempt message, attempt by attempt
}

// ExplainGroup correlates everything known about one image.
type ExplainGroup struct {
	Image       string            `json:"image"`
	Registry    string            `json:"registry,omitempty"`
	Code        verdict.Code      `json:"code,omitempty"` // the dominant finding for this image
	Stage       verdict.Stage     `json:"stage,omitempty"`
	Cause       verdict.Cause     `json:"cause,omitempty"`
	Condition   verdict.Condition `json:"condition,omitempty"`
	Endpoint    string            `json:"endpoint,omitempty"`
	Findings    int               `json:"findings"` // how many of the report's findings are about this image
	FailingPods []string          `json:"failingPods,omitempty"`
	HealthyPods []string          `json:"healthyPods,omitempty"`
	Nodes       []ExplainNode     `json:"nodes,omitempty"`
	// Pattern is how the failing nodes differ from the healthy ones:
	// subnet | pool | zone | node-age | all-nodes | single-node | mixed | unknown.
	Pattern     string   `json:"pattern"`
	SeparatedBy []string `json:"separatedBy,omitempty"`
	// Where is the verdict's first sentence: which nodes fail, and what
	// sets them apart from the healthy ones.
	Where   string   `json:"where,omitempty"`
	Verdict string   `json:"verdict"`
	Advice  []string `json:"advice,omitempty"`
	Next    []string `json:"next,omitempty"` // commands to run next
}

// Node evidence values.
const (
	EvidenceFailing = "failing"
	EvidenceFresh   = "fresh pull"                  // a healthy replica whose pull was seen
	EvidenceCached  = "cached: evidence of nothing" // healthy, served from the node's cache
	EvidenceUnknown = "unknown"                     // healthy, but whether it pulled or used the cache is unknown
)

// NodeStatus is whether a node fails to pull an image or runs it.
type NodeStatus string

const (
	NodeStatusFailed NodeStatus = "failing"
	NodeStatusOK     NodeStatus = "healthy"
)

// ExplainNode is one node that runs or fails to run the image.
type ExplainNode struct {
	Name         string         `json:"name"`
	Status       NodeStatus     `json:"status"` // failing | healthy
	Pool         string         `json:"pool,omitempty"`
	PoolSource   string         `json:"poolSource,omitempty"` // the label it came from
	Zone         string         `json:"zone,omitempty"`
	Subnet       string         `json:"subnet,omitempty"`
	SubnetSource string         `json:"subnetSource,omitempty"` // "label KEY", "annotation KEY", or "InternalIP /24 (a guess)"
	InternalIP   string         `json:"internalIP,omitempty"`
	Created      *time.Time     `json:"created,omitempty"`
	HasImage     *bool          `json:"hasImage,omitempty"` // node.status.images holds the image; nil when unknown
	Evidence     string         `json:"evidence"`
	Pods         []string       `json:"pods,omitempty"`
	Codes        []verdict.Code `json:"codes,omitempty"`
}

// ExplainSummary counts the findings and gives the exit code.
type ExplainSummary struct {
	Messages          int                       `json:"messages"` // messages read
	Failures          int                       `json:"failures"` // findings that are pull failures
	ByCode            map[verdict.Code]int      `json:"byCode,omitempty"`
	ByCondition       map[verdict.Condition]int `json:"byCondition,omitempty"`
	DominantCondition verdict.Condition         `json:"dominantCondition,omitempty"`
	ExitCode          int                       `json:"exitCode"` // the report's exit code (internal/exitcode), set by explain.Summarize
}
