package report

import "github.com/pullpath/pullpath/internal/verdict"

// HostChain is the registry's hosts as containerd walks them for one pull
// (hosts.toml mirrors in file order, then the server): one row per host,
// which host finally served each step, what falling through cost, and
// whether the upstream behind a mirror that served would have served too.
// A probe report has one when the runtime's registry config names more
// than one host, or a mirror.
type HostChain struct {
	// Runtime is whose order the chain is: "" for containerd (hosts.toml),
	// RuntimeCRIO for CRI-O (registries.conf, containers/image).
	Runtime string      `json:"runtime,omitempty"`
	File    string      `json:"file,omitempty"` // the hosts.toml (or registries.conf) that applied
	Hosts   []ChainHost `json:"hosts"`
	// Notes say what the runtime does differently from what its files
	// seem to say (a key it ignores, a certs.d folder it does not read).
	Notes []string `json:"notes,omitempty"`
	// ServedBy names the host that finally served each step: resolve (the
	// manifest HEAD containerd resolves the tag with), manifest (the GET of
	// the manifest by digest), blobs (the config and layers). "" when no
	// host served it.
	ServedBy ServedBy `json:"servedBy"`
	// FallThroughMS is the time containerd spends on hosts that fail before
	// one serves, over the whole pull: each failing host is tried again for
	// every request (resolve, each manifest, each wave of blobs).
	FallThroughMS float64 `json:"fallThroughMs"`
	// Requests is how many requests the pull sends through the chain
	// (resolve, manifests, blob waves of max_concurrent_downloads).
	Requests int `json:"requests"`
	// LongestWaitMS is the longest time containerd waits without a byte on
	// one request (the failing hosts before the one that serves): what
	// image_pull_progress_timeout is held against.
	LongestWaitMS float64     `json:"longestWaitMs"`
	Limits        ChainLimits `json:"limits"`
	// Upstream is the upstream walked on its own when a mirror served
	// (--check-upstream).
	Upstream *UpstreamCheck `json:"upstream,omitempty"`
}

// RuntimeCRIO is HostChain.Runtime for CRI-O's order.
const RuntimeCRIO = "cri-o"

// ServedBy is the host that finally served each step of the pull.
type ServedBy struct {
	Resolve  string `json:"resolve"`
	Manifest string `json:"manifest"`
	Blobs    string `json:"blobs"`
}

// ChainOutcome is what became of one host of the chain.
type ChainOutcome string

const (
	ChainServed      ChainOutcome = "served"       // it served at least one step
	ChainFellThrough ChainOutcome = "fell-through" // it failed and containerd moved on to the next host
	ChainStalled     ChainOutcome = "stalled"      // it accepted and never answered: containerd never moves on
	ChainFailed      ChainOutcome = "failed"       // it failed and no later host was tried (the last, or a failure containerd does not fall through)
	ChainNotTried    ChainOutcome = "not-tried"    // an earlier host served every step
	ChainSkipped     ChainOutcome = "skipped"      // its capabilities leave it out of every step of this pull
)

// ChainHost is one host of the chain, in containerd's order.
type ChainHost struct {
	Host         string       `json:"host"` // host[:port]
	URL          string       `json:"url"`  // scheme://host/path, the API root containerd uses
	Role         verdict.Role `json:"role"` // mirror | registry
	Server       bool         `json:"server,omitempty"`
	Capabilities []string     `json:"capabilities"`
	SkipVerify   bool         `json:"skipVerify,omitempty"`
	OverridePath bool         `json:"overridePath,omitempty"`
	// Namespace is the ns= query containerd adds for a host that is not the
	// registry itself ("" for none).
	Namespace string `json:"namespace,omitempty"`
	// Resolves and Fetches: whether containerd's resolver (HEAD of the tag)
	// and fetcher (manifests by digest, blobs) use this host at all.
	Resolves bool   `json:"resolves"`
	Fetches  bool   `json:"fetches"`
	Source   string `json:"source,omitempty"`
	// Repository is the repository asked of this host when the runtime
	// rewrites it (CRI-O's registries.conf prefix and location), "" when
	// it is the image's own.
	Repository string `json:"repository,omitempty"`
	// Via is how the runtime reaches the host when it has proxy settings:
	// "proxy HOST:PORT" or "direct" ("" without proxy settings).
	Via string `json:"via,omitempty"`
	// Steps are this host's own steps: resolve, connect, tls, head, get,
	// blobs.
	Steps   []ChainStep  `json:"steps"`
	Outcome ChainOutcome `json:"outcome"`
	Code    verdict.Code `json:"code,omitempty"`
	Detail  string       `json:"detail,omitempty"`
	// HoldMS is how long containerd waits on this host for one request
	// before it moves on (its dial timeout for a black hole, the measured
	// time for a fast failure); -1 when it never moves on (stalled).
	HoldMS float64 `json:"holdMs"`
	// Tries is how many requests of the pull containerd sends to this host
	// before another serves them.
	Tries int `json:"tries,omitempty"`
}

// ChainStep is one step of one host: resolve, connect (of the proxy when
// the host goes through one), proxy-connect (the CONNECT), tls, head (the
// manifest HEAD containerd resolves with), get (the manifest GET), blobs.
type ChainStep struct {
	Name       string       `json:"name"`
	Status     StepStatus   `json:"status"`
	HTTPStatus int          `json:"httpStatus,omitempty"`
	Code       verdict.Code `json:"code,omitempty"`
	Detail     string       `json:"detail,omitempty"`
	DurationMS float64      `json:"durationMs"`
}

// ChainLimits are the runtime's limits the chain is held against.
type ChainLimits struct {
	// ProgressTimeoutMS is containerd's image_pull_progress_timeout (1.7
	// and later): requests open and no byte for this long cancel the whole
	// pull. 0 when unknown or off (see Note).
	ProgressTimeoutMS float64 `json:"progressTimeoutMs,omitempty"`
	// KubeletDeadline: the kubelet's runtimeRequestTimeout does not bound
	// pulls (it excludes them); the kubelet's pull has no deadline.
	KubeletDeadline string `json:"kubeletDeadline"`
	Note            string `json:"note"`
}

// UpstreamCheck is the upstream registry walked on its own, after a mirror
// served (cache honesty).
type UpstreamCheck struct {
	Host    string       `json:"host"`
	Status  StepStatus   `json:"status"` // pass | fail
	Code    verdict.Code `json:"code,omitempty"`
	Summary string       `json:"summary"`
}
