package azure

import (
	"cmp"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkRoute follows the node NIC's effective routes, longest prefix first,
// to every private endpoint address (or, for a host reached publicly, the
// default route), and names the route that decides.
func checkRoute(m *Model, n *nodeSubnet) report.CheckResult {
	var ev []string
	var bad *finding
	warned := ""
	if n.Routes.Computed {
		ev = append(ev, fmt.Sprintf("effective routes of a %s NIC were not captured: routes computed from the VNet's address space, its peerings and the subnet's route table; routes learned over BGP from a VPN gateway cannot be seen", n.poolsString()))
	} else {
		ev = append(ev, "effective routes of NIC "+n.Routes.NIC)
	}
	for _, h := range n.Hosts {
		if !h.private() {
			r, ok := defaultRoute(n.Routes)
			switch {
			case !ok || r.NextHop == hopNone:
				bad = first(bad, &finding{host: h.Name, summary: fmt.Sprintf("%s has no route to the internet for %s (%s), which has no private endpoint", n.poolsString(), h.Name, describeRoute(r, ok))})
			case r.NextHop == hopInternet:
				ev = append(ev, fmt.Sprintf("%s (public): %s", h.Name, r))
			default:
				ev = append(ev, fmt.Sprintf("%s (public): %s: the appliance or on-premises proxy there must allow %s", h.Name, r, h.Name))
				warned = cmp.Or(warned, fmt.Sprintf("%s reaches %s (public) through %s: the firewall there must allow it", n.poolsString(), h.Name, r))
			}
			continue
		}
		for _, a := range h.peAddrs() {
			r, ok := n.Routes.Lookup(a)
			line := fmt.Sprintf("%s -> %s: %s", h.Name, a, describeRoute(r, ok))
			ev = append(ev, line)
			if !ok {
				bad = first(bad, m.noRoute(n, h, a, r, ok))
				continue
			}
			switch r.NextHop {
			case hopVnetLocal, hopPeering, hopGlobalPeer, hopGateway:
			case hopAppliance:
				nva := ""
				if len(r.NextHopIPs) > 0 {
					nva = r.NextHopIPs[0]
				}
				if ip, err := netip.ParseAddr(nva); err == nil {
					nr, nok := n.Routes.Lookup(ip)
					if !nok || !usableToAppliance(nr.NextHop) {
						bad = first(bad, n.unreachableAppliance(h, a, r, nva, describeRoute(nr, nok)))
						continue
					}
				}
				if r.Prefix.Bits() == 0 {
					warned = cmp.Or(warned, fmt.Sprintf("0.0.0.0/0 sends %s (%s) to appliance %s: it must forward TCP 443 there and route the replies back through itself", a, h.Name, nva))
				} else {
					ev = append(ev, fmt.Sprintf("appliance %s must forward TCP 443 to %s and carry the replies back", nva, a))
				}
			default: // None, Internet for a private address, anything unknown
				if n.Routes.Computed && m.bgpMayCarry(n) {
					warned = cmp.Or(warned, fmt.Sprintf("no captured route from %s to %s (%s); a route learned over BGP may carry it: capture `%s`", n.poolsString(), a, h.Name, "az network nic show-effective-route-table"))
					continue
				}
				f := m.noRoute(n, h, a, r, ok)
				if len(f.changes) == 0 && m.peeringCause(a) {
					// one cause, one failure: the peering check names it
					warned = cmp.Or(warned, f.summary+"; the peering check names the cause")
					continue
				}
				bad = first(bad, f)
			}
		}
	}
	var c report.CheckResult
	switch {
	case bad != nil:
		c = bad.fail(verdict.ConditionRoute, ev)
	case warned != "":
		c = audit.Warn(verdict.ConditionRoute, warned, ev...)
	default:
		c = audit.Pass(fmt.Sprintf("%s has a usable route to every host of the pull", n.poolsString()), ev...)
	}
	if n.RT != nil {
		c.Resources = appendUnique(c.Resources, str(n.RT.ID))
	}
	return c
}

// unreachableAppliance is a route to an appliance the nodes have no route
// to (detached, its VNet unpeered): a user route names the change, which
// repoints it and names the appliance beside the table.
func (n *nodeSubnet) unreachableAppliance(h *pullHost, a netip.Addr, r route, nva, how string) *finding {
	f := &finding{host: h.Name, summary: fmt.Sprintf("%s sends %s (%s) to appliance %s, and has no route to the appliance itself (%s)", n.poolsString(), a, h.Name, nva, how)}
	if n.RT == nil || !strings.EqualFold(r.Source, "User") || r.Name == "" {
		return f
	}
	rtID := str(n.RT.ID)
	rid := rtID + "/routes/" + r.Name
	f.resources = []string{rid, nva}
	f.changes = []report.Change{{
		Resource: rid, Kind: "Microsoft.Network/routeTables/routes", Touches: []string{nva},
		Action:  fmt.Sprintf("point route %s at an appliance %s reaches (the one at %s is not reachable), or delete it", r.Name, n.poolsString(), nva),
		Command: fmt.Sprintf("az network route-table route update -g %s --route-table-name %s -n %s --next-hop-type VirtualAppliance --next-hop-ip-address APPLIANCE_IP", resourceGroupOf(rtID), lastName(rtID), r.Name),
	}}
	return f
}

// finding is one failure of a check: the first one names the check's summary.
type finding struct {
	host      string
	summary   string
	evidence  []string
	resources []string
	changes   []report.Change
}

// fail is the check's failure from its first finding: the finding's host,
// summary, resources and changes, and its evidence after what the check
// read (ev).
func (f *finding) fail(cond verdict.Condition, ev []string) report.CheckResult {
	c := audit.WithHost(audit.Fail(cond, f.summary, append(ev, f.evidence...)...), f.host)
	c.Resources, c.Changes = f.resources, f.changes
	return c
}

func first(have, f *finding) *finding {
	if have != nil {
		return have
	}
	return f
}

func usableToAppliance(hop string) bool {
	return hop == hopVnetLocal || hop == hopPeering || hop == hopGlobalPeer
}

func defaultRoute(t *routeTable) (route, bool) {
	var best route
	found := false
	for _, r := range t.Routes {
		if r.Prefix.Bits() != 0 || !r.Prefix.Addr().Is4() {
			continue
		}
		if !found || sourceRank(r.Source) > sourceRank(best.Source) {
			best, found = r, true
		}
	}
	return best, found
}

// bgpMayCarry reports whether routes learned over BGP could reach the
// subnet, which a computed route table cannot show: gateway transit is on
// and the subnet's route table does not stop propagation.
func (m *Model) bgpMayCarry(n *nodeSubnet) bool {
	if n.RT != nil && n.RT.Properties != nil && boolv(n.RT.Properties.DisableBgpRoutePropagation) {
		return false
	}
	for _, p := range m.Peerings {
		if p != nil && p.Properties != nil && boolv(p.Properties.UseRemoteGateways) {
			return true
		}
	}
	return !m.PeeringsKnown
}

// noRoute names why a private endpoint address has no usable route: a
// route table that stops BGP propagation, a user route to None, or nothing.
func (m *Model) noRoute(n *nodeSubnet, h *pullHost, a netip.Addr, r route, ok bool) *finding {
	f := &finding{host: h.Name}
	var reach []string
	for _, id := range sortedKeys(n.Others) {
		t := n.Others[id]
		if or, ook := t.Lookup(a); ook && or.NextHop != hopNone && or.NextHop != hopInternet {
			reach = append(reach, fmt.Sprintf("%s reaches %s by %s", strings.Join(m.PoolsIn(id), ", "), a, or))
		}
	}
	sort.Strings(reach)
	f.evidence = reach
	rtID := ""
	if n.RT != nil {
		rtID = str(n.RT.ID)
	}
	disableBgp := n.RT != nil && n.RT.Properties != nil && boolv(n.RT.Properties.DisableBgpRoutePropagation)
	switch {
	case ok && strings.EqualFold(r.Source, "User") && r.NextHop == hopNone:
		rid := rtID + "/routes/" + r.Name
		f.summary = fmt.Sprintf("route %s in %s sends %s (%s) to None: %s drops the traffic", r.Name, lastName(rtID), a, h.Name, n.poolsString())
		f.resources = []string{rid}
		f.changes = []report.Change{{
			Resource: rid, Kind: "Microsoft.Network/routeTables/routes",
			Action:  fmt.Sprintf("delete route %s, or point it at the path to the registry (VirtualNetworkGateway or the hub's appliance)", r.Name),
			Command: fmt.Sprintf("az network route-table route delete -g %s --route-table-name %s -n %s", resourceGroupOf(rtID), lastName(rtID), r.Name),
		}}
	case disableBgp:
		f.summary = fmt.Sprintf("%s has disableBgpRoutePropagation: true, so %s has no route to %s (%s): the VPN gateway's routes never reach it (%s)", lastName(rtID), n.poolsString(), a, h.Name, describeRoute(r, ok))
		f.resources = []string{rtID}
		f.changes = []report.Change{{
			Resource: rtID, Kind: "Microsoft.Network/routeTables",
			Action:  fmt.Sprintf("set disableBgpRoutePropagation to false so the gateway's routes reach %s, or add a route for %s with next hop VirtualNetworkGateway", n.poolsString(), a),
			Command: fmt.Sprintf("az network route-table update -g %s -n %s --disable-bgp-route-propagation false", resourceGroupOf(rtID), lastName(rtID)),
		}}
	case ok && r.NextHop == hopInternet:
		f.summary = fmt.Sprintf("%s sends private endpoint address %s (%s) to the internet (%s): a private address is not reachable there", n.poolsString(), a, h.Name, r)
	default:
		f.summary = fmt.Sprintf("%s has no route to %s (%s): %s", n.poolsString(), a, h.Name, describeRoute(r, ok))
		if rtID != "" {
			f.resources = []string{rtID}
		}
	}
	return f
}

func appendUnique(list []string, v string) []string {
	if v == "" {
		return list
	}
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return list
		}
	}
	return append(list, v)
}

// peeringCause reports whether a missing route to addr is explained by a
// peering: the one whose space holds it is not Connected, or none uses the
// remote gateway the address sits beyond, or the one that does is down.
func (m *Model) peeringCause(a netip.Addr) bool {
	if len(m.Peerings) == 0 {
		return false
	}
	if p := m.peeringFor(a); p != nil {
		return !peeringConnected(p)
	}
	gw := false
	for _, p := range m.Peerings {
		if p == nil || p.Properties == nil || !boolv(p.Properties.UseRemoteGateways) {
			continue
		}
		gw = true
		if !peeringConnected(p) {
			return true
		}
	}
	return !gw
}
