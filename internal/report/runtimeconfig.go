package report

// RuntimeConfig is step 0 of a probe: which runtime pulls on this node,
// the file it reads, how pullpath found it (and what else it saw), and
// where the registry configuration the walk used comes from. Paths are
// the node's. No credential is ever in it: a source says only that a
// registry has credentials, and from which file and line.
type RuntimeConfig struct {
	Runtime     string `json:"runtime"`          // containerd | cri-o
	Layout      string `json:"layout,omitempty"` // k3s, rke2, talos, canonical-kubernetes, microk8s, k0s, containerd, cri-o, none
	Version     string `json:"version,omitempty"`
	VersionFrom string `json:"versionFrom,omitempty"`
	Rules       string `json:"rules,omitempty"` // whose rules were applied: "containerd 2.x (config version 3)"
	ConfigFile  string `json:"configFile,omitempty"`
	// Files are every config file read, in the runtime's merge order.
	Files    []string `json:"files,omitempty"`
	HowFound string   `json:"howFound"`
	// Candidates are every runtime configuration seen, the chosen one
	// marked, each with why it was or was not chosen.
	Candidates []RuntimeCandidate `json:"candidates,omitempty"`
	// Override says what a flag (--certs-dir) replaced.
	Override string `json:"override,omitempty"`
	// Sources are where the registry configuration comes from, in the
	// order the runtime reads them.
	Sources []RegistrySource `json:"sources,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
}

// RuntimeCandidate is one runtime configuration discovery saw.
type RuntimeCandidate struct {
	Runtime    string `json:"runtime"`
	Layout     string `json:"layout"`
	ConfigFile string `json:"configFile"`
	PID        int    `json:"pid,omitempty"`
	Seen       string `json:"seen"`
	Chosen     bool   `json:"chosen"`
	Why        string `json:"why,omitempty"`
}

// RegistrySource is one place of the runtime's registry configuration.
type RegistrySource struct {
	Kind     string `json:"kind"` // config_path, hosts.toml, mirrors, configs, registries.conf, ...
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Registry string `json:"registry,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Missing  bool   `json:"missing,omitempty"`
}

// Name is the runtime in a few words: "containerd 1.6.20 (k3s)".
func (c *RuntimeConfig) Name() string {
	s := c.Runtime
	if c.Version != "" {
		s += " " + c.Version
	}
	if c.Layout != "" && c.Layout != c.Runtime {
		s += " (" + c.Layout + ")"
	}
	return s
}

// File is the config file read, or "no config file".
func (c *RuntimeConfig) File() string {
	if c.ConfigFile == "" {
		return "no config file"
	}
	return c.ConfigFile
}
