package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// Mirror kinds: a real pull-through cache, or one of the broken mirrors of
// internal/labsvc (mirror.go).
const (
	MirrorCache = "cache" // distribution/v3 as a pull-through cache of the registry
)

// mirrorKinds are the kinds a mirror may have, with what each does.
var mirrorKinds = []string{MirrorCache, "silent", "hang", "head-404", "html", "429"}

// Mirrors is the registry's mirror chain: the hosts of the node's
// hosts.toml for the registry (certs.d/REGISTRY/hosts.toml), in
// containerd's order, with the registry last as the server. prepare
// writes the file; the probe and the real containerd both read it.
type Mirrors struct {
	// Hosts are the mirrors in hosts.toml order.
	Hosts []*Mirror `json:"hosts"`
	// UpstreamBreak are firewall rules the registry's host gets once every
	// cache is warm: the upstream breaking behind a cache that holds the
	// image (none: the upstream stays as it is).
	UpstreamBreak []Rule `json:"upstreamBreak,omitempty"`
}

// Mirror is one mirror of the chain: a service on a lab host and what it
// does.
type Mirror struct {
	Service
	// Kind: cache (the reference registry as a pull-through cache of the
	// scenario's registry), or a broken mirror: silent (accepts TCP, never
	// a byte), hang (TLS, then no answer), head-404 (Harbor before 2.1.1:
	// 404 to the manifest HEAD, the rest forwarded), html (200 with a web
	// page), 429 (TOOMANYREQUESTS).
	Kind string `json:"kind"`
	// Capabilities of its [host] table (default pull, resolve).
	Capabilities []string `json:"capabilities,omitempty"`
	// Warm (cache only): the cache pulls the registry's image through
	// itself once at start, so that it holds the tag.
	Warm bool `json:"warm,omitempty"`
	// UpstreamCredentials (cache only): the user name and password the
	// cache gives its upstream (distribution's proxy.username/password),
	// right or wrong; a cache of a registry with basic auth needs them.
	UpstreamCredentials *Credentials `json:"upstreamCredentials,omitempty"`
	// UpstreamFault (cache only): 429, the cache reaches its upstream
	// through a front that answers every manifest request 429
	// TOOMANYREQUESTS (Docker Hub's pull limit) and forwards the rest.
	UpstreamFault string `json:"upstreamFault,omitempty"`
}

// EffectiveCapabilities are the mirror's capabilities (default pull,
// resolve).
func (m *Mirror) EffectiveCapabilities() []string {
	if len(m.Capabilities) == 0 {
		return []string{"pull", "resolve"}
	}
	return m.Capabilities
}

// HostPort is the mirror as hosts.toml names it: NAME[:PORT] (the port
// unless it is the scheme's default).
func (m *Mirror) HostPort() string {
	u := m.BaseURL()
	_, hp, _ := strings.Cut(u, "://")
	return hp
}

// mirrors checks the mirrors section; claim records a service's host:port.
func (v *validator) mirrors(claim func(f string, s *Service)) {
	ms := v.t.Mirrors
	if ms == nil {
		return
	}
	if len(ms.Hosts) == 0 {
		v.fail("mirrors.hosts", "want at least one mirror (kind, host, name)")
	}
	names := map[string]string{}
	for i, m := range ms.Hosts {
		f := fmt.Sprintf("mirrors.hosts[%d]", i)
		if m == nil {
			v.fail(f, "want a mapping with kind, host and name")
			continue
		}
		if !oneOf(m.Kind, mirrorKinds) {
			v.fail(f+".kind", "want one of %s, got %q", strings.Join(mirrorKinds, ", "), m.Kind)
		}
		v.service(f, &m.Service)
		claim(f, &m.Service)
		if other, ok := names[m.HostPort()]; ok {
			v.fail(f+".name", "%s is also %s: hosts.toml names each host once", m.HostPort(), other)
		}
		names[m.HostPort()] = f
		if m.HostPort() == v.t.RegistryKey() {
			v.fail(f+".name", "%s is the registry itself, want the mirror's own name", m.HostPort())
		}
		for j, c := range m.Capabilities {
			if !oneOf(c, []string{"pull", "resolve"}) {
				v.fail(fmt.Sprintf("%s.capabilities[%d]", f, j), "want pull or resolve, got %q", c)
			}
		}
		if m.Warm && m.Kind != MirrorCache {
			v.fail(f+".warm", "only a cache can be warmed, this mirror is %s", m.Kind)
		}
		if c := m.UpstreamCredentials; c != nil && (m.Kind != MirrorCache || c.Username == "" || c.Password == "") {
			v.fail(f+".upstreamCredentials", "want a cache's username and password, got them on a %s mirror or one of them empty", m.Kind)
		}
		if f0 := m.UpstreamFault; f0 != "" && (m.Kind != MirrorCache || f0 != "429") {
			v.fail(f+".upstreamFault", "want 429 on a cache, got %q on a %s mirror", f0, m.Kind)
		}
		if mode := v.t.Registry.Auth.Mode; m.Kind == MirrorCache && mode != "" && mode != "none" && (mode != "basic" || m.UpstreamCredentials == nil) {
			v.fail(f+".kind", "a cache of a registry with auth %s is not supported in the lab: give the registry auth none, or basic with the cache's upstreamCredentials", mode)
		}
	}
	for i, r := range ms.UpstreamBreak {
		v.rule(fmt.Sprintf("mirrors.upstreamBreak[%d]", i), r)
	}
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// NodeMirrors are the mirrors of node host h's hosts.toml, in its order:
// cluster.nodes.HOST.mirrors on a cluster node, every mirror on the netns
// lab's node.
func (t *Scenario) NodeMirrors(h string) []*Mirror {
	if t.Mirrors == nil {
		return nil
	}
	if t.Cluster == nil {
		return t.Mirrors.Hosts
	}
	cn := t.Cluster.Nodes[h]
	if cn == nil {
		return nil
	}
	var out []*Mirror
	for _, name := range cn.Mirrors {
		for _, m := range t.Mirrors.Hosts {
			if m != nil && (name == m.Name || name == m.HostPort()) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// clusterMirrors checks cluster.nodes.HOST.mirrors: each a mirror of
// mirrors.hosts, once; and node.host, whose certs.d the lab's probe reads
// (every mirror, in order), lists them all.
func (v *validator) clusterMirrors() {
	t := v.t
	for _, h := range sortedKeys(t.Cluster.Nodes) {
		cn := t.Cluster.Nodes[h]
		if cn == nil || len(cn.Mirrors) == 0 {
			continue
		}
		f := "cluster.nodes." + h + ".mirrors"
		if t.Mirrors == nil {
			v.fail(f, "names mirrors, but the scenario has no mirrors: section")
			return
		}
		seen := map[string]bool{}
		for i, name := range cn.Mirrors {
			found := false
			for _, m := range t.Mirrors.Hosts {
				if m != nil && (name == m.Name || name == m.HostPort()) {
					found = !seen[m.HostPort()]
					seen[m.HostPort()] = true
				}
			}
			if !found {
				v.fail(fmt.Sprintf("%s[%d]", f, i), "want a mirror of mirrors.hosts (by name), once; got %q", name)
			}
		}
	}
	if t.Mirrors != nil && !slices.Equal(t.NodeMirrors(t.Node.Host), t.Mirrors.Hosts) {
		v.fail("cluster.nodes."+t.Node.Host+".mirrors", "node.host %s is where the lab's probe walks with every mirror of mirrors.hosts: list them all, in order", t.Node.Host)
	}
}
