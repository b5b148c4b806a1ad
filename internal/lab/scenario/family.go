package scenario

import (
	"fmt"
	"net/netip"
)

// IPv6 in the lab. A subnet is of one family: its cidr is IPv4 (10.0.1.0/24)
// or IPv6 (fd00:0:0:1::/64), and its hosts' addresses are of that family. A
// dual-stack host has one interface on an IPv4 subnet and one on an IPv6
// subnet (two bridges of the same router, where a cloud has one subnet with
// both CIDRs: the paths are the same). Routes, firewall rules, DNS records
// (aaaa:) and the node's nameservers take either family. A scenario with an
// IPv6 subnet gets IPv6 in all its namespaces (internal/lab/netns.go), the
// others keep it disabled. ::/0 is a default route and refused as 0.0.0.0/0.

// UsesIPv6 reports whether any subnet of the scenario is IPv6.
func (t *Scenario) UsesIPv6() bool {
	for _, s := range t.Subnets {
		if s != nil && s.Prefix().Addr().Is6() {
			return true
		}
	}
	return false
}

// plainAddr is an address the lab takes: IPv4, or IPv6 that is not an
// IPv4-mapped address and has no zone.
func plainAddr(a netip.Addr) bool {
	return a.Is4() || (a.Is6() && !a.Is4In6() && a.Zone() == "")
}

// cidrProblem says what is wrong with a subnet's CIDR, or "".
func cidrProblem(s string) string {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil || !plainAddr(p.Addr()):
	case p.Addr().Is4() && p.Bits() >= 8 && p.Bits() <= 30:
		return ""
	case p.Addr().Is6() && p.Bits() >= 48 && p.Bits() <= 126:
		if p.Addr().IsLinkLocalUnicast() || p.Addr().IsMulticast() || p.Addr().IsLoopback() {
			return fmt.Sprintf("%s is link-local, multicast or loopback; want unique-local space such as fd00:0:0:1::/64", s)
		}
		return ""
	}
	return fmt.Sprintf("want an IPv4 CIDR between /8 and /30 such as 10.0.1.0/24, or an IPv6 one between /48 and /126 such as fd00:0:0:1::/64, got %q", s)
}

// usable6 reports whether a is a host address of IPv6 prefix p (not the
// subnet-router anycast address, the prefix itself).
func usable6(p netip.Prefix, a netip.Addr) bool {
	return plainAddr(a) && a.Is6() && p.Addr().Is6() && p.Contains(a) && a != p.Masked().Addr()
}

// familyName is "IPv4" or "IPv6".
func familyName(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// sameFamily checks that a route's next hop is of its destination's family.
func (v *validator) routeFamily(f string, r Route) {
	dests, err := ParseDest(r.To)
	if err != nil || len(dests) == 0 || r.Via == "" {
		return
	}
	via, err := netip.ParseAddr(r.Via)
	if err != nil {
		return
	}
	if via.Is4() != dests[0].Addr().Is4() {
		v.fail(f+".via", "next hop %s is %s and the destination %s %s; want one family", via, familyName(via), r.To, familyName(dests[0].Addr()))
	}
}

// ruleFamily checks that a rule's from and to are of one family (an nft
// rule matches ip or ip6 headers, not both).
func (v *validator) ruleFamily(f string, r Rule) {
	if r.From == "" || r.To == "" {
		return
	}
	from, err1 := ParseDest(r.From)
	to, err2 := ParseDest(r.To)
	if err1 != nil || err2 != nil || len(from) == 0 || len(to) == 0 {
		return
	}
	if from[0].Addr().Is4() != to[0].Addr().Is4() {
		v.fail(f+".to", "%s is %s and from %s %s; want one family", r.To, familyName(to[0].Addr()), r.From, familyName(from[0].Addr()))
	}
}

// records6 checks a record's aaaa addresses.
func (v *validator) records6(f string, r *Record) {
	for i, a := range r.AAAA {
		if ip, err := netip.ParseAddr(a); err != nil || !ip.Is6() || !plainAddr(ip) {
			v.fail(fmt.Sprintf("%s.aaaa[%d]", f, i), "want an IPv6 address, got %q", a)
		}
	}
}

// ListenAddrs is where a TCP service listens: its address: field, or the
// host's first address, and on a dual-stack host also its first address of
// the other family (comma separated, as internal/labsvc takes them), so
// the service answers on both its A and AAAA addresses.
func (t *Scenario) ListenAddrs(host, address string, port int) (string, error) {
	first, err := t.ListenAddr(host, address, port)
	if err != nil || address != "" {
		return first, err
	}
	addrs := t.HostAddrs(host)
	for _, a := range addrs[1:] {
		if a.Is4() != addrs[0].Is4() {
			return first + "," + netip.AddrPortFrom(a, uint16(port)).String(), nil
		}
	}
	return first, nil
}
