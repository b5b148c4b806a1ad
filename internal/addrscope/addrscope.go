// Package addrscope says what kind of network an address belongs to, and
// which host an address names.
package addrscope

import (
	"net"
	"net/netip"
)

var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	reserved    = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	doc6        = netip.MustParsePrefix("2001:db8::/32")
)

// Of classifies an address the way a network engineer reads it: private
// (RFC 1918, IPv6 ULA fc00::/7), cgnat (100.64.0.0/10), loopback,
// link-local, documentation (2001:db8::/32, RFC 3849), public, or other
// (unspecified, multicast, reserved, invalid). IPv6's documentation prefix
// is never routed on the internet, so an answer in it is not public; the
// lab's dual-stack VPCs use it for their global addresses (internal/lab's
// _dual-stack-base), and a node must not be told it resolved a private
// endpoint's name to a public address for them. IPv4's documentation
// ranges (198.51.100.0/24, 203.0.113.0/24) stay public: the lab's
// scenarios use them for the public answers of cloud names.
func Of(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(),
		thisNetwork.Contains(ip), reserved.Contains(ip):
		return "other"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case cgnat.Contains(ip):
		return "cgnat"
	case doc6.Contains(ip):
		return "documentation"
	case ip.IsGlobalUnicast():
		return "public"
	}
	return "other"
}

// Host is the host of an "ip:port" or "[ip]:port" address, or the address
// itself when it has no port.
func Host(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
