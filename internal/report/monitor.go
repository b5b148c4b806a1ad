package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// MonitorStatus is what one node's agent serves on /status: its latest
// verdict for every image it walks.
type MonitorStatus struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"` // MonitorStatus
	Node       string          `json:"node"`
	Pool       string          `json:"pool,omitempty"`
	Zone       string          `json:"zone,omitempty"`
	Subnet     string          `json:"subnet,omitempty"`
	Status     verdict.Status  `json:"status,omitempty"` // ok | fail; empty before the first walk
	Targets    []MonitorTarget `json:"targets"`
	StartedAt  time.Time       `json:"startedAt"`
	Rounds     int             `json:"rounds"` // quick rounds finished
}

// MonitorTarget is one image's latest walk from the node.
type MonitorTarget struct {
	Image      string           `json:"image"`
	ImageHost  string           `json:"imageHost"`
	Source     string           `json:"source"`         // flag | config | cluster
	Mode       string           `json:"mode,omitempty"` // quick | full
	Verdict    *verdict.Verdict `json:"verdict,omitempty"`
	Error      string           `json:"error,omitempty"` // the walk could not run
	At         *time.Time       `json:"at,omitempty"`
	DurationMS float64          `json:"durationMs,omitempty"`
	LastOK     *time.Time       `json:"lastOk,omitempty"`
	// Runtime and Mirrors: the node's runtime, its config file and the
	// mirrors in effect for this image, as the walk found them
	// (probesummary.Summary.Runtime and Mirrors).
	Runtime string   `json:"runtime,omitempty"`
	Mirrors []string `json:"mirrors,omitempty"`
}

// MonitorFleetReport is `pullpath monitor status`: every node's latest
// verdict (from the agents' Events on their Nodes), grouped by pool, zone
// and subnet the way explain groups nodes.
type MonitorFleetReport struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"` // MonitorFleetReport
	Source     string              `json:"source"`
	Summary    MonitorFleetSummary `json:"summary"`
	Groups     []MonitorGroup      `json:"groups"`
	Warnings   []string            `json:"warnings,omitempty"`
}

// MonitorFleetSummary counts nodes by their latest verdict.
type MonitorFleetSummary struct {
	Nodes   int `json:"nodes"`
	OK      int `json:"ok"`
	Failing int `json:"failing"`
	Unknown int `json:"unknown"` // no monitor Event (yet, or past the event TTL)
	// DominantCondition is the most common condition of the failing
	// nodes' verdicts.
	DominantCondition verdict.Condition `json:"dominantCondition,omitempty"`
	// ExitCode of `pullpath monitor status` (internal/exitcode): 0 when
	// no node fails, else the probe's code of DominantCondition.
	ExitCode int `json:"exitCode"`
}

// MonitorGroup is the nodes of one pool/zone/subnet.
type MonitorGroup struct {
	Pool    string             `json:"pool"`
	Zone    string             `json:"zone"`
	Subnet  string             `json:"subnet"`
	OK      int                `json:"ok"`
	Failing int                `json:"failing"`
	Unknown int                `json:"unknown"`
	Nodes   []MonitorNodeState `json:"nodes"`
}

// MonitorNodeStatus is a node's latest verdict as its monitor Event says.
type MonitorNodeStatus string

const (
	MonitorNodeOK      MonitorNodeStatus = "ok"
	MonitorNodeFail    MonitorNodeStatus = "fail"
	MonitorNodeUnknown MonitorNodeStatus = "unknown" // no monitor Event (yet, or past the event TTL)
)

// MonitorNodeState is one node's latest monitor Event.
type MonitorNodeState struct {
	Node      string            `json:"node"`
	Status    MonitorNodeStatus `json:"status"` // ok | fail | unknown
	Code      string            `json:"code,omitempty"`
	Condition string            `json:"condition,omitempty"`
	ImageHost string            `json:"imageHost,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	Message   string            `json:"message,omitempty"`
	At        *time.Time        `json:"at,omitempty"`
}
