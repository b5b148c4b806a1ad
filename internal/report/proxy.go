package report

// ProxyConfig is the runtime's proxy settings the walk followed: the
// values (passwords masked), which variable gave each and where it was
// set.
type ProxyConfig struct {
	Origin     string     `json:"origin"` // "the running containerd (pid 812, containerd.service): /proc/812/environ", "--runtime-env FILE", "none found: ..."
	HTTPSProxy string     `json:"httpsProxy,omitempty"`
	HTTPProxy  string     `json:"httpProxy,omitempty"`
	NoProxy    string     `json:"noProxy,omitempty"`
	Disabled   bool       `json:"disabled,omitempty"` // --no-node-proxy
	Sources    []ProxyVar `json:"sources,omitempty"`  // the variable behind each value
	Unit       string     `json:"unit,omitempty"`     // the runtime's systemd unit whose files were read
	Files      []string   `json:"files,omitempty"`    // the files read for the intent
	Intent     []ProxyVar `json:"intent,omitempty"`   // what those files say, when a running process was read too
	Notes      []string   `json:"notes,omitempty"`
}

// ProxyVar is one proxy variable and where it was set.
type ProxyVar struct {
	Name  string `json:"name"`
	Value string `json:"value"` // password masked
	From  string `json:"from"`
}

// EndpointProxy is how the runtime reaches one endpoint: through which
// proxy, or direct and why.
type EndpointProxy struct {
	Via          string `json:"via"`             // proxy | direct
	Proxy        string `json:"proxy,omitempty"` // host:port of the proxy
	Variable     string `json:"variable,omitempty"`
	NoProxyMatch string `json:"noProxyMatch,omitempty"` // the NO_PROXY entry that sends it direct
	Reason       string `json:"reason"`
	// Through a proxy the node resolves and connects to the proxy only.
	Resolve   *Resolution   `json:"resolve,omitempty"`
	Addresses []AddrResult  `json:"addresses,omitempty"`
	Connect   *ProxyConnect `json:"connect,omitempty"`
	// NodeResolve is the endpoint's own name resolved by the node, taken
	// as evidence only (the runtime does not resolve it through a proxy):
	// to tell an internal host from one only the proxy can see.
	NodeResolve *Resolution  `json:"nodeResolve,omitempty"`
	Direct      []AddrResult `json:"direct,omitempty"` // a direct connect tried as evidence
}

// ProxyConnect is one CONNECT exchange with the proxy.
type ProxyConnect struct {
	Target        string  `json:"target"` // host:port asked for
	Status        int     `json:"status,omitempty"`
	Reason        string  `json:"reason,omitempty"`     // the status text, all Go's error shows
	ProxyError    string  `json:"proxyError,omitempty"` // what the proxy says of it (X-Squid-Error)
	Server        string  `json:"server,omitempty"`     // the proxy's Server or Via header
	Authenticated bool    `json:"authenticated,omitempty"`
	DurationMS    float64 `json:"durationMs"`
	Error         string  `json:"error,omitempty"`
	// AuthSchemes are the schemes a 407's Proxy-Authenticate challenges
	// offer (Basic, NTLM, Negotiate, ...), in the proxy's order.
	AuthSchemes []string `json:"authSchemes,omitempty"`
}
