package azure

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// AzureDNS is the platform's resolver, reachable from every VNet; it
// answers from the private zones linked to the asking VNet.
var AzureDNS = netip.MustParseAddr("168.63.129.16")

// resolverPlan says which VNets' links decide what the nodes resolve: the
// node VNet when it uses Azure-provided DNS (or 168.63.129.16 directly), a
// forwarder's VNet when the VNet's custom DNS server sits in the VNet or a
// peer, and nothing knowable when the server is elsewhere (on-premises).
type resolverPlan struct {
	servers []netip.Addr
	custom  bool
	vnets   []string // VNet ids whose zone links decide
	unknown []netip.Addr
	notes   []string
}

func (m *Model) resolvers() resolverPlan {
	var pl resolverPlan
	vnetID := ""
	if m.VNet != nil {
		vnetID = str(m.VNet.ID)
	} else if subs := m.NodeSubnets(); len(subs) > 0 {
		vnetID = parentID(subs[0])
	}
	if m.VNet != nil && m.VNet.Properties != nil && m.VNet.Properties.DhcpOptions != nil {
		for _, s := range m.VNet.Properties.DhcpOptions.DNSServers {
			if a, err := netip.ParseAddr(strings.TrimSpace(str(s))); err == nil {
				pl.servers = append(pl.servers, a)
			}
		}
	}
	if len(pl.servers) == 0 {
		pl.vnets = []string{vnetID}
		return pl
	}
	pl.custom = true
	for _, a := range pl.servers {
		switch {
		case a == AzureDNS:
			pl.vnets = appendUnique(pl.vnets, vnetID)
			pl.notes = append(pl.notes, fmt.Sprintf("%s is Azure DNS: it answers from the zones linked to the node VNet", a))
		case inAny(a, m.vnetPrefixes()):
			pl.vnets = appendUnique(pl.vnets, vnetID)
			pl.notes = append(pl.notes, fmt.Sprintf("%s is in the node VNet: if it forwards to 168.63.129.16 it sees the zones linked to the node VNet", a))
		default:
			if p := m.peeringFor(a); p != nil {
				pl.vnets = appendUnique(pl.vnets, remoteName(p))
				pl.notes = append(pl.notes, fmt.Sprintf("%s is in peered VNet %s: if it forwards to 168.63.129.16 it sees the zones linked to that VNet", a, remoteName(p)))
			} else {
				pl.unknown = append(pl.unknown, a)
			}
		}
	}
	return pl
}

// checkDNSServers checks the VNet's DNS servers: Azure-provided, or custom
// ones that can see privatelink.azurecr.io and that the nodes can reach.
func checkDNSServers(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionDNS
	if m.VNet == nil {
		return audit.Warn(cond, "the VNet's DNS servers are unknown: "+FileVNet+" is missing")
	}
	vid := str(m.VNet.ID)
	pl := m.resolvers()
	if !pl.custom {
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s uses Azure-provided DNS (168.63.129.16): the nodes see the private zones linked to it", lastName(vid))), vid)
	}
	var ev []string
	ev = append(ev, "dhcpOptions.dnsServers: "+addrsString(pl.servers))
	ev = append(ev, pl.notes...)
	// every custom server must be reachable from the nodes
	for _, a := range pl.servers {
		if a == AzureDNS {
			continue
		}
		r, ok := n.Routes.Lookup(a)
		if !ok || r.NextHop == hopNone || (r.NextHop == hopInternet && a.IsPrivate()) {
			if n.Routes.Computed && m.bgpMayCarry(n) {
				ev = append(ev, fmt.Sprintf("DNS server %s: %s (computed; a BGP route may carry it)", a, describeRoute(r, ok)))
				continue
			}
			c := audit.Fail(cond, fmt.Sprintf("%s has no route to DNS server %s (%s): the nodes cannot resolve the registry", n.poolsString(), a, describeRoute(r, ok)), ev...)
			return audit.WithChange(audit.WithResources(c, vid), report.Change{Resource: vid, Kind: "Microsoft.Network/virtualNetworks",
				Action:  fmt.Sprintf("give the node subnets a route to DNS server %s, or set DNS servers the nodes can reach (Azure DNS, or a forwarder in a VNet linked to %s)", a, ACRZone),
				Command: fmt.Sprintf("az network vnet update -g %s -n %s --dns-servers %s", resourceGroupOf(vid), lastName(vid), AzureDNS)})
		}
		ev = append(ev, fmt.Sprintf("DNS server %s: %s", a, r))
	}
	if len(pl.unknown) > 0 {
		return audit.WithResources(audit.Warn(cond, fmt.Sprintf("custom DNS server %s is outside the VNet and its peers: it must forward azurecr.io (privatelink.azurecr.io) to a resolver in a VNet linked to the zone (a DNS Private Resolver inbound endpoint or a forwarder that asks 168.63.129.16); its configuration is outside the contract", addrsString(pl.unknown)), ev...), vid)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("custom DNS %s sits in Azure (the zone link check covers the VNet it answers from); it must forward to 168.63.129.16", addrsString(pl.servers)), ev...), vid)
}

// checkZoneLink checks privatelink.azurecr.io exists and is linked to the
// VNet the nodes' resolver answers from.
func checkZoneLink(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionDNS
	if !anyPrivate(n.Hosts) {
		return audit.Skip("the registry has no private endpoint: the nodes resolve its public names")
	}
	pl := m.resolvers()
	if len(pl.vnets) == 0 {
		return audit.Warn(cond, "the nodes' resolver is outside Azure's view (custom DNS "+addrsString(pl.unknown)+"): which VNet's zone links decide is unknown")
	}
	zoneID := m.ZoneID()
	if m.ZonesKnown && m.Zone() == nil {
		c := audit.WithHost(audit.Fail(cond, fmt.Sprintf("no %s private DNS zone exists: the nodes resolve %s to its public address", ACRZone, firstPrivate(n.Hosts))), firstPrivate(n.Hosts))
		c.Changes = []report.Change{{Resource: pl.vnets[0], Kind: "Microsoft.Network/privateDnsZones",
			Action:  fmt.Sprintf("create the %s zone, link it to %s and give the private endpoint a DNS zone group that writes its records", ACRZone, lastName(pl.vnets[0])),
			Command: fmt.Sprintf("az network private-dns zone create -g %s -n %s", resourceGroupOf(pl.vnets[0]), ACRZone)}}
		return c
	}
	if !m.LinksKnown {
		return audit.Warn(cond, "the zone's VNet links are unknown: "+FileLinks(ACRZone)+" is missing")
	}
	var ev, res []string // the links read, the zone and its links
	if zoneID != "" {
		res = []string{zoneID}
	}
	for _, vid := range pl.vnets {
		l := linkTo(m.Links, vid)
		if l == nil {
			zrg := resourceGroupOf(zoneID)
			if zrg == "" {
				zrg = "ZONE_RG"
			}
			host := firstPrivate(n.Hosts)
			c := audit.WithHost(audit.Fail(cond, fmt.Sprintf("%s is not linked to %s: %s resolves %s to its public address", ACRZone, lastName(vid), n.poolsString(), host), ev...), host)
			c.Resources = appendUnique(res, vid)
			c.Changes = []report.Change{{Resource: cmp.Or(zoneID, ACRZone), Kind: "Microsoft.Network/privateDnsZones",
				Action:  fmt.Sprintf("link %s to %s (registration off)", ACRZone, vid),
				Command: fmt.Sprintf("az network private-dns link vnet create -g %s -z %s -n %s-link -v %s -e false", zrg, ACRZone, lastName(vid), vid)}}
			return c
		}
		st := ""
		if l.Properties != nil && l.Properties.VirtualNetworkLinkState != nil {
			st = string(*l.Properties.VirtualNetworkLinkState)
		}
		ev = append(ev, fmt.Sprintf("link %s -> %s (%s)", str(l.Name), lastName(vid), cmp.Or(st, "unknown")))
		res = appendUnique(res, str(l.ID))
		if st != "" && !strings.EqualFold(st, "Completed") {
			return audit.WithResources(audit.Warn(cond, fmt.Sprintf("the link of %s to %s is %s, not Completed", ACRZone, lastName(vid), st), ev...), res...)
		}
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s is linked to %s", ACRZone, vnetNames(pl.vnets)), ev...), res...)
}

func vnetNames(ids []string) string {
	ns := make([]string, len(ids))
	for i, id := range ids {
		ns[i] = lastName(id)
	}
	return strings.Join(ns, ", ")
}

func linkTo(links []*armprivatedns.VirtualNetworkLink, vnetID string) *armprivatedns.VirtualNetworkLink {
	for _, l := range links {
		if l != nil && l.Properties != nil && l.Properties.VirtualNetwork != nil && sameID(str(l.Properties.VirtualNetwork.ID), vnetID) {
			return l
		}
	}
	return nil
}

func anyPrivate(hs []*pullHost) bool {
	for _, h := range hs {
		if h.private() {
			return true
		}
	}
	return false
}

func firstPrivate(hs []*pullHost) string {
	for _, h := range hs {
		if h.private() {
			return h.Name
		}
	}
	return ""
}

// checkRecords checks an A record in privatelink.azurecr.io for the
// registry and for every data endpoint, each pointing at the private
// endpoint's address for that name (customDnsConfigs).
func checkRecords(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionDNS
	if !anyPrivate(n.Hosts) {
		return audit.Skip("the registry has no private endpoint: no private records are needed")
	}
	if !m.RecordsKnown {
		return audit.Warn(cond, "the zone's A records are unknown: "+FileRecords(ACRZone)+" is missing")
	}
	var ev []string
	zoneID := m.ZoneID()
	zrg := cmp.Or(resourceGroupOf(zoneID), "ZONE_RG")
	recs := map[string]*armprivatedns.RecordSet{}
	for _, r := range m.Records {
		if r != nil {
			recs[strings.ToLower(strings.TrimSuffix(str(r.Name), "."))] = r
		}
	}
	var bad *finding
	for _, h := range n.Hosts {
		if !h.private() {
			continue
		}
		want := h.peAddrs()
		r := recs[h.Record]
		recID := zoneID + "/A/" + h.Record
		if r != nil && r.ID != nil {
			recID = *r.ID
		}
		if r == nil {
			pe := lastName(h.PEIDs[0])
			bad = first(bad, &finding{host: h.Name,
				summary:   fmt.Sprintf("A record %s is missing in %s: %s cannot resolve %s to private endpoint %s (%s)", h.Record, ACRZone, n.poolsString(), h.Name, pe, addrsString(want)),
				resources: []string{recID},
				changes: []report.Change{{Resource: recID, Kind: "Microsoft.Network/privateDnsZones/A",
					Action:  fmt.Sprintf("add A record %s -> %s (or give private endpoint %s a DNS zone group for %s, which keeps every record)", h.Record, addrsString(want), pe, ACRZone),
					Command: fmt.Sprintf("az network private-dns record-set a add-record -g %s -z %s -n %s -a %s", zrg, ACRZone, h.Record, want[0])}},
			})
			continue
		}
		var got []netip.Addr
		if r.Properties != nil {
			for _, a := range r.Properties.ARecords {
				if a != nil {
					if ip, err := netip.ParseAddr(str(a.IPv4Address)); err == nil {
						got = append(got, ip)
					}
				}
			}
		}
		var wrong []netip.Addr
		for _, g := range got {
			if !containsAddr(want, g) {
				wrong = append(wrong, g)
			}
		}
		ev = append(ev, fmt.Sprintf("%s: A %s (private endpoint gives %s)", h.Record, addrsString(got), addrsString(want)))
		if len(got) == 0 || len(wrong) > 0 {
			cmd := fmt.Sprintf("az network private-dns record-set a add-record -g %s -z %s -n %s -a %s", zrg, ACRZone, h.Record, want[0])
			if len(wrong) > 0 {
				cmd = fmt.Sprintf("az network private-dns record-set a remove-record -g %s -z %s -n %s -a %s && ", zrg, ACRZone, h.Record, wrong[0]) + cmd
			}
			bad = first(bad, &finding{host: h.Name,
				summary:   fmt.Sprintf("A record %s in %s points at %s, not at private endpoint %s's %s", h.Record, ACRZone, cmp.Or(addrsString(got), "unknown"), lastName(h.PEIDs[0]), addrsString(want)),
				resources: []string{recID},
				changes: []report.Change{{Resource: recID, Kind: "Microsoft.Network/privateDnsZones/A",
					Action:  fmt.Sprintf("point %s at %s", h.Record, addrsString(want)),
					Command: cmd}},
			})
		}
	}
	if bad != nil {
		return bad.fail(cond, ev)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s has an A record at the private endpoint's address for the registry and every data endpoint", ACRZone), ev...), zoneID)
}

func containsAddr(list []netip.Addr, a netip.Addr) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}
