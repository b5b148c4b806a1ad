package explain

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// The kernel's answer to a dial says what the node lacks for the
// address's family, and Go prints it verbatim (net.OpError "dial tcp
// ADDR: " around os.SyscallError "connect: " or "socket: "), so the errno
// and the address's family together name the place to look:
//
//	ENETUNREACH   network is unreachable             no route at all for the family, not even a default one
//	EADDRNOTAVAIL cannot assign requested address    IPv6: no IPv6 source address (only link-local, or IPv6 off on the interface);
//	                                                 IPv4: no free source port (ephemeral ports exhausted) or the source address is gone
//	EAFNOSUPPORT  address family not supported ...   socket(): the family is disabled in the kernel (ipv6.disable=1)
//	EACCES, EPERM permission denied / not permitted  the node's own firewall (a DROP in OUTPUT) or a security module refused the connect
//
// and Go's own errNoSuitableAddress ("no suitable address found", net/
// ipsock.go filterAddrList) means every address of the name was of a
// family the dial may not use (tcp4 or tcp6, or a local address of the
// other family). Go's dialer (net/dial.go dialParallel) tries the first
// family of the sorted addresses and falls back to the other; when both
// fail it returns the first family's error, so an IPv6 address here means
// the IPv4 attempt failed too, or the host has no A record.
type dialErrno struct {
	text string // as Go prints it after "connect: " or "socket: "
	v4   string // what it means for an IPv4 address ("" when no hint)
	v6   string // for an IPv6 address
}

var dialErrnos = []dialErrno{
	{"connect: network is unreachable",
		"%[1]s is IPv4 and the node has no route for it at all, not even a default one (network is unreachable). On an IPv6-only node (an EKS IPv6 cluster, an IPv6-only pool) that is the cause: %[2]s answered an A record the node cannot use; give the subnet DNS64 and NAT64 (a NAT gateway and a route for 64:ff9b::/96 to it) or use %[3]s. On an IPv4 node, the node lacks a default route. `pullpath probe IMAGE` on the node lists each hop's families (ADDRESS_FAMILY_UNUSABLE).",
		"%[1]s is IPv6 and the node has no IPv6 route for it, not even a default one (network is unreachable). Go's dialer reports the first family it tried: if %[2]s also has an A record, the IPv4 attempt failed too; if it has only AAAA records, the node needs an IPv6 default route (::/0 to an egress-only internet gateway or the cloud's IPv6 egress) or the registry's IPv4 name. `pullpath probe IMAGE` on the node shows both families per hop (IPV6_PATH_BROKEN, IPV4_PATH_BROKEN)."},
	{"connect: cannot assign requested address",
		"%[1]s is IPv4 and the kernel could not give the connection a source (cannot assign requested address): the ephemeral ports toward this address are exhausted (thousands of connections in TIME_WAIT, `ss -s` on the node) or the source address the dial was bound to is gone. This is the node's own state, not the path.",
		"%[1]s is IPv6 and the node has no IPv6 address to send from (cannot assign requested address): only a link-local address, or IPv6 switched off on the interface, while %[2]s answered an AAAA record first. Give the node a global IPv6 address and route, or make the name resolve to IPv4 only for it (a resolver without AAAA answers, or the registry's IPv4-only name); Docker Hub and other dual-stack registries answer AAAA since 2023."},
	{"socket: address family not supported by protocol",
		"The kernel refused to open an IPv4 socket (address family not supported by protocol): the node runs without IPv4, and %[1]s needs it: DNS64 and NAT64, or an IPv6 name for %[2]s.",
		"The kernel refused to open an IPv6 socket for %[1]s (address family not supported by protocol): IPv6 is disabled on the node (ipv6.disable=1 on the kernel command line) while %[2]s answered an AAAA record. Enable IPv6 in the kernel (it can stay unconfigured: Go then falls back to IPv4 at once), or resolve the name to IPv4 only for this node."},
	{"connect: permission denied",
		"The kernel refused the connect to %[1]s (permission denied, EACCES): the node's own security module (SELinux, AppArmor) or an eBPF connect hook denied it before any packet; look at the node's audit log, not the network.",
		"The kernel refused the connect to %[1]s (permission denied, EACCES): the node's own security module (SELinux, AppArmor) or an eBPF connect hook denied it before any packet; look at the node's audit log, not the network."},
	{"connect: operation not permitted",
		"The kernel refused the connect to %[1]s (operation not permitted, EPERM): a DROP for this destination in the node's own OUTPUT chain (iptables/nftables) or an eBPF host policy (Cilium) refused it before any packet left; `iptables -S OUTPUT` and `nft list ruleset` on the node.",
		"The kernel refused the connect to %[1]s (operation not permitted, EPERM): a DROP for this destination in the node's own OUTPUT chain (ip6tables/nftables) or an eBPF host policy (Cilium) refused it before any packet left; `ip6tables -S OUTPUT` and `nft list ruleset` on the node."},
}

// familyHint says what the kernel's answer to a dial means for the
// address's family, or "" when the message has no such answer.
func familyHint(c Classification, lower string) string {
	switch c.Code {
	case verdict.ConnectUnreachable, verdict.AddressFamilyUnusable, verdict.ConnectError:
	default:
		return "" // a proxy's address, or an errno that is not the cause
	}
	host := c.Host
	if host == "" {
		host = "the host"
	}
	if strings.Contains(lower, "no suitable address found") {
		return fmt.Sprintf("Go's dialer found no address of %s that this dial may use (no suitable address found): every address the name has is of the other family (only AAAA records for a dial restricted to IPv4, or the reverse), so nothing was sent. Give the name a record of the node's family, or the node the other family.", host)
	}
	if c.Address == "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(c.Address)
	if err != nil {
		return ""
	}
	addr := strings.ToLower(c.Address)
	for _, e := range dialErrnos {
		if !strings.Contains(lower, addr+": "+e.text) {
			continue
		}
		format := e.v6
		if ap.Addr().Unmap().Is4() {
			format = e.v4
		}
		other := "a name with an AAAA record"
		if verdict.DetectPlatform(c.Host) == verdict.PlatformECR {
			other = "ECR's dual-stack name (ACCOUNT.dkr-ecr.REGION.on.aws; not served over PrivateLink)"
		}
		return fmt.Sprintf(format, ap.Addr(), host, other)
	}
	return ""
}

// resolverFamilyHint: Go's resolver dials the nameservers of resolv.conf
// itself, so a nameserver of a family the node cannot use fails the same
// way ("dial udp [::1]:53: socket: address family not supported by
// protocol" on a node with IPv6 disabled and an IPv6 nameserver).
func resolverFamilyHint(c Classification, lower string) string {
	if c.Nameserver == "" || !strings.Contains(lower, "dial udp") {
		return ""
	}
	for _, e := range []string{"socket: address family not supported by protocol", "connect: network is unreachable", "connect: cannot assign requested address"} {
		if strings.Contains(lower, e) {
			return fmt.Sprintf("The nameserver %s is of a family the node cannot use (%s): /etc/resolv.conf on the node names it (systemd-resolved's stub, a DHCPv6 or router-advertised server) while that family is disabled or unrouted. Name a nameserver of the node's family, or enable the family.", c.Nameserver, strings.TrimPrefix(strings.TrimPrefix(e, "socket: "), "connect: "))
		}
	}
	return ""
}
