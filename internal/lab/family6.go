package lab

import "net/netip"

// IPv6 in lab namespaces (scenario/family.go). A scenario with an IPv6
// subnet gets IPv6 in every one of its namespaces; the others keep
// disable_ipv6=1. Nothing makes a route by itself: router advertisements
// are ignored (accept_ra=0, autoconf=0), and addresses skip duplicate
// address detection (accept_dad=0 and nodad), so they are usable at once
// rather than "tentative" for a second or two.

// sysctls6 are the IPv6 sysctls of a namespace of an IPv6 scenario, set
// before any interface exists so "default" covers them all.
func sysctls6(forward bool) []string {
	f := "0"
	if forward {
		f = "1"
	}
	var out []string
	for _, c := range []string{"all", "default"} {
		out = append(out,
			"net.ipv6.conf."+c+".disable_ipv6=0",
			"net.ipv6.conf."+c+".accept_ra=0",
			"net.ipv6.conf."+c+".autoconf=0",
			"net.ipv6.conf."+c+".accept_dad=0",
			"net.ipv6.conf."+c+".dad_transmits=0",
			"net.ipv6.conf."+c+".router_solicitations=0",
			"net.ipv6.conf."+c+".forwarding="+f,
		)
	}
	return out
}

// bridgeOpts are the options of an IPv6 subnet's bridge: no multicast
// snooping, so neighbour solicitations (multicast) always reach every port
// without waiting for an MLD querier the lab does not run.
func bridgeOpts(p netip.Prefix) string {
	if p.Addr().Is6() {
		return " mcast_snooping 0"
	}
	return ""
}

// addrOpts are the options of an address: nodad for IPv6.
func addrOpts(a netip.Addr) string {
	if a.Is6() {
		return " nodad"
	}
	return ""
}
