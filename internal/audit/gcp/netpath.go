package gcp

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	compute "google.golang.org/api/compute/v1"
)

// dest is where a host's packets go: the VIP addresses a private zone
// answers, or Google's public addresses (no private zone).
type dest struct {
	Public bool
	V6     bool // Google's public IPv6 addresses (a dual-stack node's first try)
	Addr   netip.Addr
	// VIP is the /30 every address of the answer lies in (one dest
	// stands for the four).
	VIP netip.Prefix
}

func (d dest) String() string {
	switch {
	case d.Public && d.V6:
		return "Google's public IPv6 addresses"
	case d.Public:
		return "Google's public addresses"
	case d.VIP.IsValid():
		return d.VIP.String()
	}
	return d.Addr.String()
}

func dests(a answer) []dest {
	if a.Public {
		return []dest{{Public: true}}
	}
	var out []dest
	seen := map[netip.Prefix]bool{}
	for _, x := range a.Addrs {
		for _, vip := range []netip.Prefix{privateVIP, restrictedVIP} {
			if vip.Contains(x) {
				if !seen[vip] {
					seen[vip] = true
					out = append(out, dest{Addr: x, VIP: vip})
				}
				goto next
			}
		}
		out = append(out, dest{Addr: x})
	next:
	}
	return out
}

const defaultInternetGateway = "default-internet-gateway"

func isDIG(r *compute.Route) bool {
	return strings.HasSuffix(r.NextHopGateway, "/"+defaultInternetGateway)
}

// nextHop names a route's next hop.
func nextHop(r *compute.Route) string {
	switch {
	case r.NextHopGateway != "":
		return lastSeg(r.NextHopGateway)
	case r.NextHopInstance != "":
		return "instance " + lastSeg(r.NextHopInstance)
	case r.NextHopIp != "":
		return "IP " + r.NextHopIp
	case r.NextHopIlb != "":
		return "internal load balancer " + lastSeg(r.NextHopIlb)
	case r.NextHopVpnTunnel != "":
		return "VPN tunnel " + lastSeg(r.NextHopVpnTunnel)
	case r.NextHopPeering != "":
		return "peering " + r.NextHopPeering
	case r.NextHopNetwork != "":
		return "the subnet (local)"
	case r.NextHopHub != "":
		return "hub " + lastSeg(r.NextHopHub)
	}
	return "no next hop"
}

// routeApplies: a route applies to the nodes of the profile when it has no
// tags or shares one with them.
func routeApplies(r *compute.Route, p *nodeProfile) bool {
	return len(r.Tags) == 0 || intersects(r.Tags, p.Tags)
}

// bestRoute is the route Google's VPC picks for d from the profile's nodes:
// the most specific destination range, then the lowest priority number.
// For Google's public addresses only a 0.0.0.0/0 route (::/0 for IPv6) is
// known to cover them. nil when no route covers d.
func (m *Model) bestRoute(p *nodeProfile, d dest) *compute.Route {
	var best *compute.Route
	bestBits := -1
	for _, r := range m.Routes {
		if r == nil || !sameRes(r.Network, m.NetworkPath()) || !routeApplies(r, p) {
			continue
		}
		pfx, err := netip.ParsePrefix(r.DestRange)
		if err != nil || pfx.Addr().Is6() != d.V6 {
			continue
		}
		if d.Public && pfx.Bits() != 0 || !d.Public && !pfx.Contains(d.Addr) {
			continue
		}
		switch {
		case pfx.Bits() > bestBits, pfx.Bits() == bestBits && r.Priority < best.Priority,
			pfx.Bits() == bestBits && r.Priority == best.Priority && isDIG(r) && !isDIG(best):
			best, bestBits = r, pfx.Bits()
		}
	}
	return best
}

// fwVerdict is the egress firewall's decision for TCP 443 to d.
type fwVerdict struct {
	Rule  *compute.Firewall // nil: the implied allow-egress rule
	Allow bool
	// Partial are rules that cover part of the internet only: whether they
	// match Google's public addresses is not decided here.
	Partial []string
}

// egressRules are the enabled egress rules of the node network.
func (m *Model) egressRules() []*compute.Firewall {
	var out []*compute.Firewall
	for _, f := range m.Firewalls {
		if f != nil && !f.Disabled && strings.EqualFold(f.Direction, "EGRESS") && sameRes(f.Network, m.NetworkPath()) {
			out = append(out, f)
		}
	}
	return out
}

// targets reports whether a rule applies to the profile's nodes: no
// targets (all instances), a shared target tag, or the nodes' service
// account among its target service accounts.
func targets(f *compute.Firewall, p *nodeProfile) bool {
	if len(f.TargetTags) > 0 && !intersects(f.TargetTags, p.Tags) {
		return false
	}
	return len(f.TargetServiceAccounts) == 0 || slices.Contains(f.TargetServiceAccounts, p.SA)
}

// allowMissing is an egress allow for TCP 443 to d that would precede
// deny (a lower priority number: at equal priority the deny wins) but
// whose target tags or service accounts miss the profile's nodes: the
// rule written for this path that does not reach this pool.
func (m *Model) allowMissing(p *nodeProfile, d dest, deny *compute.Firewall) *compute.Firewall {
	var best *compute.Firewall
	for _, f := range m.egressRules() {
		if len(f.Denied) > 0 || f.Priority >= deny.Priority || targets(f, p) || !matchesTCP443(allowed(f)) {
			continue
		}
		if covers, _ := coversDest(f.DestinationRanges, d); covers && (best == nil || f.Priority < best.Priority) {
			best = f
		}
	}
	return best
}

// egress443 evaluates the VPC firewall rules for TCP 443 from the profile's
// nodes to d: enabled egress rules of the network that target the nodes
// (all instances, a target tag, or a target service account), in priority
// order, a deny before an allow at the same priority; none matching leaves
// the implied allow-egress rule (priority 65535).
func (m *Model) egress443(p *nodeProfile, d dest) fwVerdict {
	var rules []*compute.Firewall
	for _, f := range m.egressRules() {
		if targets(f, p) {
			rules = append(rules, f)
		}
	}
	sort.SliceStable(rules, func(i, j int) bool {
		if rules[i].Priority != rules[j].Priority {
			return rules[i].Priority < rules[j].Priority
		}
		return len(rules[i].Denied) > 0 && len(rules[j].Denied) == 0
	})
	var v fwVerdict
	for _, f := range rules {
		deny := len(f.Denied) > 0
		if deny && !matchesTCP443(denied(f)) || !deny && !matchesTCP443(allowed(f)) {
			continue
		}
		covers, partial := coversDest(f.DestinationRanges, d)
		if partial {
			v.Partial = append(v.Partial, f.Name)
		}
		if !covers {
			continue
		}
		return fwVerdict{Rule: f, Allow: !deny, Partial: v.Partial}
	}
	v.Allow = true
	return v
}

type protoPorts struct {
	proto string
	ports []string
}

func allowed(f *compute.Firewall) []protoPorts {
	var out []protoPorts
	for _, a := range f.Allowed {
		if a != nil {
			out = append(out, protoPorts{a.IPProtocol, a.Ports})
		}
	}
	return out
}

func denied(f *compute.Firewall) []protoPorts {
	var out []protoPorts
	for _, a := range f.Denied {
		if a != nil {
			out = append(out, protoPorts{a.IPProtocol, a.Ports})
		}
	}
	return out
}

// matchesTCP443: protocol tcp, 6 or all, and no ports (all) or a port or
// range holding 443.
func matchesTCP443(pps []protoPorts) bool {
	for _, pp := range pps {
		if p := strings.ToLower(pp.proto); p != "tcp" && p != "6" && p != "all" {
			continue
		}
		if len(pp.ports) == 0 {
			return true
		}
		for _, port := range pp.ports {
			lo, hi, ok := strings.Cut(port, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= 443 && 443 <= h {
				return true
			}
		}
	}
	return false
}

// coversDest: an egress rule without destination ranges covers every
// address; for Google's public addresses only 0.0.0.0/0 is known to cover
// them (partial reports a narrower public range).
func coversDest(ranges []string, d dest) (covers, partial bool) {
	if len(ranges) == 0 {
		return true, false
	}
	for _, r := range ranges {
		pfx, err := netip.ParsePrefix(r)
		if err != nil {
			if a, err := netip.ParseAddr(r); err == nil {
				pfx = netip.PrefixFrom(a, a.BitLen())
			} else {
				continue
			}
		}
		if pfx.Addr().Is6() != d.V6 {
			continue // a rule's ranges are of one family; the other never matches
		}
		if d.Public {
			if pfx.Bits() == 0 {
				return true, false
			}
			if !pfx.Addr().IsPrivate() {
				partial = true
			}
			continue
		}
		if pfx.Contains(d.Addr) {
			return true, false
		}
	}
	return false, partial
}

// natFor is the Cloud NAT gateway that serves the subnet's primary range
// (public NAT, the subnet's region and network), with its router.
type natRef struct {
	Router *compute.Router
	NAT    *compute.RouterNat
}

func (n natRef) String() string { return fmt.Sprintf("%s on router %s", n.NAT.Name, n.Router.Name) }

// regionNATs are the public NAT gateways of the network in a region.
func (m *Model) regionNATs(region string) []natRef {
	var out []natRef
	for _, r := range m.Routers {
		if r == nil || !sameRes(r.Network, m.NetworkPath()) || lastSeg(r.Region) != region {
			continue
		}
		for _, n := range r.Nats {
			if n != nil && n.Type != "PRIVATE" {
				out = append(out, natRef{r, n})
			}
		}
	}
	return out
}

// covers reports whether a NAT gateway translates the subnet's primary
// range (node traffic leaves from the node's primary address).
func (n natRef) covers(subnetPath string) bool {
	switch n.NAT.SourceSubnetworkIpRangesToNat {
	case "ALL_SUBNETWORKS_ALL_IP_RANGES", "ALL_SUBNETWORKS_ALL_PRIMARY_IP_RANGES":
		return true
	case "LIST_OF_SUBNETWORKS":
		for _, s := range n.NAT.Subnetworks {
			if s == nil || !sameRes(s.Name, subnetPath) {
				continue
			}
			if len(s.SourceIpRangesToNat) == 0 || slices.Contains(s.SourceIpRangesToNat, "ALL_IP_RANGES") || slices.Contains(s.SourceIpRangesToNat, "PRIMARY_IP_RANGE") {
				return true
			}
		}
	}
	return false
}

// portsPerIP is the NAT source ports one NAT IP address gives (1024-65535).
const portsPerIP = 64512

// minPorts is the gateway's minimum ports per VM (64 by default, 32 with
// dynamic port allocation).
func (n natRef) minPorts() int64 {
	if n.NAT.MinPortsPerVm > 0 {
		return n.NAT.MinPortsPerVm
	}
	if n.NAT.EnableDynamicPortAllocation {
		return 32
	}
	return 64
}
