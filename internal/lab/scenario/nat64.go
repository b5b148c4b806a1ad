package scenario

import "net/netip"

// NAT64 is a real NAT64 (Debian's tayga, userspace, on a tun device named
// nat64) on a host of the lab: IPv6 packets to Prefix+IPv4 leave the host as
// IPv4 from an address of Pool, as a cloud's NAT gateway with a route for
// the NAT64 prefix does for an IPv6-only subnet. The host forwards; the
// IPv6 side routes Prefix to it and the IPv4 side routes Pool back to it.
type NAT64 struct {
	Host string `json:"host"`
	// Prefix is the NAT64 prefix, a /96 (default 2001:db8:64::/96). Not
	// the well-known 64:ff9b::/96: tayga refuses to translate non-global
	// IPv4 addresses, which all lab addresses are, into it (RFC 6052 3.1).
	Prefix string `json:"prefix,omitempty"`
	// Pool is the IPv4 range tayga maps IPv6 sources into (default
	// 192.168.255.0/24); its first address is tayga's own.
	Pool string `json:"pool,omitempty"`
	// DNS64 is a real DNS64 resolver in front of the scenario's DNS
	// (Debian's unbound, its dns64 module with Prefix), as Route 53
	// Resolver's DNS64 on an IPv6-only subnet: optional.
	DNS64 *DNS64 `json:"dns64,omitempty"`
}

// DNS64 is unbound on Host, answering on Address (port 53) and forwarding
// every question to Upstream (port 53, a lab DNS server); an A-only name's
// AAAA question gets the A record synthesized into the NAT64 prefix.
type DNS64 struct {
	Host     string `json:"host"`
	Address  string `json:"address"`
	Upstream string `json:"upstream"`
}

// Default NAT64 prefix and pool.
var (
	DefaultNAT64Prefix = netip.MustParsePrefix("2001:db8:64::/96")
	DefaultNAT64Pool   = netip.MustParsePrefix("192.168.255.0/24")
)

// PrefixOrDefault is the NAT64 prefix.
func (n *NAT64) PrefixOrDefault() netip.Prefix {
	if p, err := netip.ParsePrefix(n.Prefix); err == nil {
		return p.Masked()
	}
	return DefaultNAT64Prefix
}

// PoolOrDefault is tayga's IPv4 pool.
func (n *NAT64) PoolOrDefault() netip.Prefix {
	if p, err := netip.ParsePrefix(n.Pool); err == nil {
		return p.Masked()
	}
	return DefaultNAT64Pool
}

// Synthesize is the IPv6 address of a through the NAT64 prefix (what DNS64
// answers for an A-only name).
func (n *NAT64) Synthesize(a netip.Addr) netip.Addr {
	b := n.PrefixOrDefault().Addr().As16()
	v4 := a.As4()
	copy(b[12:], v4[:])
	return netip.AddrFrom16(b)
}

// IsNAT64Host reports whether host runs the scenario's NAT64 (it forwards).
func (t *Scenario) IsNAT64Host(host string) bool { return t.NAT64 != nil && t.NAT64.Host == host }

func (v *validator) nat64() {
	n := v.t.NAT64
	if n == nil {
		return
	}
	if _, ok := v.t.Hosts[n.Host]; !ok {
		v.fail("nat64.host", "no such host %q", n.Host)
		return
	}
	if n.Prefix != "" {
		p, err := netip.ParsePrefix(n.Prefix)
		switch {
		case err != nil || !p.Addr().Is6() || p.Bits() != 96 || p.Masked() != p:
			v.fail("nat64.prefix", "want an IPv6 /96 without host bits such as 2001:db8:64::/96, got %q", n.Prefix)
		case p.Addr() == netip.MustParseAddr("64:ff9b::"):
			v.fail("nat64.prefix", "64:ff9b::/96 is the well-known prefix, which tayga refuses for the lab's non-global IPv4 addresses; use a network-specific prefix such as 2001:db8:64::/96")
		}
	}
	if n.Pool != "" {
		p, err := netip.ParsePrefix(n.Pool)
		if err != nil || !p.Addr().Is4() || p.Bits() < 16 || p.Bits() > 29 || p.Masked() != p {
			v.fail("nat64.pool", "want an IPv4 CIDR between /16 and /29 without host bits such as 192.168.255.0/24, got %q", n.Pool)
			return
		}
	}
	pool := n.PoolOrDefault()
	for _, sn := range sortedKeys(v.t.Subnets) {
		if s := v.t.Subnets[sn]; s != nil && s.Prefix().Overlaps(pool) {
			v.fail("nat64.pool", "%s overlaps subnet %s (%s)", pool, sn, s.Prefix())
		}
	}
	if d := n.DNS64; d != nil {
		v.dns64(d)
	}
	var has4, has6 bool
	for _, a := range v.t.HostAddrs(n.Host) {
		has4, has6 = has4 || a.Is4(), has6 || a.Is6()
	}
	if !has4 || !has6 {
		v.fail("nat64.host", "host %s needs an IPv4 and an IPv6 address (it joins both sides)", n.Host)
	}
}

func (v *validator) dns64(d *DNS64) {
	if _, ok := v.t.Hosts[d.Host]; !ok {
		v.fail("nat64.dns64.host", "no such host %q", d.Host)
		return
	}
	if _, err := v.t.ListenAddr(d.Host, d.Address, 53); err != nil || d.Address == "" {
		v.fail("nat64.dns64.address", "want one of host %s's addresses, got %q", d.Host, d.Address)
	}
	up, err := netip.ParseAddr(d.Upstream)
	if err != nil || !plainAddr(up) {
		v.fail("nat64.dns64.upstream", "want the address of a lab DNS server, got %q", d.Upstream)
		return
	}
	for _, name := range sortedKeys(v.t.DNS) {
		if dn := v.t.DNS[name]; dn != nil && (dn.Port == 0 || dn.Port == 53) {
			if a, err := v.t.ListenAddr(dn.Host, dn.Address, 53); err == nil && a == netip.AddrPortFrom(up, 53).String() {
				if a == netip.AddrPortFrom(netip.MustParseAddr(orZero(d.Address)), 53).String() {
					v.fail("nat64.dns64.address", "%s is dns.%s's address too; give unbound another one", d.Address, name)
				}
				return
			}
		}
	}
	v.fail("nat64.dns64.upstream", "no DNS server of the scenario listens on %s port 53", d.Upstream)
}

func orZero(s string) string {
	if _, err := netip.ParseAddr(s); err != nil {
		return "0.0.0.0"
	}
	return s
}
