package aws

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/pullpath/pullpath/internal/verdict"
)

// hostPath is how the nodes of a subnet reach one host of the pull, by the
// account's design: through an interface endpoint whose private DNS name
// captures the host, through the S3 gateway endpoint's prefix-list route,
// or out through the route table to a public address.
type hostPath struct {
	svc, host string
	iface     *ec2types.VpcEndpoint // the interface endpoint of the service, if any
	captured  bool                  // its private DNS makes the host resolve to its ENIs
	dnsWhy    string                // why an interface endpoint does not capture the host
	gateway   *ec2types.VpcEndpoint // S3: the gateway endpoint the table routes S3 to
	gwRoute   *ec2types.Route
	internet  bool // the host resolves public and goes out by the route table
	// gwByRoute: the gateway endpoint is known only by the table's pl-
	// route to it (the endpoints file was not given): its state and
	// policy are unknown.
	gwByRoute bool
	// gwRoutes are, known by route and without the S3 prefix list, every
	// pl- route of the table to a gateway endpoint: S3's and DynamoDB's
	// look alike, one of them is S3's.
	gwRoutes []*ec2types.Route
	// absent are the files not given that computing the path asked for:
	// every check that uses the path asks for them again.
	absent []string
}

// via says how the host is reached, for the report's hosts and evidence.
func (p *hostPath) via() string {
	switch {
	case p.captured:
		return p.svc + " interface endpoint " + str(p.iface.VpcEndpointId)
	case p.gateway != nil && len(p.gwRoutes) > 1:
		var ids []string
		for _, r := range p.gwRoutes {
			ids = append(ids, str(r.GatewayId))
		}
		return "a gateway endpoint (" + strings.Join(ids, " or ") + ": which is S3's needs " + FilePrefixLists + ")"
	case p.gateway != nil:
		return "S3 gateway endpoint " + str(p.gateway.VpcEndpointId)
	}
	return "the route table to a public address"
}

// path is the subnet's path to svc, computed once.
func (m *Model) path(ns *NodeSubnet, svc string) *hostPath {
	if p, ok := ns.paths[svc]; ok {
		m.note(p.absent...)
		return p
	}
	if ns.paths == nil {
		ns.paths = map[string]*hostPath{}
	}
	p := &hostPath{svc: svc, host: m.Host(svc)}
	ns.paths[svc] = p
	before := append([]string(nil), m.asked...)
	defer func() {
		for _, f := range m.asked {
			if !slices.Contains(before, f) {
				p.absent = append(p.absent, f)
			}
		}
	}()
	p.iface = pickInterface(m.endpointsFor(svc, ec2types.VpcEndpointTypeInterface))
	if p.iface != nil {
		p.captured, p.dnsWhy = m.captures(p.iface)
		if svc == SvcECRDKR && m.RegistryDualStack {
			// The endpoint's private zone holds only the IPv4 name: ECR
			// does not serve its dual-stack names over AWS PrivateLink.
			p.captured = false
			p.dnsWhy = p.host + " is ECR's dual-stack name, which AWS PrivateLink does not serve: " + str(p.iface.VpcEndpointId) + " carries only " + verdict.ECRIPv4Name(p.host)
		}
	}
	if svc == SvcS3 && p.captured && p.iface.DnsOptions != nil && p.iface.DnsOptions.PrivateDnsOnlyForInboundResolverEndpoint != nil &&
		*p.iface.DnsOptions.PrivateDnsOnlyForInboundResolverEndpoint {
		// S3 interface endpoint with "private DNS only for inbound
		// endpoints": in-VPC clients get the public name, so the gateway.
		p.captured = false
		p.dnsWhy = str(p.iface.VpcEndpointId) + " answers its private name only to inbound Resolver endpoints"
	}
	if svc == SvcS3 && !p.captured && ns.family() != FamilyIPv6 {
		p.gateway, p.gwRoute = m.s3Gateway(ns.RouteTable)
		if p.gateway == nil && !m.Have[FileEndpoints] {
			p.gwRoutes = m.s3GatewayByRoute(ns.RouteTable)
			if p.gwByRoute = len(p.gwRoutes) > 0; p.gwByRoute {
				r := p.gwRoutes[0]
				p.gateway, p.gwRoute = &ec2types.VpcEndpoint{VpcEndpointId: r.GatewayId, VpcEndpointType: ec2types.VpcEndpointTypeGateway, State: "unknown"}, r
			}
		}
	}
	p.internet = !p.captured && p.gateway == nil
	return p
}

// pickInterface prefers the endpoint with private DNS on (only one per
// service and VPC can have it).
func pickInterface(eps []*ec2types.VpcEndpoint) *ec2types.VpcEndpoint {
	for _, e := range eps {
		if e.PrivateDnsEnabled != nil && *e.PrivateDnsEnabled {
			return e
		}
	}
	if len(eps) > 0 {
		return eps[0]
	}
	return nil
}

// captures reports whether an interface endpoint's private DNS name is what
// the nodes resolve: private DNS on, the VPC's DNS support and DNS host
// names on (private DNS needs both), and a resolver that sees the VPC's
// private zones.
func (m *Model) captures(e *ec2types.VpcEndpoint) (bool, string) {
	id := str(e.VpcEndpointId)
	switch {
	case e.PrivateDnsEnabled == nil || !*e.PrivateDnsEnabled:
		return false, id + " has private DNS off"
	case m.DNSSupport != nil && !*m.DNSSupport:
		return false, "the VPC has enableDnsSupport off"
	case m.DNSHosts != nil && !*m.DNSHosts:
		return false, "the VPC has enableDnsHostnames off"
	}
	if servers, public := m.dhcpPublicOnly(); public {
		return false, "the DHCP option set gives public name servers only (" + strings.Join(servers, ", ") + "), which cannot see the endpoint's private zone"
	}
	return true, ""
}

// s3Gateway finds the S3 gateway endpoint route the table really uses:
// every CIDR of the S3 prefix list must pick the endpoint's pl- route by
// longest prefix; without the prefix-list file the pl- route's presence is
// taken as the answer.
func (m *Model) s3Gateway(rt *ec2types.RouteTable) (*ec2types.VpcEndpoint, *ec2types.Route) {
	if rt == nil {
		m.given(FileRouteTables)
		return nil, nil
	}
	gws := m.endpointsFor(SvcS3, ec2types.VpcEndpointTypeGateway)
	for _, gw := range gws {
		id := str(gw.VpcEndpointId)
		for i := range rt.Routes {
			r := &rt.Routes[i]
			if str(r.DestinationPrefixListId) == "" || str(r.GatewayId) != id {
				continue
			}
			if r.State == ec2types.RouteStateBlackhole {
				continue
			}
			if m.S3PL != nil && str(r.DestinationPrefixListId) != str(m.S3PL.PrefixListId) {
				continue
			}
			if len(m.s3Takers(rt, r)) > 0 {
				return nil, nil
			}
			return gw, r
		}
	}
	return nil, nil
}

// s3GatewayByRoute finds, without the endpoints file, the table's route
// to a gateway endpoint by its target alone: a pl- destination to a vpce-
// target is a gateway endpoint's route (only gateway endpoints are route
// targets by prefix list), and with the prefix-list file it is S3's when
// its pl- is com.amazonaws.REGION.s3's. Without the prefix-list file a
// gateway route is S3's or DynamoDB's: taken as S3's (the check says so).
func (m *Model) s3GatewayByRoute(rt *ec2types.RouteTable) []*ec2types.Route {
	if rt == nil {
		return nil
	}
	var out []*ec2types.Route
	for i := range rt.Routes {
		r := &rt.Routes[i]
		pl, gw := str(r.DestinationPrefixListId), str(r.GatewayId)
		if pl == "" || !strings.HasPrefix(gw, "vpce-") || r.State == ec2types.RouteStateBlackhole {
			continue
		}
		if m.S3PL != nil && pl != str(m.S3PL.PrefixListId) {
			continue
		}
		if len(m.s3Takers(rt, r)) > 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

// vpcResolvers are the addresses of the VPC's own resolver.
func (m *Model) vpcResolvers() []netip.Addr {
	out := []netip.Addr{netip.MustParseAddr("169.254.169.253")}
	cidrs := m.VPCCIDRs
	if len(cidrs) == 0 {
		// Without describe-vpcs, the subnets tell the VPC's first CIDR
		// well enough: the resolver is the base of the VPC CIDR plus two;
		// take base+2 of every /16 holding a subnet.
		for _, s := range m.Subnets {
			if p, ok := parseV4(str(s.CidrBlock)); ok {
				b := netip.PrefixFrom(p.Addr(), 16).Masked()
				cidrs = append(cidrs, b)
			}
		}
	}
	for _, c := range cidrs {
		a := c.Masked().Addr().As4()
		a[3] += 2
		out = append(out, netip.AddrFrom4(a))
	}
	return out
}

// dhcpPublicOnly reports whether the VPC's DHCP option set gives only
// public name servers (not AmazonProvidedDNS, not the VPC resolver, not a
// private address that may forward to it).
func (m *Model) dhcpPublicOnly() ([]string, bool) {
	if m.DHCP == nil {
		return nil, false
	}
	servers := dnsServers(m.DHCP)
	if len(servers) == 0 {
		return nil, false
	}
	for _, s := range servers {
		if strings.EqualFold(s, "AmazonProvidedDNS") {
			return servers, false
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLoopback() {
			return servers, false
		}
	}
	return servers, true
}

// s3Takers are the routes of rt that take some of the S3 prefix list's
// addresses from its pl- route by longest prefix: a route whose CIDR
// overlaps a prefix-list CIDR and is at least as specific.
func (m *Model) s3Takers(rt *ec2types.RouteTable, plRoute *ec2types.Route) []string {
	var out []string
	for _, c := range m.S3PLCIDRs {
		for i := range rt.Routes {
			r := &rt.Routes[i]
			if r == plRoute {
				continue
			}
			d, ok := parseV4(str(r.DestinationCidrBlock))
			if !ok || !d.Overlaps(c) || d.Bits() < c.Bits() {
				continue
			}
			out = append(out, fmt.Sprintf("%s by %s", c, routeString(r)))
		}
	}
	return out
}
