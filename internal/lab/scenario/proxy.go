package scenario

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// Proxy is the node's egress proxy: Debian's squid (squid-openssl for
// interception) run by the lab on a host of its own (internal/lab
// proxy.go), configured from this section. The node learns of it only
// from its own files (node.proxy), as a real node does.
type Proxy struct {
	Host string `json:"host"` // lab host squid runs on
	// Port squid listens on (default 3128).
	Port int `json:"port,omitempty"`
	// Address to listen on: one of the host's addresses (default its first).
	Address string `json:"address,omitempty"`
	// How squid resolves the destinations (the node resolves only the
	// proxy's name): Nameservers (IPv4, port 53; default node.nameservers)
	// and Hosts (name -> IPv4), read first.
	Nameservers []string          `json:"nameservers,omitempty"`
	Hosts       map[string]string `json:"hosts,omitempty"`
	// Users makes squid demand Basic proxy authentication: a CONNECT
	// without these credentials gets 407.
	Users []ProxyUser `json:"users,omitempty"`
	// Deny lists destinations whose CONNECT squid refuses with 403 (squid
	// dstdomain: "registry.example" or ".example" for a domain); Allow,
	// when set, is the only destinations it lets through.
	Deny  []string `json:"deny,omitempty"`
	Allow []string `json:"allow,omitempty"`
	// Intercept makes squid bump TLS with an inspection CA of its own:
	// untrusted (the node does not trust that CA) or trusted (the node's
	// trust holds it, as a corporate image's would).
	Intercept string `json:"intercept,omitempty"`
	// Down starts nothing: the node's proxy address refuses connections.
	Down bool `json:"down,omitempty"`
	// Fault runs the lab's misbehaving proxy (labsvc.BadProxy) instead of
	// squid: reset, close or html (CONNECT 200, then the tunnel is reset,
	// closed, or carries an HTML page), or ntlm-only (407 offering NTLM
	// and Negotiate only).
	Fault string `json:"fault,omitempty"`
}

// ProxyUser is one proxy account.
type ProxyUser struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// EffectivePort is the proxy's port (default 3128).
func (p *Proxy) EffectivePort() int {
	if p.Port == 0 {
		return 3128
	}
	return p.Port
}

// NodeProxy is the proxy settings written into the node's own files,
// where containerd's environment comes from on a real node.
type NodeProxy struct {
	// Env is what the files set: HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or
	// their lower-case names).
	Env map[string]string `json:"env"`
	// Source is the file that carries them: dropin (default:
	// Environment= lines in
	// /etc/systemd/system/containerd.service.d/http-proxy.conf) or
	// etc-environment (/etc/environment, read by that drop-in through
	// EnvironmentFile=/etc/environment, as the EKS proxy guide writes it).
	Source string `json:"source,omitempty"`
	// Running is the environment of the node's running containerd when it
	// differs from the files (they were edited and containerd not
	// restarted); default Env.
	Running map[string]string `json:"running,omitempty"`
}

// Node proxy sources.
const (
	ProxySourceDropIn  = "dropin"
	ProxySourceEtcEnv  = "etc-environment"
	ProxyDropInPath    = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
	ProxyEtcEnvPath    = "/etc/environment"
	defaultProxySource = ProxySourceDropIn
)

// EffectiveSource is the file kind that carries the node's proxy settings.
func (n *NodeProxy) EffectiveSource() string {
	if n.Source == "" {
		return defaultProxySource
	}
	return n.Source
}

// RunningEnv is the running containerd's proxy environment as KEY=VALUE,
// sorted: Running when set, else Env.
func (n *NodeProxy) RunningEnv() []string {
	if n == nil {
		return nil
	}
	m := n.Env
	if n.Running != nil {
		m = n.Running
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// proxyVars are the variables Go's net/http reads.
var proxyVars = map[string]bool{
	"HTTP_PROXY": true, "http_proxy": true, "HTTPS_PROXY": true, "https_proxy": true, "NO_PROXY": true, "no_proxy": true,
}

// ProxyFaults are the values of proxy.fault (labsvc.BadProxyFaults).
var ProxyFaults = []string{"reset", "close", "html", "ntlm-only"}

var proxyIntercepts = map[string]bool{"": true, "untrusted": true, "trusted": true}

// proxy validates the proxy section and node.proxy.
func (v *validator) proxy() {
	if p := v.t.Proxy; p != nil {
		if _, ok := v.t.Hosts[p.Host]; !ok {
			v.fail("proxy.host", "no such host %q", p.Host)
		}
		if p.Port < 0 || p.Port > 65535 {
			v.fail("proxy.port", "want 1-65535, got %d", p.Port)
		}
		if _, ok := v.t.Hosts[p.Host]; ok {
			if _, err := v.t.ListenAddr(p.Host, p.Address, p.EffectivePort()); err != nil {
				v.fail("proxy.address", "%v", err)
			}
		}
		for i, ns := range p.Nameservers {
			if a, err := netip.ParseAddr(ns); err != nil || !a.Is4() {
				v.fail(fmt.Sprintf("proxy.nameservers[%d]", i), "want an IPv4 address, got %q", ns)
			}
		}
		for _, name := range sortedKeys(p.Hosts) {
			if !dnsNameRE.MatchString(name) {
				v.fail("proxy.hosts."+name, "not a DNS name")
			}
			if a, err := netip.ParseAddr(p.Hosts[name]); err != nil || !a.Is4() {
				v.fail("proxy.hosts."+name, "want an IPv4 address, got %q", p.Hosts[name])
			}
		}
		for i, u := range p.Users {
			if u.Name == "" || strings.ContainsAny(u.Name, ": \t") || u.Password == "" {
				v.fail(fmt.Sprintf("proxy.users[%d]", i), "want name (without ':' or spaces) and password")
			}
		}
		for _, l := range []struct {
			field string
			list  []string
		}{{"deny", p.Deny}, {"allow", p.Allow}} {
			for i, d := range l.list {
				if !dnsNameRE.MatchString(strings.TrimPrefix(d, ".")) {
					v.fail(fmt.Sprintf("proxy.%s[%d]", l.field, i), "want a host name or .domain, got %q", d)
				}
			}
		}
		if !proxyIntercepts[p.Intercept] {
			v.fail("proxy.intercept", "want untrusted or trusted (or nothing), got %q", p.Intercept)
		}
		if p.Fault != "" && !slices.Contains(ProxyFaults, p.Fault) {
			v.fail("proxy.fault", "want one of %s, got %q", strings.Join(ProxyFaults, ", "), p.Fault)
		}
		if p.Fault != "" && (p.Down || len(p.Users) > 0 || len(p.Deny) > 0 || len(p.Allow) > 0 || p.Intercept != "") {
			v.fail("proxy.fault", "a faulty proxy is the lab's own, not squid: no down, users, deny, allow or intercept")
		}
		if p.Down && (len(p.Users) > 0 || len(p.Deny) > 0 || len(p.Allow) > 0 || p.Intercept != "") {
			v.fail("proxy.down", "a proxy that is down has no users, deny, allow or intercept")
		}
	}
	if c := v.t.Cluster; c != nil {
		for _, h := range sortedKeys(c.Nodes) {
			if cn := c.Nodes[h]; cn != nil && cn.Proxy != nil {
				v.nodeProxy("cluster.nodes."+h+".proxy", cn.Proxy)
			}
		}
	}
	if n := v.t.Node.Proxy; n != nil {
		v.nodeProxy("node.proxy", n)
	}
}

func (v *validator) nodeProxy(f string, n *NodeProxy) {
	if len(n.Env) == 0 {
		v.fail(f+".env", "want at least one of HTTPS_PROXY, HTTP_PROXY, NO_PROXY")
	}
	for _, e := range []struct {
		field string
		m     map[string]string
	}{{"env", n.Env}, {"running", n.Running}} {
		field, m := e.field, e.m
		for _, k := range sortedKeys(m) {
			if !proxyVars[k] {
				v.fail(f+"."+field+"."+k, "want HTTPS_PROXY, HTTP_PROXY or NO_PROXY (or their lower-case names)")
			}
			if strings.ContainsAny(m[k], "\n\x00\"\\") {
				v.fail(f+"."+field+"."+k, "a value without newlines, quotes or backslashes")
			}
		}
	}
	switch n.Source {
	case "", ProxySourceDropIn, ProxySourceEtcEnv:
	default:
		v.fail(f+".source", "want %s or %s, got %q", ProxySourceDropIn, ProxySourceEtcEnv, n.Source)
	}
}
