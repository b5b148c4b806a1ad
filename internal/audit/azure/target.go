package azure

import (
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
)

// nodeSubnet is what every check reads for one node subnet: the subnet, its
// pools, route table, NSG, the routes one of its node NICs sees, and the
// hosts of a pull.
type nodeSubnet struct {
	ID       string
	Subnet   *armnetwork.Subnet // nil when neither the subnet file nor the VNet's copy was there
	Pools    []string
	Prefixes []netip.Prefix
	RT       *armnetwork.RouteTable
	NSG      *armnetwork.SecurityGroup
	Routes   *routeTable
	Hosts    []*pullHost
	// Others are the routes of the other node subnets, to name a pool
	// that does reach an address.
	Others map[string]*routeTable
}

func (n *nodeSubnet) poolsString() string {
	if len(n.Pools) == 0 {
		return "subnet " + lastName(n.ID)
	}
	if len(n.Pools) == 1 {
		return "pool " + n.Pools[0]
	}
	// one subject for the sentence it starts: "subnet S (pools a, b) has ..."
	return "subnet " + lastName(n.ID) + " (pools " + strings.Join(n.Pools, ", ") + ")"
}

func (n *nodeSubnet) cidr() string { return prefixesString(n.Prefixes) }

// buildSubnets makes the per-subnet views, in the order the pools list them.
func (m *Model) buildSubnets(hosts []*pullHost) []*nodeSubnet {
	nics := map[string]NIC{}
	for _, nic := range m.NodeNICs() {
		if _, ok := nics[idKey(nic.SubnetID)]; !ok {
			if _, has := m.Routes[strings.ToLower(nic.Name)]; has {
				nics[idKey(nic.SubnetID)] = nic
			}
		}
	}
	var out []*nodeSubnet
	tables := map[string]*routeTable{}
	for _, id := range m.NodeSubnets() {
		sn := m.Subnets[idKey(id)]
		ns := &nodeSubnet{ID: id, Subnet: sn, Pools: m.PoolsIn(id), Prefixes: subnetPrefixes(sn), RT: m.routeTableOf(sn), NSG: m.nsgOf(sn), Hosts: hosts}
		if nic, ok := nics[idKey(id)]; ok {
			ns.Routes = fromEffective(nic.Name, m.Routes[strings.ToLower(nic.Name)])
		} else {
			ns.Routes = m.computeRoutes(sn)
		}
		tables[id] = ns.Routes
		out = append(out, ns)
	}
	for _, ns := range out {
		ns.Others = map[string]*routeTable{}
		for id, t := range tables {
			if !sameID(id, ns.ID) {
				ns.Others[id] = t
			}
		}
	}
	return out
}
