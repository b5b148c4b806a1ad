// Package synth builds large synthetic AKS accounts for the azure audit's
// benchmark: the healthy hub-and-spoke fixture grown to many pools, each
// with its own subnet, route table (of many routes) and NSG (of many
// rules), and a private DNS zone of many records. The last pool's route
// table stops BGP propagation, so the audit has one failing pool to find.
package synth

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"

	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
)

// Size is the shape of an account.
type Size struct {
	Pools, Routes, Rules, Records int
}

// Benchmark is the benchmark's account (BENCHMARKS.md): 40 pools, 40 route tables of 400
// routes, NSGs of 200 rules, 2,000 records in the zone.
var Benchmark = Size{Pools: 40, Routes: 400, Rules: 200, Records: 2000}

// Account grows the healthy fixture (read from fixture, the valid-healthy
// folder) to size s.
func Account(fixture fs.FS, s Size) (*azaudit.Model, error) {
	m, err := azaudit.Load(fixture)
	if err != nil {
		return nil, err
	}
	if s.Pools < 1 || s.Pools > 250 {
		return nil, fmt.Errorf("synth: %d pools: want 1 to 250", s.Pools)
	}
	base := m.Cluster.Properties.AgentPoolProfiles[1] // the user pool
	baseSubnetID := *base.VnetSubnetID
	vnetID := baseSubnetID[:strings.LastIndex(baseSubnetID, "/subnets/")]
	baseSubnet := m.Subnets[strings.ToLower(baseSubnetID)]
	baseRT := m.RouteTables[strings.ToLower(*baseSubnet.Properties.RouteTable.ID)]
	baseNSG := m.NSGs[strings.ToLower(*baseSubnet.Properties.NetworkSecurityGroup.ID)]
	var baseRoutes []*armnetwork.EffectiveRoute
	for _, r := range m.Routes {
		baseRoutes = r
		break
	}
	rg := func(id string) string { return id[:strings.Index(id, "/providers/")] }
	netRG := rg(*baseRT.ID)

	m.Cluster.Properties.AgentPoolProfiles = nil
	m.Subnets = map[string]*armnetwork.Subnet{}
	m.RouteTables = map[string]*armnetwork.RouteTable{}
	m.NSGs = map[string]*armnetwork.SecurityGroup{}
	m.Routes = map[string][]*armnetwork.EffectiveRoute{}
	m.VNet.Properties.Subnets = nil
	nodeRG := ""
	for _, ipc := range baseSubnet.Properties.IPConfigurations {
		nodeRG = rg(*ipc.ID)
	}
	for i := 0; i < s.Pools; i++ {
		pool := fmt.Sprintf("p%02d", i)
		subnetID := fmt.Sprintf("%s/subnets/snet-%s", vnetID, pool)
		rtID := fmt.Sprintf("%s/providers/Microsoft.Network/routeTables/rt-%s", netRG, pool)
		nsgID := fmt.Sprintf("%s/providers/Microsoft.Network/networkSecurityGroups/nsg-%s", netRG, pool)
		vmss := fmt.Sprintf("aks-%s-12345678-vmss", pool)
		p := *base
		p.Name, p.VnetSubnetID = to.Ptr(pool), to.Ptr(subnetID)
		m.Cluster.Properties.AgentPoolProfiles = append(m.Cluster.Properties.AgentPoolProfiles, &p)

		sn := &armnetwork.Subnet{ID: to.Ptr(subnetID), Name: to.Ptr("snet-" + pool), Type: baseSubnet.Type, Properties: &armnetwork.SubnetPropertiesFormat{
			AddressPrefix:        to.Ptr(fmt.Sprintf("10.10.%d.0/24", i)),
			RouteTable:           &armnetwork.RouteTable{ID: to.Ptr(rtID)},
			NetworkSecurityGroup: &armnetwork.SecurityGroup{ID: to.Ptr(nsgID)},
			IPConfigurations:     []*armnetwork.IPConfiguration{{ID: to.Ptr(fmt.Sprintf("%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s/virtualMachines/0/networkInterfaces/%s/ipConfigurations/ipconfig1", nodeRG, vmss, vmss))}},
		}}
		m.Subnets[strings.ToLower(subnetID)] = sn
		m.VNet.Properties.Subnets = append(m.VNet.Properties.Subnets, sn)

		failing := i == s.Pools-1
		rt := &armnetwork.RouteTable{ID: to.Ptr(rtID), Name: to.Ptr("rt-" + pool), Type: baseRT.Type, Location: baseRT.Location,
			Properties: &armnetwork.RouteTablePropertiesFormat{DisableBgpRoutePropagation: to.Ptr(failing)}}
		var eff []*armnetwork.EffectiveRoute
		for _, r := range baseRoutes {
			if failing && r.NextHopType != nil && *r.NextHopType == armnetwork.RouteNextHopTypeVirtualNetworkGateway {
				continue
			}
			eff = append(eff, r)
		}
		for j := 0; j < s.Routes; j++ {
			prefix := fmt.Sprintf("10.%d.%d.0/24", 100+j/250, j%250)
			name := fmt.Sprintf("to-branch-%03d", j)
			rt.Properties.Routes = append(rt.Properties.Routes, &armnetwork.Route{ID: to.Ptr(rtID + "/routes/" + name), Name: to.Ptr(name),
				Properties: &armnetwork.RoutePropertiesFormat{AddressPrefix: to.Ptr(prefix), NextHopType: to.Ptr(armnetwork.RouteNextHopTypeVirtualAppliance), NextHopIPAddress: to.Ptr("10.0.2.4")}})
			eff = append(eff, &armnetwork.EffectiveRoute{Name: to.Ptr(name), AddressPrefix: []*string{to.Ptr(prefix)}, NextHopType: to.Ptr(armnetwork.RouteNextHopTypeVirtualAppliance),
				NextHopIPAddress: []*string{to.Ptr("10.0.2.4")}, Source: to.Ptr(armnetwork.EffectiveRouteSourceUser), State: to.Ptr(armnetwork.EffectiveRouteStateActive)})
		}
		m.RouteTables[strings.ToLower(rtID)] = rt
		m.Routes[strings.ToLower(vmss)] = eff

		g := &armnetwork.SecurityGroup{ID: to.Ptr(nsgID), Name: to.Ptr("nsg-" + pool), Type: baseNSG.Type, Location: baseNSG.Location,
			Properties: &armnetwork.SecurityGroupPropertiesFormat{DefaultSecurityRules: baseNSG.Properties.DefaultSecurityRules}}
		for j := 0; j < s.Rules; j++ {
			name := fmt.Sprintf("deny-partner-%03d", j)
			g.Properties.SecurityRules = append(g.Properties.SecurityRules, &armnetwork.SecurityRule{ID: to.Ptr(nsgID + "/securityRules/" + name), Name: to.Ptr(name),
				Properties: &armnetwork.SecurityRulePropertiesFormat{Access: to.Ptr(armnetwork.SecurityRuleAccessDeny), Direction: to.Ptr(armnetwork.SecurityRuleDirectionOutbound),
					Priority: to.Ptr(int32(100 + j)), Protocol: to.Ptr(armnetwork.SecurityRuleProtocolTCP), SourceAddressPrefix: to.Ptr("*"), SourcePortRange: to.Ptr("*"),
					DestinationAddressPrefix: to.Ptr(fmt.Sprintf("172.%d.%d.0/24", 16+j/250, j%250)), DestinationPortRange: to.Ptr("443")}})
		}
		m.NSGs[strings.ToLower(nsgID)] = g
	}
	zoneID := m.ZoneID()
	for j := 0; j < s.Records; j++ {
		name := fmt.Sprintf("app-%04d", j)
		m.Records = append(m.Records, &armprivatedns.RecordSet{ID: to.Ptr(zoneID + "/A/" + name), Name: to.Ptr(name), Type: to.Ptr("Microsoft.Network/privateDnsZones/A"),
			Properties: &armprivatedns.RecordSetProperties{TTL: to.Ptr(int64(10)), ARecords: []*armprivatedns.ARecord{{IPv4Address: to.Ptr(fmt.Sprintf("10.60.%d.%d", j/250, j%250+1))}}}})
	}
	return m, nil
}
