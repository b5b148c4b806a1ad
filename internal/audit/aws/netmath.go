package aws

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

var (
	anyIPv4 = netip.MustParsePrefix("0.0.0.0/0")
	anyIPv6 = netip.MustParsePrefix("::/0")
	// nat64Prefix is RFC 6052's well-known prefix, the one Route 53
	// Resolver's DNS64 synthesizes from an A record and a NAT gateway
	// translates (the VPC guide's "DNS64 and NAT64").
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
)

// covers reports whether outer holds every address of inner.
func covers(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// parseV6 parses an IPv6 CIDR (a route's DestinationIpv6CidrBlock, an ACL
// entry's Ipv6CidrBlock, a rule's CidrIpv6).
func parseV6(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

func parseV4(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// routeMatch is the route AWS picks for a destination.
type routeMatch struct {
	Route *ec2types.Route
	Dest  string // the route's destination as printed: a CIDR or a pl- id
	Bits  int
	ViaPL bool
}

// lookupRoute picks the route of rt for the destination range dst the way
// the VPC router does: the longest prefix that holds all of dst wins; a
// prefix-list route counts with the length of its CIDR that holds dst; on a
// tie a static CIDR route wins over a prefix-list route. Only the S3
// prefix list's CIDRs are known; other prefix-list routes are ignored. An
// IPv6 dst is looked up among the IPv6 routes (DestinationIpv6CidrBlock).
func (m *Model) lookupRoute(rt *ec2types.RouteTable, dst netip.Prefix) *routeMatch {
	if rt == nil {
		m.given(FileRouteTables)
		return nil
	}
	if dst.Addr().Is6() {
		var best *routeMatch
		for i := range rt.Routes {
			r := &rt.Routes[i]
			d := str(r.DestinationIpv6CidrBlock)
			if p, ok := parseV6(d); ok && covers(p, dst) && (best == nil || p.Bits() > best.Bits) {
				best = &routeMatch{Route: r, Dest: d, Bits: p.Bits()}
			}
		}
		return best
	}
	var best *routeMatch
	consider := func(c routeMatch) {
		if best == nil || c.Bits > best.Bits || c.Bits == best.Bits && best.ViaPL && !c.ViaPL {
			cc := c
			best = &cc
		}
	}
	for i := range rt.Routes {
		r := &rt.Routes[i]
		if d := str(r.DestinationCidrBlock); d != "" {
			if p, ok := parseV4(d); ok && covers(p, dst) {
				consider(routeMatch{Route: r, Dest: d, Bits: p.Bits()})
			}
			continue
		}
		if pl := str(r.DestinationPrefixListId); pl != "" && m.S3PL != nil && pl == str(m.S3PL.PrefixListId) {
			for _, c := range m.S3PLCIDRs {
				if covers(c, dst) {
					consider(routeMatch{Route: r, Dest: pl, Bits: c.Bits(), ViaPL: true})
				}
			}
		}
	}
	return best
}

// prefixListRoute is rt's route to a prefix list, if any.
func prefixListRoute(rt *ec2types.RouteTable, pl string) *ec2types.Route {
	if rt == nil {
		return nil
	}
	for i := range rt.Routes {
		if str(rt.Routes[i].DestinationPrefixListId) == pl {
			return &rt.Routes[i]
		}
	}
	return nil
}

// routeTarget names where a route sends packets.
func routeTarget(r *ec2types.Route) string {
	for _, t := range []*string{r.NatGatewayId, r.TransitGatewayId, r.VpcPeeringConnectionId, r.NetworkInterfaceId, r.InstanceId,
		r.EgressOnlyInternetGatewayId, r.CarrierGatewayId, r.LocalGatewayId, r.CoreNetworkArn, r.GatewayId} {
		if s := str(t); s != "" {
			return s
		}
	}
	return "nothing"
}

func routeString(r *ec2types.Route) string {
	d := str(r.DestinationCidrBlock)
	if d == "" {
		d = str(r.DestinationIpv6CidrBlock)
	}
	if d == "" {
		d = str(r.DestinationPrefixListId)
	}
	s := d + " -> " + routeTarget(r)
	if r.State == ec2types.RouteStateBlackhole {
		s += " (blackhole)"
	}
	return s
}

// peer is one side of a flow as a security group sees it: addresses, the
// security groups of its interfaces, the prefix lists that hold it.
type peer struct {
	prefix netip.Prefix
	sgs    []string
	pls    []string
	name   string
}

// sgPermits reports whether one of perms (security group rules are
// allow-only, stateful: the reply needs no rule) admits TCP port to or from
// p, and the rule that does.
func sgPermits(perms []ec2types.IpPermission, port int32, p peer) (bool, string) {
	for _, perm := range perms {
		if !protoPortMatch(str(perm.IpProtocol), perm.FromPort, perm.ToPort, port) {
			continue
		}
		for _, r := range perm.IpRanges {
			if c, ok := parseV4(str(r.CidrIp)); ok && p.prefix.IsValid() && covers(c, p.prefix) {
				return true, permString(perm, str(r.CidrIp))
			}
		}
		for _, r := range perm.Ipv6Ranges {
			if c, ok := parseV6(str(r.CidrIpv6)); ok && p.prefix.IsValid() && covers(c, p.prefix) {
				return true, permString(perm, str(r.CidrIpv6))
			}
		}
		for _, g := range perm.UserIdGroupPairs {
			if slices.Contains(p.sgs, str(g.GroupId)) {
				return true, permString(perm, str(g.GroupId))
			}
		}
		for _, pl := range perm.PrefixListIds {
			if slices.Contains(p.pls, str(pl.PrefixListId)) {
				return true, permString(perm, str(pl.PrefixListId))
			}
		}
	}
	return false, ""
}

func protoPortMatch(proto string, from, to *int32, port int32) bool {
	switch strings.ToLower(proto) {
	case "-1", "all":
		return true
	case "tcp", "6":
	default:
		return false
	}
	if from == nil || to == nil {
		return true
	}
	if *from == -1 && *to == -1 {
		return true
	}
	return *from <= port && port <= *to
}

func permString(p ec2types.IpPermission, src string) string {
	proto := str(p.IpProtocol)
	if proto == "-1" {
		return "all traffic " + src
	}
	ports := "all"
	if p.FromPort != nil && p.ToPort != nil {
		ports = fmt.Sprint(*p.FromPort)
		if *p.ToPort != *p.FromPort {
			ports += "-" + fmt.Sprint(*p.ToPort)
		}
	}
	return fmt.Sprintf("%s %s %s", proto, ports, src)
}

// aclVerdict is a network ACL's decision for a flow over a port range.
type aclVerdict struct {
	Allowed  bool
	Denied   [][2]int32 // port ranges denied
	DenyRule int32      // the rule that denied (32767 is the final *)
	Notes    []string
}

// evalACL evaluates a network ACL the way AWS does: rules in ascending rule
// number, the first rule whose protocol, ports and CIDR match decides, the
// final * rule denies what nothing matched. NACLs are stateless: the caller
// asks for each direction. The flow's far side is a range (a subnet, a
// prefix-list CIDR); a rule decides it when its CIDR holds the whole range;
// a deny rule that holds only part of it is noted. An IPv6 far side is
// decided by the IPv6 entries (Ipv6CidrBlock), an IPv4 one by the IPv4
// entries: each entry names one family, and the final * rules are one per
// family.
func evalACL(acl *ec2types.NetworkAcl, egress bool, lo, hi int32, far netip.Prefix) aclVerdict {
	v6 := far.Addr().Is6()
	cidrOf := func(e ec2types.NetworkAclEntry) string {
		if v6 {
			return str(e.Ipv6CidrBlock)
		}
		return str(e.CidrBlock)
	}
	parse := parseV4
	if v6 {
		parse = parseV6
	}
	entries := make([]ec2types.NetworkAclEntry, 0, len(acl.Entries))
	for _, e := range acl.Entries {
		if e.Egress != nil && *e.Egress == egress && e.RuleNumber != nil && cidrOf(e) != "" {
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return *entries[i].RuleNumber < *entries[j].RuleNumber })
	undecided := [][2]int32{{lo, hi}}
	v := aclVerdict{Allowed: true}
	for _, e := range entries {
		if len(undecided) == 0 {
			break
		}
		from, to := int32(0), int32(65535)
		switch strings.ToLower(str(e.Protocol)) {
		case "-1", "all":
		case "6", "tcp":
			if e.PortRange != nil && e.PortRange.From != nil && e.PortRange.To != nil {
				from, to = *e.PortRange.From, *e.PortRange.To
			}
		default:
			continue
		}
		c, ok := parse(cidrOf(e))
		if !ok {
			continue
		}
		if !covers(c, far) {
			if c.Overlaps(far) && e.RuleAction == ec2types.RuleActionDeny {
				v.Notes = append(v.Notes, fmt.Sprintf("rule %d denies part of %s (%s)", *e.RuleNumber, far, cidrOf(e)))
			}
			continue
		}
		var rest [][2]int32
		for _, u := range undecided {
			a, b := max(u[0], from), min(u[1], to)
			if a > b {
				rest = append(rest, u)
				continue
			}
			if e.RuleAction != ec2types.RuleActionAllow {
				if v.Allowed {
					v.DenyRule = *e.RuleNumber
				}
				v.Allowed = false
				v.Denied = append(v.Denied, [2]int32{a, b})
			}
			if u[0] < a {
				rest = append(rest, [2]int32{u[0], a - 1})
			}
			if b < u[1] {
				rest = append(rest, [2]int32{b + 1, u[1]})
			}
		}
		undecided = rest
	}
	if len(undecided) > 0 {
		if v.Allowed {
			v.DenyRule = 32767
		}
		v.Allowed = false
		v.Denied = append(v.Denied, undecided...)
	}
	return v
}

func portsString(rs [][2]int32) string {
	var parts []string
	for _, r := range rs {
		if r[0] == r[1] {
			parts = append(parts, fmt.Sprint(r[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r[0], r[1]))
		}
	}
	return strings.Join(parts, ",")
}

// ruleName names a rule; 32767 (IPv4) and 32768 (IPv6) are the final
// deny-all rules AWS prints as *.
func ruleName(n int32) string {
	if n >= 32767 {
		return "rule * (deny all)"
	}
	return fmt.Sprintf("rule %d", n)
}

// deniedWithin reports whether any denied range meets [lo, hi].
func deniedWithin(rs [][2]int32, lo, hi int32) bool {
	for _, r := range rs {
		if r[0] <= hi && lo <= r[1] {
			return true
		}
	}
	return false
}
