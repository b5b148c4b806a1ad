package azure

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
)

// Next hop types, as ARM spells them.
const (
	hopVnetLocal   = "VnetLocal"
	hopPeering     = "VNetPeering"
	hopGateway     = "VirtualNetworkGateway"
	hopAppliance   = "VirtualAppliance"
	hopInternet    = "Internet"
	hopNone        = "None"
	hopSvcEndpoint = "VirtualNetworkServiceEndpoint"
	hopGlobalPeer  = "GlobalVNetPeering"
)

// route is one prefix of an effective route.
type route struct {
	Prefix     netip.Prefix
	NextHop    string
	NextHopIPs []string
	Source     string // Default | User | VirtualNetworkGateway
	Name       string // the UDR's name, when Source is User
	DisableBgp bool
}

func (r route) String() string {
	s := r.Prefix.String() + " -> " + r.NextHop
	if len(r.NextHopIPs) > 0 {
		s += " " + strings.Join(r.NextHopIPs, ",")
	}
	src := r.Source
	if r.Name != "" {
		src += " route " + r.Name
	}
	if src != "" {
		s += " (" + src + ")"
	}
	return s
}

// routeTable is a node NIC's effective routes, or, when the file is
// missing, the routes Azure would compute from what the contract holds
// (computed is then true, and routes learned over BGP are unknown).
type routeTable struct {
	Routes   []route
	Computed bool
	NIC      string
}

// sourceRank orders equal prefixes the way Azure does: a user-defined route
// beats a BGP route beats a system route.
func sourceRank(s string) int {
	switch strings.ToLower(s) {
	case "user":
		return 3
	case "virtualnetworkgateway":
		return 2
	}
	return 1
}

// Lookup is the route Azure uses for addr: longest prefix first; on equal
// prefixes, User over VirtualNetworkGateway over Default.
func (t *routeTable) Lookup(addr netip.Addr) (route, bool) {
	var best route
	found := false
	for _, r := range t.Routes {
		if !r.Prefix.Contains(addr) {
			continue
		}
		if !found || r.Prefix.Bits() > best.Prefix.Bits() ||
			r.Prefix.Bits() == best.Prefix.Bits() && sourceRank(r.Source) > sourceRank(best.Source) {
			best, found = r, true
		}
	}
	return best, found
}

// fromEffective reads the effective routes API's answer; Invalid routes
// (overridden ones) are left out, as Azure does.
func fromEffective(nic string, ers []*armnetwork.EffectiveRoute) *routeTable {
	t := &routeTable{NIC: nic}
	for _, er := range ers {
		if er == nil {
			continue
		}
		if er.State != nil && !strings.EqualFold(string(*er.State), "Active") {
			continue
		}
		hop := ""
		if er.NextHopType != nil {
			hop = string(*er.NextHopType)
		}
		var ips []string
		for _, ip := range er.NextHopIPAddress {
			if ip != nil && *ip != "" {
				ips = append(ips, *ip)
			}
		}
		src := ""
		if er.Source != nil {
			src = string(*er.Source)
		}
		for _, p := range er.AddressPrefix {
			pf, err := netip.ParsePrefix(strings.TrimSpace(str(p)))
			if err != nil {
				continue // a service-tag route prints its tag, not a prefix
			}
			t.Routes = append(t.Routes, route{Prefix: pf.Masked(), NextHop: normHop(hop), NextHopIPs: ips, Source: src, Name: str(er.Name), DisableBgp: boolv(er.DisableBgpRoutePropagation)})
		}
	}
	return t
}

func normHop(h string) string {
	for _, k := range []string{hopVnetLocal, hopPeering, hopGateway, hopAppliance, hopInternet, hopNone, hopSvcEndpoint, hopGlobalPeer} {
		if strings.EqualFold(h, k) {
			return k
		}
	}
	return h
}

// systemRoutes are the default routes of every Azure subnet: the VNet's
// address space, peered spaces, the internet, and None for the private and
// shared ranges outside them.
var systemRoutes = []struct{ p, hop string }{
	{"0.0.0.0/0", hopInternet},
	{"10.0.0.0/8", hopNone},
	{"172.16.0.0/12", hopNone},
	{"192.168.0.0/16", hopNone},
	{"100.64.0.0/10", hopNone},
	{"25.0.0.0/8", hopNone},
	{"198.18.0.0/15", hopNone},
}

// computeRoutes builds a subnet's routes from the VNet, its peerings and the
// subnet's route table, for when no effective routes were captured.
func (m *Model) computeRoutes(sn *armnetwork.Subnet) *routeTable {
	t := &routeTable{Computed: true}
	for _, s := range systemRoutes {
		t.Routes = append(t.Routes, route{Prefix: netip.MustParsePrefix(s.p), NextHop: s.hop, Source: "Default"})
	}
	for _, p := range m.vnetPrefixes() {
		t.Routes = append(t.Routes, route{Prefix: p, NextHop: hopVnetLocal, Source: "Default"})
		if p.Addr().Is6() && !t.has(anyIPv6) {
			// a dual-stack VNet's system routes send ::/0 to the Internet
			t.Routes = append(t.Routes, route{Prefix: anyIPv6, NextHop: hopInternet, Source: "Default"})
		}
	}
	for _, pr := range m.Peerings {
		if pr == nil || pr.Properties == nil || !peeringConnected(pr) {
			continue
		}
		for _, p := range peeringPrefixes(pr) {
			t.Routes = append(t.Routes, route{Prefix: p, NextHop: hopPeering, Source: "Default"})
		}
	}
	if rt := m.routeTableOf(sn); rt != nil && rt.Properties != nil {
		for _, r := range rt.Properties.Routes {
			if r == nil || r.Properties == nil {
				continue
			}
			pf, err := netip.ParsePrefix(str(r.Properties.AddressPrefix))
			if err != nil {
				continue
			}
			hop := ""
			if r.Properties.NextHopType != nil {
				hop = normHop(string(*r.Properties.NextHopType))
			}
			// a UDR's "VnetLocal" and "Internet" hops read the same in effective routes
			var ips []string
			if ip := str(r.Properties.NextHopIPAddress); ip != "" {
				ips = []string{ip}
			}
			t.Routes = append(t.Routes, route{Prefix: pf.Masked(), NextHop: hop, NextHopIPs: ips, Source: "User", Name: str(r.Name), DisableBgp: boolv(rt.Properties.DisableBgpRoutePropagation)})
		}
	}
	return t
}

func peeringConnected(p *armnetwork.VirtualNetworkPeering) bool {
	return p.Properties != nil && p.Properties.PeeringState != nil && strings.EqualFold(string(*p.Properties.PeeringState), "Connected")
}

// peeringPrefixes is the remote VNet's address space as the peering sees it.
func peeringPrefixes(p *armnetwork.VirtualNetworkPeering) []netip.Prefix {
	if p.Properties == nil {
		return nil
	}
	var out []netip.Prefix
	for _, as := range []*armnetwork.AddressSpace{p.Properties.RemoteAddressSpace, p.Properties.RemoteVirtualNetworkAddressSpace} {
		if as == nil {
			continue
		}
		for _, s := range as.AddressPrefixes {
			if pf, err := netip.ParsePrefix(str(s)); err == nil {
				out = appendPrefix(out, pf.Masked())
			}
		}
	}
	return out
}

func appendPrefix(list []netip.Prefix, p netip.Prefix) []netip.Prefix {
	for _, x := range list {
		if x == p {
			return list
		}
	}
	return append(list, p)
}

// vnetPrefixes is the cluster VNet's address space.
func (m *Model) vnetPrefixes() []netip.Prefix {
	if m.VNet == nil || m.VNet.Properties == nil || m.VNet.Properties.AddressSpace == nil {
		return nil
	}
	var out []netip.Prefix
	for _, s := range m.VNet.Properties.AddressSpace.AddressPrefixes {
		if pf, err := netip.ParsePrefix(str(s)); err == nil {
			out = appendPrefix(out, pf.Masked())
		}
	}
	return out
}

func (m *Model) routeTableOf(sn *armnetwork.Subnet) *armnetwork.RouteTable {
	if sn == nil || sn.Properties == nil || sn.Properties.RouteTable == nil {
		return nil
	}
	return m.RouteTables[idKey(str(sn.Properties.RouteTable.ID))]
}

func (m *Model) nsgOf(sn *armnetwork.Subnet) *armnetwork.SecurityGroup {
	if sn == nil || sn.Properties == nil || sn.Properties.NetworkSecurityGroup == nil {
		return nil
	}
	return m.NSGs[idKey(str(sn.Properties.NetworkSecurityGroup.ID))]
}

// subnetPrefixes is a subnet's address prefixes.
func subnetPrefixes(sn *armnetwork.Subnet) []netip.Prefix {
	if sn == nil || sn.Properties == nil {
		return nil
	}
	var out []netip.Prefix
	if pf, err := netip.ParsePrefix(str(sn.Properties.AddressPrefix)); err == nil {
		out = append(out, pf.Masked())
	}
	for _, s := range sn.Properties.AddressPrefixes {
		if pf, err := netip.ParsePrefix(str(s)); err == nil {
			out = appendPrefix(out, pf.Masked())
		}
	}
	return out
}

// peeringFor is the cluster-side peering whose remote space holds addr.
func (m *Model) peeringFor(addr netip.Addr) *armnetwork.VirtualNetworkPeering {
	for _, p := range m.Peerings {
		if p == nil {
			continue
		}
		for _, pf := range peeringPrefixes(p) {
			if pf.Contains(addr) {
				return p
			}
		}
	}
	return nil
}

func inAny(addr netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func prefixesString(ps []netip.Prefix) string {
	ss := make([]string, len(ps))
	for i, p := range ps {
		ss[i] = p.String()
	}
	return strings.Join(ss, ", ")
}

func describeRoute(r route, ok bool) string {
	if !ok {
		return "no route at all"
	}
	return fmt.Sprintf("route %s", r)
}

var anyIPv6 = netip.MustParsePrefix("::/0")

func (t *routeTable) has(p netip.Prefix) bool {
	for _, r := range t.Routes {
		if r.Prefix == p {
			return true
		}
	}
	return false
}

// route6 is the route Azure uses for IPv6 to the internet: the ::/0 route
// of the highest source (User over VirtualNetworkGateway over Default).
func (t *routeTable) route6() (route, bool) {
	var best route
	found := false
	for _, r := range t.Routes {
		if r.Prefix == anyIPv6 && (!found || sourceRank(r.Source) > sourceRank(best.Source)) {
			best, found = r, true
		}
	}
	return best, found
}
