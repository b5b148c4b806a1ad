package report

import "github.com/pullpath/pullpath/internal/verdict"

// ProbeIdentity is how the probe authenticated as the kubelet does: the
// credential sources it read, the plugins it ran, and one walk per
// credential in the kubelet's order. No secret is ever stored here.
type ProbeIdentity struct {
	// ProviderConfig is the credential provider config file (or
	// directory) used, and From how it was found ("--image-credential-
	// provider-config", "the running kubelet's flags (/proc/812/cmdline)",
	// "the EKS convention (...)").
	ProviderConfig string         `json:"providerConfig,omitempty"`
	ProviderBinDir string         `json:"providerBinDir,omitempty"`
	From           string         `json:"from,omitempty"`
	PullSecrets    []string       `json:"pullSecrets,omitempty"` // files, in the kubelet's order
	Plugins        []ProbePlugin  `json:"plugins,omitempty"`
	Attempts       []ProbeAttempt `json:"attempts,omitempty"`
	Notes          []string       `json:"notes,omitempty"`
}

// ProbePlugin is one credential provider plugin run for the image.
type ProbePlugin struct {
	Name     string   `json:"name"`
	Path     string   `json:"path"`
	OK       bool     `json:"ok"`
	Cached   bool     `json:"cached,omitempty"`
	CacheKey string   `json:"cacheKey,omitempty"`
	CacheTTL string   `json:"cacheTTL,omitempty"`
	Patterns []string `json:"patterns,omitempty"` // the auth map's keys
	Error    string   `json:"error,omitempty"`
	Stderr   string   `json:"stderr,omitempty"` // redacted
}

// ProbeAttempt is one walk with one credential.
type ProbeAttempt struct {
	N           int          `json:"n"`
	Credentials string       `json:"credentials"` // "user AWS from credential provider ecr-credential-provider (*.dkr.ecr.*.amazonaws.com)", "anonymous"
	Code        verdict.Code `json:"code"`
	Summary     string       `json:"summary"`
	Chosen      bool         `json:"chosen,omitempty"`

	// From is where the credential came from, compactly: "secret NAME",
	// "provider NAME", or "anonymous".
	From string `json:"from,omitempty"`
}
