package report

// LabRuntime is what the real container runtime said when it pulled the
// scenario's image in the node's namespace (containerd through its CRI
// plugin, driven by crictl as the kubelet drives it), how explain reads
// that message, and whether the readings agree with the probe's.
type LabRuntime struct {
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
	// Explain is explain's reading of Message.
	Explain *LabExplainReading `json:"explain,omitempty"`
	// Against is what the readings were compared with: "probe" or
	// "scenario" (the scenario's expect.runtime, where the runtime's message
	// cannot tell what the probe sees).
	Against    string   `json:"against,omitempty"`
	Mismatches []string `json:"mismatches,omitempty"`
	// Note says why the readings were not compared (the probe plays a
	// platform the machine's runtime does not pull for).
	Note string `json:"note,omitempty"`
}

// LabExplainReading is explain's classification of a runtime message.
type LabExplainReading struct {
	Stage     string `json:"stage,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Condition string `json:"condition,omitempty"`
	Code      string `json:"code,omitempty"`
	Rule      string `json:"rule,omitempty"`
}

// LabRuntimeExpect is what explain must conclude from the runtime's
// message when that message cannot tell what the probe sees (for example
// a runtime error that names no endpoint); Why says so for the reader.
// Empty fields are not checked.
type LabRuntimeExpect struct {
	Status    string `json:"status,omitempty"` // ok | fail: the runtime's outcome
	Condition string `json:"condition,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Code      string `json:"code,omitempty"`
	Why       string `json:"why,omitempty"`
}
