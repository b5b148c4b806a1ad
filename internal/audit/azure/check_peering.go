package azure

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkPeering checks the cluster side of the peerings the path crosses:
// Connected, useRemoteGateways when the registry sits beyond the hub's VPN
// gateway, allowForwardedTraffic where an appliance forwards. The hub side
// and the far side's return route are outside the contract and are named
// in the evidence.
func checkPeering(m *Model, n *nodeSubnet) report.CheckResult {
	if !m.PeeringsKnown {
		return audit.Warn(verdict.ConditionRoute, "the VNet's peerings are unknown: "+FilePeerings+" is missing")
	}
	if len(m.Peerings) == 0 {
		return audit.Skip("the cluster VNet has no peerings: the path crosses none")
	}
	w := &peeringWalk{m: m, n: n, crossed: map[string]*armnetwork.VirtualNetworkPeering{}}
	for _, h := range n.Hosts {
		for _, a := range h.peAddrs() {
			w.address(h, a)
		}
	}
	var crossed []string
	for _, k := range sortedKeys(w.crossed) {
		p := w.crossed[k]
		crossed = appendUnique(crossed, str(p.ID))
		w.evidence = append(w.evidence, peeringLine(p))
		w.evidence = append(w.evidence, fmt.Sprintf("outside the contract, check too: the hub side (%s's peering back to %s: Connected, allowGatewayTransit: true if the cluster uses its gateway) and the far side's return route to %s (the on-premises network or the registry's VNet must route the node subnet back through the same gateway)", remoteName(p), lastName(parentID(n.ID)), n.cidr()))
	}
	switch {
	case w.bad != nil:
		// the finding's evidence first, then the walk's; the peerings
		// crossed after the finding's objects (an object may be both)
		c := audit.WithHost(audit.Fail(verdict.ConditionRoute, w.bad.summary, append(w.bad.evidence, w.evidence...)...), w.bad.host)
		c = audit.WithResources(c, append(w.bad.resources, crossed...)...)
		c.Changes = w.bad.changes
		return c
	case len(w.crossed) == 0:
		c := audit.Skip("the path to the registry crosses no peering")
		c.Evidence = w.evidence // what the walk read on its way
		return c
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("the cluster side of every peering on the path is Connected with the settings the path needs (%d peering(s))", len(w.crossed)), w.evidence...), crossed...)
}

// peeringWalk follows each address of the pull through the subnet's
// routes, collecting the peerings it crosses and the first finding.
type peeringWalk struct {
	m       *Model
	n       *nodeSubnet
	crossed map[string]*armnetwork.VirtualNetworkPeering
	bad     *finding
	// evidence is what the walk read, for the result
	evidence []string
}

// cross records a peering on the path and its state.
func (w *peeringWalk) cross(p *armnetwork.VirtualNetworkPeering, h *pullHost, a netip.Addr) {
	w.crossed[idKey(str(p.ID))] = p
	w.bad = first(w.bad, peeringState(p, h.Name, a))
}

// address follows one address by its route's next hop.
func (w *peeringWalk) address(h *pullHost, a netip.Addr) {
	r, ok := w.n.Routes.Lookup(a)
	hop := ""
	if ok {
		hop = r.NextHop
	}
	switch hop {
	case hopVnetLocal:
	case hopPeering, hopGlobalPeer:
		p := w.m.peeringFor(a)
		if p == nil {
			w.evidence = append(w.evidence, fmt.Sprintf("%s (%s): next hop %s, but no listed peering's remote address space holds it", a, h.Name, hop))
			return
		}
		w.cross(p, h, a)
	case hopGateway:
		w.viaGateway(h, a)
	case hopAppliance:
		w.viaAppliance(h, a, r)
	default: // None or Internet: is the path beyond a gateway the VNet does not use?
		w.beyond(h, a)
	}
}

// viaGateway: the VNet's gateway, or a hub's through the peerings that
// use remote gateways.
func (w *peeringWalk) viaGateway(h *pullHost, a netip.Addr) {
	var gw []*armnetwork.VirtualNetworkPeering
	for _, p := range w.m.Peerings {
		if p != nil && p.Properties != nil && boolv(p.Properties.UseRemoteGateways) {
			gw = append(gw, p)
		}
	}
	if len(gw) == 0 {
		w.evidence = append(w.evidence, fmt.Sprintf("%s (%s) goes through the VNet's own gateway (no peering uses a remote gateway)", a, h.Name))
	}
	for _, p := range gw {
		w.cross(p, h, a)
	}
}

// viaAppliance: an appliance in a peered VNet forwards the traffic, so
// the peering must allow forwarded traffic for its replies.
func (w *peeringWalk) viaAppliance(h *pullHost, a netip.Addr, r route) {
	if len(r.NextHopIPs) == 0 {
		return
	}
	ip, err := netip.ParseAddr(r.NextHopIPs[0])
	if err != nil {
		return
	}
	p := w.m.peeringFor(ip)
	if p == nil {
		return // the appliance is in the cluster VNet
	}
	w.cross(p, h, a)
	if !boolv(p.Properties.AllowForwardedTraffic) {
		pid := str(p.ID)
		w.bad = first(w.bad, &finding{host: h.Name,
			summary:   fmt.Sprintf("peering %s has allowForwardedTraffic: false: the replies appliance %s forwards from %s (%s) are dropped on their way into the cluster VNet", lastName(pid), ip, a, h.Name),
			resources: []string{pid},
			changes: []report.Change{{Resource: pid, Kind: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
				Action:  "allow forwarded traffic on the cluster side of the peering, so the appliance's replies enter the cluster VNet",
				Command: peeringUpdate(pid, "allowForwardedTraffic=true")}},
		})
	}
}

// beyond: an address with no route through a peering: in a peer's space,
// beyond a hub whose gateway the VNet uses, or out of reach because no
// peering uses the remote gateway.
func (w *peeringWalk) beyond(h *pullHost, a netip.Addr) {
	if p := w.m.peeringFor(a); p != nil {
		w.cross(p, h, a)
		return
	}
	var gw, nogw []*armnetwork.VirtualNetworkPeering
	for _, p := range w.m.Peerings {
		if p == nil || p.Properties == nil {
			continue
		}
		if boolv(p.Properties.UseRemoteGateways) {
			gw = append(gw, p)
		} else {
			nogw = append(nogw, p)
		}
	}
	if len(gw) > 0 {
		for _, p := range gw {
			w.cross(p, h, a)
		}
		w.evidence = append(w.evidence, fmt.Sprintf("%s (%s) is beyond the hub: gateway transit is on, so its routes must come over BGP (see the route check)", a, h.Name))
		return
	}
	if len(nogw) == 0 {
		return // no peering with properties: nothing to name
	}
	p := nogw[0]
	pid := str(p.ID)
	w.crossed[idKey(pid)] = p
	var names []string
	for _, q := range nogw {
		names = append(names, lastName(str(q.ID)))
	}
	w.bad = first(w.bad, &finding{host: h.Name,
		summary:   fmt.Sprintf("%s sits beyond the VNet and its peers, and no peering uses the remote VPN gateway (useRemoteGateways: false on %s): %s has no path to it", a, strings.Join(names, ", "), w.n.poolsString()),
		evidence:  []string{fmt.Sprintf("the hub side (%s's peering back to the cluster VNet) must have allowGatewayTransit: true before useRemoteGateways can be set", remoteName(p))},
		resources: []string{pid},
		changes: []report.Change{{Resource: pid, Kind: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
			Action:  fmt.Sprintf("use the hub's VPN gateway from the cluster VNet (useRemoteGateways: true; the hub side %s needs allowGatewayTransit: true first)", remoteName(p)),
			Command: peeringUpdate(pid, "useRemoteGateways=true")}},
	})
}

func peeringState(p *armnetwork.VirtualNetworkPeering, host string, a netip.Addr) *finding {
	pid := str(p.ID)
	st := ""
	if p.Properties != nil && p.Properties.PeeringState != nil {
		st = string(*p.Properties.PeeringState)
	}
	if !strings.EqualFold(st, "Connected") {
		action := "re-create the peering on both sides"
		switch strings.ToLower(st) {
		case "initiated":
			action = fmt.Sprintf("create the other side of the peering (on %s, back to the cluster VNet)", remoteName(p))
		case "disconnected":
			action = fmt.Sprintf("delete and re-create the peering on both sides (the %s side was removed or reset)", remoteName(p))
		}
		return &finding{host: host,
			summary:   fmt.Sprintf("peering %s to %s is %s, not Connected: no traffic to %s (%s) crosses it", lastName(pid), remoteName(p), cmp.Or(st, "unknown"), a, host),
			resources: []string{pid},
			changes: []report.Change{{Resource: pid, Kind: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings", Action: action,
				Command: fmt.Sprintf("az network vnet peering show -g %s --vnet-name %s -n %s --query peeringState", resourceGroupOf(pid), idSegment(pid, "virtualNetworks"), lastName(pid))}},
		}
	}
	if p.Properties != nil && p.Properties.AllowVirtualNetworkAccess != nil && !*p.Properties.AllowVirtualNetworkAccess {
		return &finding{host: host,
			summary:   fmt.Sprintf("peering %s has allowVirtualNetworkAccess: false: %s (%s) in %s is not reachable over it", lastName(pid), a, host, remoteName(p)),
			resources: []string{pid},
			changes: []report.Change{{Resource: pid, Kind: "Microsoft.Network/virtualNetworks/virtualNetworkPeerings", Action: "allow virtual network access over the peering",
				Command: peeringUpdate(pid, "allowVirtualNetworkAccess=true")}},
		}
	}
	return nil
}

func peeringUpdate(pid, set string) string {
	return fmt.Sprintf("az network vnet peering update -g %s --vnet-name %s -n %s --set %s", resourceGroupOf(pid), idSegment(pid, "virtualNetworks"), lastName(pid), set)
}

func peeringLine(p *armnetwork.VirtualNetworkPeering) string {
	pp := p.Properties
	if pp == nil {
		return "peering " + lastName(str(p.ID))
	}
	st := ""
	if pp.PeeringState != nil {
		st = string(*pp.PeeringState)
	}
	return fmt.Sprintf("peering %s -> %s: %s, useRemoteGateways %v, allowForwardedTraffic %v, allowGatewayTransit %v, remote %s",
		lastName(str(p.ID)), remoteName(p), cmp.Or(st, "unknown"), boolv(pp.UseRemoteGateways), boolv(pp.AllowForwardedTraffic), boolv(pp.AllowGatewayTransit), prefixesString(peeringPrefixes(p)))
}

func remoteName(p *armnetwork.VirtualNetworkPeering) string {
	if p.Properties != nil && p.Properties.RemoteVirtualNetwork != nil {
		return str(p.Properties.RemoteVirtualNetwork.ID)
	}
	return "the remote VNet"
}
