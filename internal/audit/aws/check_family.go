package aws

import (
	"fmt"
	"net/netip"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The address-family checks (IPv6-only and dual-stack node subnets). The
// rules are the AWS documents':
//   - ECR's IPv4 names (ACCOUNT.dkr.ecr.REGION.amazonaws.com,
//     api.ecr.REGION.amazonaws.com) and S3's (BUCKET.s3.REGION.amazonaws.com)
//     have only A records; "for making requests from an IPv6 network, use a
//     dual-stack endpoint" (ACCOUNT.dkr-ecr.REGION.on.aws), which PrivateLink
//     does not serve (ECR's "Making requests to Amazon ECR registries").
//   - An interface endpoint answers AAAA when its IP address type is
//     dualstack or ipv6 and its DNS record type is not ipv4.
//   - An IPv6-only subnet reaches an A-only host through DNS64 on the subnet
//     (EnableDns64: Route 53 Resolver synthesizes 64:ff9b::/96 + the IPv4
//     address) and a route for 64:ff9b::/96 to a NAT gateway, which
//     translates (the VPC guide's "DNS64 and NAT64"); a public NAT gateway
//     whose subnet routes 0.0.0.0/0 to an internet gateway for internet
//     hosts (modify-subnet-attribute's EnableDns64).
//   - IPv6 to a public address leaves by the route table's ::/0 route: an
//     egress-only internet gateway or an internet gateway.
//   - The node subnet's network ACL and the nodes' security groups judge
//     IPv6 by their IPv6 entries and rules (Ipv6CidrBlock, Ipv6Ranges) only.
//
// An IPv6-only subnet that breaks one of these cannot pull (there is no
// IPv4 to fall back on: ADDRESS_FAMILY_UNUSABLE's or the probe's dial
// failures). A dual-stack subnet whose IPv6 path is dropped while IPv4
// works pulls after Go's Happy Eyeballs fallback (containerd and the
// kubelet dial IPv6 first and try IPv4 300 ms later): IPV6_PATH_BROKEN's
// direction, a warn.

// Family is how a subnet's nodes address the pull.
type Family string

const (
	FamilyIPv4      Family = "ipv4-only"
	FamilyDualStack Family = "dual-stack"
	FamilyIPv6      Family = "ipv6-only"
)

// ipv6CIDRs are the subnet's associated IPv6 CIDRs.
func ipv6CIDRs(s *ec2types.Subnet) []netip.Prefix {
	if s == nil {
		return nil
	}
	var out []netip.Prefix
	for _, a := range s.Ipv6CidrBlockAssociationSet {
		if a.Ipv6CidrBlockState != nil && a.Ipv6CidrBlockState.State != "" && a.Ipv6CidrBlockState.State != ec2types.SubnetCidrBlockStateCodeAssociated {
			continue
		}
		if p, ok := parseV6(str(a.Ipv6CidrBlock)); ok {
			out = append(out, p)
		}
	}
	return out
}

// family of a node subnet: IPv6-only (Ipv6Native, or no IPv4 CIDR), dual
// stack (an IPv4 CIDR and an associated IPv6 one), or IPv4-only.
func (ns *NodeSubnet) family() Family {
	v6 := len(ipv6CIDRs(ns.Subnet)) > 0
	switch {
	case ns.Subnet != nil && ns.Subnet.Ipv6Native != nil && *ns.Subnet.Ipv6Native, v6 && !ns.CIDR.IsValid():
		return FamilyIPv6
	case v6:
		return FamilyDualStack
	}
	return FamilyIPv4
}

func (ns *NodeSubnet) dns64() bool {
	return ns.Subnet != nil && ns.Subnet.EnableDns64 != nil && *ns.Subnet.EnableDns64
}

// hostAAAA reports whether the nodes of the subnet get an IPv6 address for
// the host of a path, and why.
func (m *Model) hostAAAA(p *hostPath) (bool, string) {
	if p.captured {
		e := p.iface
		t := strings.ToLower(string(e.IpAddressType))
		rec := ""
		if e.DnsOptions != nil {
			rec = strings.ToLower(string(e.DnsOptions.DnsRecordIpType))
		}
		if (t == "dualstack" || t == "ipv6") && rec != "ipv4" {
			return true, fmt.Sprintf("%s answers AAAA (%s, ip address type %s)", p.host, str(e.VpcEndpointId), t)
		}
		if t == "" {
			t = "ipv4"
		}
		return false, fmt.Sprintf("%s answers only A (%s, ip address type %s)", p.host, str(e.VpcEndpointId), t)
	}
	if p.svc == SvcECRDKR && m.RegistryDualStack {
		return true, p.host + " is ECR's dual-stack name (A and AAAA)"
	}
	return false, p.host + " has only A records (an IPv4-only name)"
}

// familyHosts splits the pull's hosts of a subnet by whether they have an
// IPv6 address for its nodes.
func (m *Model) familyHosts(ns *NodeSubnet) (v6, v4only []*hostPath, ev []string) {
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		p := m.path(ns, svc)
		aaaa, why := m.hostAAAA(p)
		ev = append(ev, why)
		if aaaa {
			v6 = append(v6, p)
		} else {
			v4only = append(v4only, p)
		}
	}
	return v6, v4only, ev
}

func hostNames(ps []*hostPath) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.host)
	}
	return strings.Join(out, ", ")
}

// sevByFamily is the status of a broken IPv6 path: a fail where IPv6 is
// all the nodes have, a warn (Happy Eyeballs falls back to IPv4) where they
// are dual-stack.
func sevByFamily(f Family, summary string, ev ...string) report.CheckResult {
	if f == FamilyIPv6 {
		return audit.Fail(verdict.ConditionRoute, summary, ev...)
	}
	return audit.Warn(verdict.ConditionRoute, summary+": the nodes dial IPv6 first and fall back to IPv4 after 300 ms (Happy Eyeballs), on every new connection", ev...)
}

// v6Flows are the IPv6 destinations of the pull from a subnet: AAAA hosts
// on the internet path (::/0), AAAA hosts behind an interface endpoint
// (its subnets' IPv6 CIDRs), and, where DNS64 synthesizes addresses for the
// A-only hosts, 64:ff9b::/96.
func (m *Model) v6Flows(ns *NodeSubnet) []dest {
	f := ns.family()
	if f == FamilyIPv4 {
		return nil
	}
	v6, v4only, _ := m.familyHosts(ns)
	var out []dest
	for _, p := range v6 {
		if p.captured {
			d := dest{what: fmt.Sprintf("%s (%s ENIs)", p.host, str(p.iface.VpcEndpointId))}
			for _, s := range p.iface.SubnetIds {
				if s == ns.ID {
					continue
				}
				for _, c := range ipv6CIDRs(m.Subnets[s]) {
					d.peers = append(d.peers, peer{prefix: c, name: s + " " + c.String()})
				}
			}
			if len(d.peers) > 0 {
				out = append(out, d)
			}
			continue
		}
		out = append(out, dest{what: p.host + " (public IPv6 address)", peers: []peer{{prefix: anyIPv6, name: "::/0"}}})
	}
	if len(v4only) > 0 && ns.dns64() {
		out = append(out, dest{what: hostNames(v4only) + " (DNS64's synthesized addresses, to NAT64)", peers: []peer{{prefix: nat64Prefix, name: nat64Prefix.String()}}})
	}
	return out
}

// checkIPv6Route: the AAAA hosts on the internet path leave by ::/0 to an
// egress-only internet gateway or an internet gateway.
func checkIPv6Route(m *Model, ns *NodeSubnet) report.CheckResult {
	f := ns.family()
	if f == FamilyIPv4 {
		return audit.Skip(ns.ID + " has no IPv6 CIDR: the pull is IPv4")
	}
	if !m.Have[FileRouteTables] {
		return m.missing(FileRouteTables)
	}
	if ns.RouteTable == nil {
		return audit.Skip("no route table (see route-table)")
	}
	v6, _, ev := m.familyHosts(ns)
	var out []*hostPath
	for _, p := range v6 {
		if !p.captured {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return audit.Skip(fmt.Sprintf("no host of the pull has a public IPv6 address for %s (%s subnet): ::/0 is not on the pull's path", ns.ID, f))
	}
	rtID := str(ns.RouteTable.RouteTableId)
	hosts := hostNames(out)
	ev = append(ev, "hosts by ::/0: "+hosts)
	add := report.Change{Resource: rtID, Kind: "route-table", Action: "route ::/0 to the VPC's egress-only internet gateway",
		Command: fmt.Sprintf("aws ec2 create-route --route-table-id %s --destination-ipv6-cidr-block ::/0 --egress-only-internet-gateway-id EIGW%s", rtID, m.regionFlag())}
	r := m.lookupRoute(ns.RouteTable, anyIPv6)
	if r == nil {
		c := sevByFamily(f, fmt.Sprintf("%s has no route to ::/0: %s (AAAA) unreachable over IPv6 from %s (%s)", rtID, hosts, ns.ID, f), ev...)
		return audit.WithChange(audit.WithResources(c, rtID), add)
	}
	target := routeTarget(r.Route)
	ev = append(ev, rtID+": "+routeString(r.Route))
	if r.Route.State == ec2types.RouteStateBlackhole {
		c := sevByFamily(f, fmt.Sprintf("%s routes ::/0 to %s, a blackhole (its target is gone): %s unreachable over IPv6", rtID, target, hosts), ev...)
		add.Action, add.Touches = "point ::/0 at the VPC's egress-only internet gateway", []string{target}
		add.Command = fmt.Sprintf("aws ec2 replace-route --route-table-id %s --destination-ipv6-cidr-block ::/0 --egress-only-internet-gateway-id EIGW%s", rtID, m.regionFlag())
		return audit.WithChange(audit.WithResources(c, rtID, target), add)
	}
	if strings.HasPrefix(target, "eigw-") || strings.HasPrefix(target, "igw-") {
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s routes ::/0 to %s for %s", rtID, target, hosts), ev...), rtID, target)
	}
	return audit.WithResources(audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s routes ::/0 to %s: the path beyond it is not visible to this audit", rtID, target), ev...), rtID, target)
}

// checkDNS64 (DNS64 and NAT64): an IPv6-only subnet reaches the A-only
// hosts only with DNS64 on and 64:ff9b::/96 routed to a NAT gateway; a
// dual-stack subnet with DNS64 on and no such route sends the synthesized
// IPv6 addresses nowhere (::/0 carries them to a gateway that cannot
// translate) and pulls after the IPv4 fallback.
func checkDNS64(m *Model, ns *NodeSubnet) report.CheckResult {
	f := ns.family()
	if f == FamilyIPv4 {
		return audit.Skip(ns.ID + " has no IPv6 CIDR: the pull is IPv4")
	}
	_, v4only, ev := m.familyHosts(ns)
	if len(v4only) == 0 {
		return audit.Pass(fmt.Sprintf("every host of the pull has an IPv6 address for %s: no translation needed", ns.ID), ev...)
	}
	hosts := hostNames(v4only)
	ev = append(ev, fmt.Sprintf("%s enableDns64=%v", ns.ID, ns.dns64()))
	if f == FamilyDualStack && !ns.dns64() {
		return audit.Pass(fmt.Sprintf("%s is dual-stack with DNS64 off: %s (A only) go over IPv4", ns.ID, hosts), ev...)
	}
	if !m.Have[FileRouteTables] {
		return m.missing(FileRouteTables)
	}
	var c report.CheckResult
	var problems []string
	if !ns.dns64() {
		problems = append(problems, fmt.Sprintf("%s is IPv6-only and DNS64 is off: %s have only A records, so its nodes get no address they can use", ns.ID, hosts))
		c = audit.WithChange(c, report.Change{Resource: ns.ID, Kind: "subnet", Action: "turn on DNS64 (Route 53 Resolver synthesizes 64:ff9b::/96 addresses for A-only names)",
			Command: fmt.Sprintf("aws ec2 modify-subnet-attribute --subnet-id %s --enable-dns64%s", ns.ID, m.regionFlag())})
	}
	rtID := "its route table"
	if ns.RouteTable != nil {
		rtID = str(ns.RouteTable.RouteTableId)
		c = audit.WithResources(c, rtID)
	}
	nat, why := m.nat64(ns, v4only)
	if why != "" {
		problems = append(problems, why)
		verb := "create-route"
		if r := m.lookupRoute(ns.RouteTable, nat64Prefix); r != nil && r.Dest == nat64Prefix.String() {
			verb = "replace-route"
		}
		c = audit.WithChange(c, report.Change{Resource: rtID, Kind: "route-table", Action: "route 64:ff9b::/96 to a public NAT gateway in " + ns.AZ + " (NAT64)",
			Command: fmt.Sprintf("aws ec2 %s --route-table-id %s --destination-ipv6-cidr-block 64:ff9b::/96 --nat-gateway-id %s%s", verb, rtID, m.natInAZ(ns.AZ), m.regionFlag())})
	} else {
		ev = append(ev, fmt.Sprintf("%s routes 64:ff9b::/96 to %s", rtID, nat))
	}
	if len(problems) == 0 {
		return audit.WithResources(audit.Pass(fmt.Sprintf("DNS64 on and %s routes 64:ff9b::/96 to %s: %s (A only) reached through NAT64", rtID, nat, hosts), ev...), ns.ID, rtID, nat)
	}
	var r report.CheckResult
	if f == FamilyIPv6 {
		r = audit.Fail(verdict.ConditionRoute, problems[0], append(problems[1:], ev...)...)
	} else {
		r = audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s is dual-stack with DNS64 on: %s get synthesized 64:ff9b:: addresses the nodes dial first, and %s; they connect after the 300 ms fallback to IPv4", ns.ID, hosts, problems[0]), ev...)
		c = audit.WithChange(c, report.Change{Resource: ns.ID, Kind: "subnet", Action: "or turn DNS64 off on the dual-stack subnet (its nodes reach A-only hosts over IPv4)",
			Command: fmt.Sprintf("aws ec2 modify-subnet-attribute --subnet-id %s --no-enable-dns64%s", ns.ID, m.regionFlag())})
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return audit.WithResources(r, ns.ID)
}

// nat64 finds the NAT gateway the subnet's table sends 64:ff9b::/96 to, or
// says why there is none that translates for the hosts: no route (or one
// that ::/0 takes, to a gateway that does not translate), a blackhole, a
// NAT gateway not available, or, for hosts on the internet path, a private
// NAT gateway or one whose subnet has no internet gateway.
func (m *Model) nat64(ns *NodeSubnet, hosts []*hostPath) (string, string) {
	if ns.RouteTable == nil {
		return "", "the subnet has no route table"
	}
	rtID := str(ns.RouteTable.RouteTableId)
	r := m.lookupRoute(ns.RouteTable, nat64Prefix)
	if r == nil {
		return "", fmt.Sprintf("%s has no route for 64:ff9b::/96 (NAT64)", rtID)
	}
	nat := str(r.Route.NatGatewayId)
	if t := routeTarget(r.Route); nat == "" && r.Dest == nat64Prefix.String() && (strings.HasPrefix(t, "eni-") || strings.HasPrefix(t, "i-")) && r.Route.State != ec2types.RouteStateBlackhole {
		return t + " (a NAT64 appliance: beyond what the audit sees)", ""
	}
	if nat == "" {
		return "", fmt.Sprintf("%s sends 64:ff9b::/96 to %s (by %s), which does not translate to IPv4: only a NAT gateway (or a NAT64 appliance's ENI) does", rtID, routeTarget(r.Route), r.Dest)
	}
	if r.Route.State == ec2types.RouteStateBlackhole {
		return "", fmt.Sprintf("%s routes 64:ff9b::/96 to %s, a blackhole", rtID, nat)
	}
	n, ok := m.NATs[nat]
	if !ok {
		if !m.given(FileNATGateways) {
			return nat, ""
		}
		return "", fmt.Sprintf("%s routes 64:ff9b::/96 to %s, which is not in %s (deleted?)", rtID, nat, FileNATGateways)
	}
	if n.State != ec2types.NatGatewayStateAvailable {
		return "", fmt.Sprintf("%s routes 64:ff9b::/96 to %s, which is %s", rtID, nat, n.State)
	}
	public := false
	for _, p := range hosts {
		public = public || p.internet
	}
	if public && n.ConnectivityType == ec2types.ConnectivityTypePrivate {
		return "", fmt.Sprintf("%s routes 64:ff9b::/96 to %s, a private NAT gateway: it reaches no public address", rtID, nat)
	}
	if public && !m.natHasIGW(n) {
		return "", fmt.Sprintf("%s routes 64:ff9b::/96 to %s, whose subnet %s has no route to an internet gateway", rtID, nat, str(n.SubnetId))
	}
	return nat, ""
}

// v6Pull is what an IPv6 rule check of ns starts from: the subnet's family
// and the IPv6 destinations of the pull; ok false with the result that ends
// the check early (no IPv6 CIDR, no IPv6 packet out, file not given).
func (m *Model) v6Pull(ns *NodeSubnet, file string) (Family, []dest, report.CheckResult, bool) {
	f := ns.family()
	if f == FamilyIPv4 {
		return f, nil, audit.Skip(ns.ID + " has no IPv6 CIDR: the pull is IPv4"), false
	}
	dests := m.v6Flows(ns)
	if len(dests) == 0 {
		return f, nil, audit.Skip(fmt.Sprintf("the pull sends no IPv6 packet out of %s (%s: every host is A-only, DNS64 off)", ns.ID, f)), false
	}
	if !m.Have[file] {
		return f, nil, m.missing(file), false
	}
	return f, dests, report.CheckResult{}, true
}

// checkNACLIPv6: the node subnet's ACL lets TCP 443 out and the replies in
// over IPv6, by its IPv6 entries, for every IPv6 destination of the pull.
func checkNACLIPv6(m *Model, ns *NodeSubnet) report.CheckResult {
	f, dests, done, ok := m.v6Pull(ns, FileNetworkACLs)
	if !ok {
		return done
	}
	if ns.ACL == nil {
		return audit.Warn(verdict.ConditionRoute, fmt.Sprintf("no network ACL for %s in %s", ns.ID, FileNetworkACLs))
	}
	id := str(ns.ACL.NetworkAclId)
	var flows []aclFlow
	for _, d := range dests {
		for _, p := range d.peers {
			flows = append(flows,
				aclFlow{egress: true, lo: 443, hi: 443, far: p.prefix, what: d.what, suggest: anyIPv6},
				aclFlow{egress: false, lo: ephemeralLo, hi: ephemeralHi, far: p.prefix, what: "replies from " + d.what, suggest: anyIPv6})
		}
	}
	fails, warns, change := m.evalFlows(ns.ACL, flows)
	fail := func(s string, ev ...string) report.CheckResult { return sevByFamily(f, s, ev...) }
	return aclResult(id, fails, warns, change, fail, fmt.Sprintf("%s allows 443 out and the replies in over IPv6 for every IPv6 destination of the pull", id))
}

// checkSGNodeEgressIPv6: some security group of each node lets TCP 443 out
// to every IPv6 destination of the pull, by an IPv6 range (Ipv6Ranges) or
// the endpoint's group.
func checkSGNodeEgressIPv6(m *Model, ns *NodeSubnet) report.CheckResult {
	f, dests, done, ok := m.v6Pull(ns, FileSecurityGroups)
	if !ok {
		return done
	}
	var c report.CheckResult
	var bad, unknown []string
	for _, n := range m.nodesOf(ns) {
		known := 0
		for _, g := range n.SGs {
			if _, ok := m.SGs[g]; ok {
				known++
			} else {
				unknown = append(unknown, g+" is not in "+FileSecurityGroups)
			}
		}
		if len(n.SGs) == 0 {
			unknown = append(unknown, n.Name+" has no known security group")
		}
		if known < len(n.SGs) || len(n.SGs) == 0 {
			continue
		}
		for _, d := range dests {
			for _, pr := range d.peers {
				ok := false
				for _, g := range n.SGs {
					if ok, _ = sgPermits(m.SGs[g].IpPermissionsEgress, 443, pr); ok {
						break
					}
				}
				if ok {
					continue
				}
				bad = append(bad, fmt.Sprintf("%s (groups %s) may not send TCP 443 over IPv6 to %s: %s", n.Name, strings.Join(n.SGs, ","), d.what, pr.name))
				c = audit.WithChange(c, report.Change{Resource: n.SGs[0], Kind: "security-group", Action: "allow TCP 443 out to ::/0 over IPv6",
					Command: fmt.Sprintf("aws ec2 authorize-security-group-egress --group-id %s --ip-permissions IpProtocol=tcp,FromPort=443,ToPort=443,Ipv6Ranges=[{CidrIpv6=::/0}]%s", n.SGs[0], m.regionFlag())})
				break
			}
		}
	}
	var r report.CheckResult
	switch {
	case len(bad) > 0:
		r = sevByFamily(f, bad[0], bad[1:]...)
	case len(unknown) > 0:
		r = audit.Warn(verdict.ConditionRoute, "cannot decide node IPv6 egress: "+unknown[0], unknown[1:]...)
	default:
		r = audit.Pass(fmt.Sprintf("the nodes of %s may send TCP 443 over IPv6 to every IPv6 destination of the pull", ns.ID))
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}

// ipv4Skip is the skip of an IPv4 check on an IPv6-only subnet: its nodes
// send no IPv4 packet; the family checks judge the path.
func ipv4Skip(ns *NodeSubnet) (report.CheckResult, bool) {
	if ns.family() != FamilyIPv6 {
		return report.CheckResult{}, false
	}
	return audit.Skip(ns.ID + " is IPv6-only: its nodes send no IPv4 packet (see " + CheckIPv6Route + ", " + CheckDNS64 + ", " + CheckNACLIPv6 + ", " + CheckSGNodeEgressIPv6 + ")"), true
}
