// Package scenario is the lab's scenario file (kind LabScenario) as data:
// its schema (the network of hosts and subnets, the services, the node, the
// probe, the optional cluster and what to expect), loading with extends:,
// validation with one-line errors naming the field, the built-in scenarios,
// and the comparison of a verdict with the expect block.
//
// It is pure: it builds nothing, starts nothing and holds no runtime state.
// internal/lab builds a scenario's network and runs it; internal/lab/cluster
// runs its cluster section. docs/lab.md documents every field.
package scenario

import (
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

// Kind of a scenario file.
const Kind = "LabScenario"

// Scenario is one scenario file: the network, the services, the node, the
// probe to run and the verdict to expect.
type Scenario struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Summary    string `json:"summary"`
	// Extends names a base scenario (a built-in base such as "_ecr-base", or
	// a file path relative to this file) merged under this one.
	Extends string `json:"extends,omitempty"`

	Subnets map[string]*Subnet `json:"subnets"`
	Hosts   map[string]*Host   `json:"hosts"`
	DNS     map[string]*DNS    `json:"dns,omitempty"`

	Registry *Registry `json:"registry"`
	Token    *Service  `json:"token,omitempty"`
	Blob     *Blob     `json:"blob,omitempty"`
	// Proxy is the node's egress proxy, a real squid (proxy.go).
	Proxy *Proxy `json:"proxy,omitempty"`
	// Mirrors are the registry's mirrors in the node's hosts.toml (mirror.go).
	Mirrors *Mirrors `json:"mirrors,omitempty"`

	// NAT64 is a real NAT64 (tayga) on a host (nat64.go).
	NAT64 *NAT64 `json:"nat64,omitempty"`
	// Tunnels are vxlan links between two hosts (path.go).
	Tunnels map[string]*Tunnel `json:"tunnels,omitempty"`

	Node   Node    `json:"node"`
	Probe  Probe   `json:"probe"`
	Expect *Expect `json:"expect,omitempty"`

	// Cluster, when set, runs a real Kubernetes control plane and kubelets
	// on hosts of the lab (cluster.go; run by internal/lab/cluster).
	Cluster *ClusterSpec `json:"cluster,omitempty"`

	// source is where the scenario was read from (file path or builtin:NAME).
	source string
}

// Source is where the scenario was read from.
func (t *Scenario) Source() string { return t.source }

// Subnet is one L2 segment: a bridge inside its router's namespace. The
// router holds the gateway address; every other host attached to the subnet
// gets a veth pair whose far end is a port of that bridge.
type Subnet struct {
	// CIDR is IPv4 or IPv6 (family.go).
	CIDR    string `json:"cidr"`
	Router  string `json:"router"`
	Gateway string `json:"gateway,omitempty"` // default: the first address of CIDR
	// Rate limits what the router sends into the subnet (a token bucket,
	// tc tbf): "8mbit", "512kbit" (path.go).
	Rate string `json:"rate,omitempty"`
}

// Host is one network namespace.
type Host struct {
	// Interfaces maps a subnet name to this host's address on it.
	Interfaces map[string]string `json:"interfaces,omitempty"`
	Routes     []Route           `json:"routes,omitempty"`
	// Forward turns on IP forwarding; implied for a host that routes a subnet.
	Forward  bool   `json:"forward,omitempty"`
	Firewall []Rule `json:"firewall,omitempty"`
	// SNIFilter inspects the TLS connections the host forwards (path.go).
	SNIFilter *SNIFilter `json:"sniFilter,omitempty"`
}

// Route is one entry of a host's routing table.
type Route struct {
	// To is a CIDR, a single address, or "internet" (the two documentation
	// ranges 198.51.100.0/24 and 203.0.113.0/24 that stand for it in the lab).
	// A default route (0.0.0.0/0, "default") is refused.
	To string `json:"to"`
	// Via is the next hop, an address on one of the host's subnets. Empty
	// together with Type for blackhole/unreachable/prohibit routes.
	Via  string `json:"via,omitempty"`
	Type string `json:"type,omitempty"` // "" (unicast), blackhole, unreachable, prohibit
}

// Rule is one firewall rule of a host (nftables, one table per namespace).
type Rule struct {
	Action string `json:"action"`          // drop | reject | clamp-mss (path.go)
	Chain  string `json:"chain,omitempty"` // forward (default) | input | output
	From   string `json:"from,omitempty"`  // source CIDR or address; empty: any
	To     string `json:"to,omitempty"`    // destination CIDR or address (or "internet"); empty: any
	Proto  string `json:"proto,omitempty"` // tcp | udp | icmp; empty: any
	Port   int    `json:"port,omitempty"`  // destination port (tcp/udp only)
	// Comment says what the rule stands for (security group, NACL, ...).
	Comment string `json:"comment,omitempty"`
	// ICMPType narrows proto icmp to one type (path.go): frag-needed,
	// destination-unreachable, time-exceeded, echo-request, echo-reply.
	ICMPType string `json:"icmpType,omitempty"`
	// Percent drops that share of the matching packets at random (loss).
	Percent int `json:"percent,omitempty"`
}

// DNS is one authoritative DNS server (the lab's resolver), run on a host.
type DNS struct {
	Host string `json:"host"`
	Port int    `json:"port,omitempty"` // default 53 (UDP and TCP)
	// Address to listen on (default: the host's first address).
	Address string `json:"address,omitempty"`
	// Zones the server is authoritative for (default: each record's name is
	// its own zone). Names outside every zone get Default.
	Zones []string `json:"zones,omitempty"`
	// Records maps a name to its answer. A name inside a zone without a
	// record gets NXDOMAIN.
	Records map[string]*Record `json:"records,omitempty"`
	// Default answer for names outside every zone: NXDOMAIN (default) or
	// REFUSED.
	Default string `json:"default,omitempty"`
}

// Record is the answer for one name.
type Record struct {
	A []string `json:"a,omitempty"`
	// AAAA are IPv6 addresses (family.go); a and aaaa may go together.
	AAAA  []string `json:"aaaa,omitempty"`
	CNAME string   `json:"cname,omitempty"`
	// Rcode answers this name with NXDOMAIN, SERVFAIL, REFUSED, NODATA (the
	// name exists, no address) or drop (silence), instead of records.
	Rcode string `json:"rcode,omitempty"`
	TTL   int    `json:"ttl,omitempty"`
}

// Service is a TLS server run on a host under a DNS name.
type Service struct {
	Host string `json:"host"` // lab host it runs on
	Name string `json:"name"` // DNS name it is reached by (and its certificate's name)
	Port int    `json:"port,omitempty"`
	// Address to listen on: one of the host's addresses (default: its
	// first, by subnet name).
	Address string `json:"address,omitempty"`
	// TLS: trusted (default: lab CA in the node's certs dir), untrusted (an
	// unknown CA), wrong-name, expired, or none (plain HTTP).
	TLS string `json:"tls,omitempty"`
}

// Blob is the host the registry redirects blob downloads to.
type Blob struct {
	Service
	// Fault makes the blob host misbehave: "" (none), forbidden (403 like S3
	// AccessDenied), corrupt (one byte flipped), stall (a few bytes, then
	// nothing), truncate (half the bytes, then the connection is cut),
	// pause (half the bytes, nothing for Pause, then the rest).
	Fault string `json:"fault,omitempty"`
	// Pause is how long a pause fault sends nothing (default 8s).
	Pause Duration `json:"pause,omitempty"`
}

// Registry is the reference registry.
type Registry struct {
	Service
	Auth  Auth  `json:"auth"`
	Image Image `json:"image"`
}

// Auth is how the registry authenticates pulls.
type Auth struct {
	Mode string `json:"mode,omitempty"` // none (default) | basic | bearer
	// Deny is what the token service answers for a repository the user may
	// not read: forbidden (403 DENIED, ACR-like; the default) or
	// insufficient-scope (a token without access, so the registry answers
	// 401 insufficient_scope, Docker Hub-like).
	Deny  string `json:"deny,omitempty"`
	Users []User `json:"users,omitempty"`
}

// User is one identity and the repositories it may pull.
type User struct {
	Name         string   `json:"name"`
	Password     string   `json:"password"`
	Repositories []string `json:"repositories,omitempty"` // "*" for all; bearer only
}

// Image is the image the registry serves (generated deterministically).
type Image struct {
	Repository string   `json:"repository"`
	Tag        string   `json:"tag"`
	Platforms  []string `json:"platforms,omitempty"` // default linux/amd64; more than one makes an index
	Layers     int      `json:"layers,omitempty"`    // default 2
	LayerSize  int64    `json:"layerSize,omitempty"` // bytes per layer, default 64 KiB
}

// Node is the host playing the Kubernetes node, and its configuration.
type Node struct {
	Host string `json:"host"`
	// Nameservers written to the node's resolv.conf (addresses, port 53).
	Nameservers []string `json:"nameservers,omitempty"`
	Search      []string `json:"search,omitempty"`
	// HostsEntries are extra lines of the node's hosts file ("IP NAME...").
	HostsEntries []string `json:"hostsEntries,omitempty"`
	// Credentials the node has for the registry (docker config); none if nil.
	Credentials *Credentials `json:"credentials,omitempty"`
	// CredentialProvider is a kubelet credential provider plugin on the
	// node (credprovider.go): the probe and the runtime get its credentials
	// as the kubelet would.
	CredentialProvider *CredentialProvider `json:"credentialProvider,omitempty"`
	// TrustLabCA puts the lab CA in the node's certs dir (default true).
	TrustLabCA *bool `json:"trustLabCA,omitempty"`
	// Proxy is the proxy settings in the node's files (proxy.go).
	Proxy *NodeProxy `json:"proxy,omitempty"`
	// Runtime is the node's runtime, containerd (default) or cri-o
	// (crio.go): a cri-o node keeps its registry configuration in
	// registries.conf.d and certs.d under its own root.
	Runtime string `json:"runtime,omitempty"`
	// CRIO is a cri-o node's registries.conf (crio.go).
	CRIO *NodeCRIO `json:"crio,omitempty"`
	// Containerd lays the node's containerd config out as a distribution
	// does (layout.go).
	Containerd *NodeContainerd `json:"containerd,omitempty"`
}

// CredentialProvider is a credential provider plugin on the lab node: it
// answers with these credentials for images of the registry, or fails.
type CredentialProvider struct {
	Username string `json:"username"`
	Password string `json:"password"`
	// Fail makes the plugin exit 1 with this on stderr (as a plugin whose
	// cloud identity is broken does).
	Fail string `json:"fail,omitempty"`
}

// Credentials are a user name and password in the node's docker config.
type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Probe is how pullpath probe is run in the node namespace.
type Probe struct {
	// Image to pull; default REGISTRY/REPOSITORY:TAG of the registry section.
	Image          string   `json:"image,omitempty"`
	Platform       string   `json:"platform,omitempty"`
	ExpectPrivate  bool     `json:"expectPrivate,omitempty"`
	ConnectTimeout Duration `json:"connectTimeout,omitempty"`
	// Timeout bounds the whole probe process (default 60s).
	Timeout Duration `json:"timeout,omitempty"`
	// Args are extra probe flags.
	Args []string `json:"args,omitempty"`
	// ByDigest pulls the registry's image by its digest
	// (REGISTRY/REPOSITORY@sha256:...), computed from the image spec.
	ByDigest bool `json:"byDigest,omitempty"`
}

// Expect is what the probe's verdict must say. Empty fields are not checked.
type Expect = report.LabExpect

// Duration is a time.Duration written as "2s" in YAML.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d.Duration == 0 {
		return []byte(`""`), nil
	}
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON reads "2s", "500ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" || s == `""` {
		d.Duration = 0
		return nil
	}
	if len(s) < 2 || s[0] != '"' {
		return errDuration(s)
	}
	v, err := time.ParseDuration(s[1 : len(s)-1])
	if err != nil || v < 0 {
		return errDuration(s)
	}
	d.Duration = v
	return nil
}

type errDuration string

func (e errDuration) Error() string {
	return "invalid duration " + string(e) + `: want a Go duration such as "2s" or "500ms"`
}
