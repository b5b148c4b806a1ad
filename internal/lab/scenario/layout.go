package scenario

import (
	"sort"
	"strings"
)

// Layouts a lab containerd node can play (node.containerd.layout): where
// the distribution keeps containerd's config and its registry folders.
const (
	LayoutDebian       = "debian"       // /etc/containerd/config.toml, version 2 (Debian's containerd 1.6)
	LayoutK3s          = "k3s"          // /var/lib/rancher/k3s/agent/etc/containerd/config.toml, certs.d beside it
	LayoutTalos        = "talos"        // /etc/cri/containerd.toml (version 3) importing /etc/cri/conf.d/cri.toml, hosts in /etc/cri/conf.d/hosts
	LayoutBottlerocket = "bottlerocket" // /etc/containerd/config.toml, inline registry.mirrors and registry.configs
	LayoutContainerd2  = "containerd2"  // /etc/containerd/config.toml, version 3, as the EKS AMI writes it
)

// Containerd binaries a lab node can run (node.containerd.containerd).
const (
	Containerd16 = "1.6" // Debian's package
	Containerd2  = "2"   // test/tools' build of github.com/containerd/containerd/v2
)

// NodeContainerd is a containerd node whose configuration lies where a
// distribution puts it, under the node's own root (lab/layout.go): the
// probe finds and reads it with --host-root (no --certs-dir), and the real
// containerd runs on the same files in a mount namespace where they lie at
// their node paths.
type NodeContainerd struct {
	Layout string `json:"layout"`
	// Containerd is the runtime binary: 1.6 (Debian's, default) or 2
	// (test/tools' containerd 2); version 3 layouts need 2.
	Containerd string `json:"containerd,omitempty"`
	// Mirrors is how the config names the scenario's mirrors and the lab
	// CA: config_path (hosts.toml in the layout's registry folder, the
	// default) or inline (registry.mirrors and registry.configs TLS, what
	// Bottlerocket renders; 1.x only for TLS).
	Mirrors string `json:"mirrors,omitempty"`
	// ConfigPath replaces the layout's config_path (folders separated by
	// ':'); the registry's hosts.toml goes in the first.
	ConfigPath string `json:"configPath,omitempty"`
	// DefaultHost writes the hosts.toml as _default/hosts.toml.
	DefaultHost bool `json:"defaultHost,omitempty"`
	// Decoy writes /etc/containerd/certs.d/REGISTRY/hosts.toml sending the
	// registry to a host that does not resolve: what an operator wrote and
	// this layout's containerd never reads.
	Decoy bool `json:"decoy,omitempty"`
	// DiscardUnpackedLayers writes discard_unpacked_layers = true in the
	// CRI's images section (containerd 2), as the EKS AMI does: the CRI
	// then pulls locally, not through the transfer service, and reads
	// every folder of a config_path list.
	DiscardUnpackedLayers bool `json:"discardUnpackedLayers,omitempty"`
	// Auth puts node.credentials in registry.configs.REGISTRY.auth (as
	// Bottlerocket renders settings.container-registry.credentials)
	// instead of the kubelet's docker config.
	Auth bool `json:"auth,omitempty"`
}

// ContainerdBinary is the binary the node runs.
func (c *NodeContainerd) ContainerdBinary() string {
	if c.Containerd == "" {
		if c.Layout == LayoutTalos || c.Layout == LayoutContainerd2 {
			return Containerd2
		}
		return Containerd16
	}
	return c.Containerd
}

// containerdLayout checks node.containerd.
func (v *validator) containerdLayout() {
	c := v.t.Node.Containerd
	if c == nil {
		return
	}
	if v.t.Node.IsCRIO() {
		v.fail("node.containerd", "a cri-o node has no containerd layout")
	}
	layouts := []string{LayoutDebian, LayoutK3s, LayoutTalos, LayoutBottlerocket, LayoutContainerd2}
	ok := false
	for _, l := range layouts {
		ok = ok || c.Layout == l
	}
	if !ok {
		v.fail("node.containerd.layout", "want one of %s, got %q", strings.Join(layouts, ", "), c.Layout)
	}
	switch c.Containerd {
	case "", Containerd16, Containerd2:
	default:
		v.fail("node.containerd.containerd", "want %s or %s, got %q", Containerd16, Containerd2, c.Containerd)
	}
	if (c.Layout == LayoutTalos || c.Layout == LayoutContainerd2) && c.ContainerdBinary() != Containerd2 {
		v.fail("node.containerd.containerd", "the %s layout's config is version 3, which containerd 1.6 refuses: want %s", c.Layout, Containerd2)
	}
	switch c.Mirrors {
	case "", "config_path":
	case "inline":
		if c.ConfigPath != "" || c.DefaultHost {
			v.fail("node.containerd.mirrors", "inline mirrors take no configPath or defaultHost")
		}
	default:
		v.fail("node.containerd.mirrors", "want config_path or inline, got %q", c.Mirrors)
	}
	if c.DiscardUnpackedLayers && c.ContainerdBinary() != Containerd2 {
		v.fail("node.containerd.discardUnpackedLayers", "is containerd 2's images setting: want containerd: %s", Containerd2)
	}
	if c.Auth && v.t.Node.Credentials == nil {
		v.fail("node.containerd.auth", "node.credentials holds the user and password to write: it is not set")
	}
	if v.t.Registry == nil {
		v.fail("node.containerd", "a layout's registry configuration is for the registry: the scenario has no registry section")
	}
}

// clusterLayouts checks cluster.nodes.HOST.layout.
func (v *validator) clusterLayouts() {
	if v.t.Cluster == nil {
		return
	}
	for _, h := range sortedNodeHosts(v.t.Cluster.Nodes) {
		switch l := v.t.Cluster.Nodes[h].Layout; l {
		case "", LayoutK3s:
		default:
			v.fail("cluster.nodes."+h+".layout", "want %s (or nothing: /etc/containerd), got %q", LayoutK3s, l)
		}
	}
}

func sortedNodeHosts(m map[string]*ClusterNode) []string {
	out := make([]string, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}
