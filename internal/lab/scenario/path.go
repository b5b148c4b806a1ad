package scenario

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The far side of the path (issue 38): tunnels with a lower MTU, links
// that are slow or lossy, and a middlebox that drops by SNI.

// Tunnel is a point-to-point tunnel between two hosts over a subnet both
// have an address on (the underlay): a real vxlan link, the kernel's own
// encapsulation with 50 bytes of outer headers, whose MTU is lower than
// the ends' links as a VPN's is. Routes of the two ends reach the far
// side through the other end's tunnel address.
type Tunnel struct {
	Type     string            `json:"type"`     // vxlan
	Underlay string            `json:"underlay"` // the subnet both ends are on
	CIDR     string            `json:"cidr"`     // the tunnel's own addresses
	Ends     map[string]string `json:"ends"`     // host -> its address inside CIDR; two hosts
	// MTU of the tunnel link (default 1450: vxlan over a 1500 link).
	MTU int `json:"mtu,omitempty"`
}

// EffectiveMTU is the tunnel link's MTU (default 1450).
func (tn *Tunnel) EffectiveMTU() int {
	if tn.MTU == 0 {
		return 1450
	}
	return tn.MTU
}

// Prefix is the tunnel's CIDR, masked.
func (tn *Tunnel) Prefix() netip.Prefix {
	p, _ := netip.ParsePrefix(tn.CIDR)
	return p.Masked()
}

// SNIFilter is a middlebox on a router that inspects the TLS ClientHello
// of every connection to Port and silently drops the connections whose
// server name it blocks (the others pass): TCP connects, the handshake
// never answers, whatever the size of the packets.
type SNIFilter struct {
	Block []string `json:"block"`          // server names whose connections it drops
	Port  int      `json:"port,omitempty"` // default 443
	// ListenPort is where the filter's relay listens on the host's first
	// address (default 15443).
	ListenPort int `json:"listenPort,omitempty"`
}

// EffectivePort is the port the filter inspects (default 443).
func (f *SNIFilter) EffectivePort() int {
	if f.Port == 0 {
		return 443
	}
	return f.Port
}

// EffectiveListenPort is the relay's port (default 15443).
func (f *SNIFilter) EffectiveListenPort() int {
	if f.ListenPort == 0 {
		return 15443
	}
	return f.ListenPort
}

// ICMP types a firewall rule may match (icmpType), as nftables names them;
// frag-needed is destination-unreachable code 4, what path MTU discovery
// depends on.
var icmpTypes = []string{"frag-needed", "destination-unreachable", "time-exceeded", "echo-request", "echo-reply"}

// rateRE is a tc rate: 8mbit, 512kbit, 2gbit.
var rateRE = regexp.MustCompile(`^[1-9][0-9]{0,5}(kbit|mbit|gbit)$`)

// TunnelAddr is host's address on a tunnel whose end it is, and whether it
// has one.
func (t *Scenario) tunnelPrefixes(host string) []netip.Prefix {
	var out []netip.Prefix
	for _, n := range sortedKeys(t.Tunnels) {
		if tn := t.Tunnels[n]; tn != nil {
			if _, ok := tn.Ends[host]; ok {
				out = append(out, tn.Prefix())
			}
		}
	}
	return out
}

// AddrOn is host's address on subnet sn: its interface address, or the
// gateway when it routes sn.
func (t *Scenario) AddrOn(host, sn string) (netip.Addr, bool) {
	s := t.Subnets[sn]
	if s == nil {
		return netip.Addr{}, false
	}
	if s.Router == host {
		return s.GatewayAddr(), true
	}
	if h := t.Hosts[host]; h != nil {
		if a, err := netip.ParseAddr(h.Interfaces[sn]); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// tunnels validates the tunnels section.
func (v *validator) tunnels() {
	t := v.t
	for i, n := range sortedKeys(t.Tunnels) {
		tn := t.Tunnels[n]
		f := "tunnels." + n
		if tn == nil {
			v.fail(f, "want type, underlay, cidr and ends")
			continue
		}
		if !hostRE.MatchString(n) {
			v.fail(f, "tunnel name must be 1-15 lowercase letters, digits or dashes, starting with a letter")
		}
		if i > 9 {
			v.fail(f, "at most ten tunnels")
		}
		if tn.Type != "vxlan" {
			v.fail(f+".type", "want vxlan, got %q", tn.Type)
		}
		if _, ok := t.Subnets[tn.Underlay]; !ok {
			v.fail(f+".underlay", "no such subnet %q", tn.Underlay)
			continue
		}
		p, err := netip.ParsePrefix(tn.CIDR)
		if err != nil || !p.Addr().Is4() {
			v.fail(f+".cidr", "want an IPv4 CIDR, got %q", tn.CIDR)
			continue
		}
		for _, sn := range sortedKeys(t.Subnets) {
			if s := t.Subnets[sn]; s != nil && s.Prefix().Overlaps(p) {
				v.fail(f+".cidr", "%s overlaps subnet %s", p, sn)
			}
		}
		if len(tn.Ends) != 2 {
			v.fail(f+".ends", "want two hosts, got %d", len(tn.Ends))
		}
		for _, h := range sortedKeys(tn.Ends) {
			if _, ok := t.Hosts[h]; !ok {
				v.fail(f+".ends."+h, "no such host %q", h)
				continue
			}
			if _, ok := t.AddrOn(h, tn.Underlay); !ok {
				v.fail(f+".ends."+h, "host %s has no address on the underlay subnet %s", h, tn.Underlay)
			}
			a, err := netip.ParseAddr(tn.Ends[h])
			if err != nil || !usable(p.Masked(), a) {
				v.fail(f+".ends."+h, "want a host address inside %s, got %q", p, tn.Ends[h])
			}
		}
		if tn.MTU != 0 && (tn.MTU < 1280 || tn.MTU > 1450) {
			v.fail(f+".mtu", "want 1280 to 1450 (vxlan adds 50 bytes to a 1500 link), got %d", tn.MTU)
		}
	}
}

// pathRule checks the parts of a firewall rule this file adds: icmpType,
// percent and the clamp-mss action.
func (v *validator) pathRule(f string, r Rule) {
	if r.ICMPType != "" {
		if r.Proto != "icmp" {
			v.fail(f+".icmpType", "an ICMP type needs proto icmp")
		}
		if !slices.Contains(icmpTypes, r.ICMPType) {
			v.fail(f+".icmpType", "want one of %s, got %q", strings.Join(icmpTypes, ", "), r.ICMPType)
		}
	}
	if r.Percent != 0 && (r.Percent < 1 || r.Percent > 99 || r.Action != "drop") {
		v.fail(f+".percent", "want 1 to 99 with action drop (random loss), got %d", r.Percent)
	}
	if r.Action == "clamp-mss" && (r.Chain != "" && r.Chain != "forward" || r.Proto != "" && r.Proto != "tcp" || r.Port != 0) {
		v.fail(f+".action", "clamp-mss rewrites the MSS of forwarded SYNs: chain forward, no proto but tcp, no port")
	}
}

// pathHosts validates the hosts' SNI filters and the subnets' rates.
func (v *validator) pathHosts() {
	t := v.t
	for _, n := range sortedKeys(t.Hosts) {
		h := t.Hosts[n]
		if h == nil || h.SNIFilter == nil {
			continue
		}
		f := "hosts." + n + ".sniFilter"
		if len(t.HostAddrs(n)) == 0 {
			v.fail(f, "host %s has no address for the filter to listen on", n)
		}
		if len(h.SNIFilter.Block) == 0 {
			v.fail(f+".block", "want at least one server name")
		}
		for i, b := range h.SNIFilter.Block {
			if !dnsNameRE.MatchString(b) {
				v.fail(fmt.Sprintf("%s.block[%d]", f, i), "want a server name, got %q", b)
			}
		}
		for _, p := range []struct {
			n string
			v int
		}{{"port", h.SNIFilter.Port}, {"listenPort", h.SNIFilter.ListenPort}} {
			if p.v < 0 || p.v > 65535 {
				v.fail(f+"."+p.n, "want 1-65535, got %d", p.v)
			}
		}
	}
	for _, sn := range sortedKeys(t.Subnets) {
		if s := t.Subnets[sn]; s != nil && s.Rate != "" && !rateRE.MatchString(s.Rate) {
			v.fail("subnets."+sn+".rate", "want a rate such as 8mbit or 512kbit, got %q", s.Rate)
		}
	}
}

// pathExpect checks expect.runtime.pullTimeout.
func (v *validator) pathExpect() {
	e := v.t.Expect
	if e == nil || e.Runtime == nil || e.Runtime.PullTimeout == "" {
		return
	}
	if d, err := time.ParseDuration(e.Runtime.PullTimeout); err != nil || d <= 0 {
		v.fail("expect.runtime.pullTimeout", "want a Go duration such as \"15s\", got %q", e.Runtime.PullTimeout)
	}
}
