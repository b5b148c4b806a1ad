package report

import "github.com/pullpath/pullpath/internal/verdict"

// RuntimePull is what the real container runtime said when it pulled the
// same image in the node's namespace (containerd through its CRI plugin,
// driven by crictl as the kubelet drives it), how explain reads that
// message, and whether the readings agree with the probe's. `lab
// --runtime` fills it once and puts it in two places: the lab run's check
// and the probe report beside the probe's verdict.
type RuntimePull struct {
	Runtime    string  `json:"runtime"`          // "containerd 1.6.20"
	Client     string  `json:"client,omitempty"` // "crictl"
	Image      string  `json:"image"`
	Credential bool    `json:"credential"` // the pull carried the node's credentials
	OK         bool    `json:"ok"`         // the pull succeeded
	GRPCCode   string  `json:"grpcCode,omitempty"`
	Message    string  `json:"message,omitempty"`  // verbatim, secrets redacted
	TimedOut   bool    `json:"timedOut,omitempty"` // the client's pull timeout ended it: the runtime gave no answer of its own
	DurationMS float64 `json:"durationMs"`
	TimeoutMS  float64 `json:"pullTimeoutMs"`
	Error      string  `json:"error,omitempty"` // the runtime could not be asked
	// Explain is explain's reading of Message (nil when the pull worked).
	Explain *RuntimeReading `json:"explain,omitempty"`
	// Against is what the readings were compared with: "probe" or
	// "scenario" (the scenario's expect.runtime, where the runtime's message
	// cannot tell what the probe sees).
	Against    string   `json:"against,omitempty"`
	Mismatches []string `json:"mismatches,omitempty"`
	// Note says why the readings were not compared (the probe plays a
	// platform the machine's runtime does not pull for).
	Note string `json:"note,omitempty"`
	// ServedBy and Tried are read from containerd's debug log when the
	// node has a mirror chain: the host that answered each step last with
	// a 2xx, and every host containerd sent a request to, in order.
	ServedBy *ServedBy `json:"servedBy,omitempty"`
	Tried    []string  `json:"tried,omitempty"`
}

// RuntimeReading is explain's classification of a runtime message.
type RuntimeReading struct {
	Stage     verdict.Stage     `json:"stage,omitempty"`
	Cause     verdict.Cause     `json:"cause,omitempty"`
	Condition verdict.Condition `json:"condition,omitempty"`
	Code      verdict.Code      `json:"code,omitempty"`
	Rule      string            `json:"rule,omitempty"`
}

// LabRuntimeExpect is what explain must conclude from the runtime's
// message when that message cannot tell what the probe sees (for example
// a runtime error that names no endpoint); Why says so for the reader.
// Empty fields are not checked.
type LabRuntimeExpect struct {
	Status    verdict.Status    `json:"status,omitempty"` // ok | fail: the runtime's outcome
	Condition verdict.Condition `json:"condition,omitempty"`
	Cause     verdict.Cause     `json:"cause,omitempty"`
	Code      verdict.Code      `json:"code,omitempty"`
	Why       string            `json:"why,omitempty"`
	// PullTimeout bounds the runtime's pull (crictl --pull-timeout, a Go
	// duration) where the runtime itself never gives up: a stalled body
	// in containerd 1.6. Default the hook's.
	PullTimeout string `json:"pullTimeout,omitempty"`
}
