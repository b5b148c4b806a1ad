package azure

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/report"
)

// Azure's route selection: longest prefix first; on equal prefixes a user
// route beats a BGP route beats a system route; Invalid routes are out.
func TestRouteLookup(t *testing.T) {
	pf := netip.MustParsePrefix
	tbl := &routeTable{Routes: []route{
		{Prefix: pf("0.0.0.0/0"), NextHop: hopInternet, Source: "Default"},
		{Prefix: pf("10.0.0.0/8"), NextHop: hopNone, Source: "Default"},
		{Prefix: pf("10.50.0.0/16"), NextHop: hopGateway, Source: "VirtualNetworkGateway"},
		{Prefix: pf("10.50.0.0/16"), NextHop: hopAppliance, Source: "User", Name: "via-fw"},
		{Prefix: pf("10.50.1.0/24"), NextHop: hopGateway, Source: "VirtualNetworkGateway"},
		{Prefix: pf("10.60.0.0/16"), NextHop: hopGateway, Source: "VirtualNetworkGateway"},
		{Prefix: pf("10.60.0.0/16"), NextHop: hopPeering, Source: "Default"},
	}}
	for _, tc := range []struct {
		addr, hop, name string
	}{
		{"10.50.1.4", hopGateway, ""},         // /24 beats the /16 user route
		{"10.50.2.4", hopAppliance, "via-fw"}, // equal /16: User beats BGP
		{"10.60.0.9", hopGateway, ""},         // equal /16: BGP beats Default
		{"10.70.0.1", hopNone, ""},            // the private range's system route
		{"20.1.2.3", hopInternet, ""},
	} {
		r, ok := tbl.Lookup(netip.MustParseAddr(tc.addr))
		if !ok || r.NextHop != tc.hop || r.Name != tc.name {
			t.Errorf("Lookup(%s) = %v (%v), want %s %s", tc.addr, r, ok, tc.hop, tc.name)
		}
	}
}

// NSG rules: priority order, the first match decides; protocol, port
// ranges, service tags and prefixes; the default rules.
func TestNSGDecide(t *testing.T) {
	pf := netip.MustParsePrefix
	ev := &nsgEval{vnet: []netip.Prefix{pf("10.10.0.0/16"), pf("10.50.0.0/16")}, src: []netip.Prefix{pf("10.10.4.0/22")}, region: "eastus"}
	pe := dest{Addr: netip.MustParseAddr("10.50.1.4")}
	beyond := dest{Addr: netip.MustParseAddr("10.99.1.4")}
	acr := dest{Service: "AzureContainerRegistry", Host: "contosoacr.azurecr.io"}
	rule := func(name string, prio int32, allow bool, proto string, src, dst, port string) nsgRule {
		return nsgRule{Name: name, Priority: prio, Allow: allow, Outbound: true, Protocol: proto, SrcPrefix: []string{src}, DstPrefix: []string{dst}, DstPorts: []string{port}}
	}
	tests := []struct {
		name  string
		rules []nsgRule
		d     dest
		want  string
		match tri
	}{
		{"defaults: VirtualNetwork", nil, pe, "AllowVnetOutBound", yes},
		{"defaults: outside the VNet tag is Internet", nil, beyond, "AllowInternetOutBound", yes},
		{"defaults: a public ACR host", nil, acr, "AllowInternetOutBound", yes},
		{"deny by prefix first", []nsgRule{rule("deny", 100, false, "Tcp", "*", "10.50.0.0/16", "443")}, pe, "deny", yes},
		{"a UDP deny does not match", []nsgRule{rule("deny", 100, false, "Udp", "*", "10.50.0.0/16", "443")}, pe, "AllowVnetOutBound", yes},
		{"a port range holds 443", []nsgRule{rule("deny", 100, false, "*", "*", "*", "400-500")}, pe, "deny", yes},
		{"a port range without 443", []nsgRule{rule("deny", 100, false, "*", "*", "*", "8000-9000")}, pe, "AllowVnetOutBound", yes},
		{"allow before deny", []nsgRule{rule("deny", 200, false, "Tcp", "*", "*", "443"), rule("allow", 150, true, "Tcp", "VirtualNetwork", "10.50.1.4", "443")}, pe, "allow", yes},
		{"the ACR tag is not a private endpoint", []nsgRule{rule("allow-acr", 100, true, "Tcp", "*", "AzureContainerRegistry", "443"), rule("deny", 200, false, "*", "*", "*", "*")}, pe, "deny", yes},
		{"the ACR tag matches the public host", []nsgRule{rule("allow-acr", 100, true, "Tcp", "*", "AzureContainerRegistry.eastus", "443"), rule("deny", 200, false, "*", "*", "*", "*")}, acr, "allow-acr", yes},
		{"deny Internet leaves the VNet alone", []nsgRule{rule("deny-internet", 100, false, "*", "*", "Internet", "*")}, pe, "AllowVnetOutBound", yes},
		{"another subnet's source does not match", []nsgRule{rule("deny", 100, false, "*", "10.10.0.0/22", "*", "*")}, pe, "AllowVnetOutBound", yes},
		{"a source covering part of the subnet may match", []nsgRule{rule("deny", 100, false, "*", "10.10.4.0/24", "*", "*")}, pe, "deny", maybe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := append(append([]nsgRule(nil), tt.rules...), defaultOutbound...)
			sortRules(rules)
			r, m := ev.decide(rules, tt.d)
			if r.Name != tt.want || m != tt.match {
				t.Errorf("decide = %s (%v), want %s (%v)", r.Name, m, tt.want, tt.match)
			}
		})
	}
}

// A user route to an appliance the nodes cannot reach fails the route
// check, and its change repoints the route and names the appliance beside
// the table.
func TestRouteToAnUnreachableApplianceNamesIt(t *testing.T) {
	pf := netip.MustParsePrefix
	rtID := "/subscriptions/s/resourceGroups/rg-net/providers/Microsoft.Network/routeTables/rt-apps"
	n := &nodeSubnet{ID: "/subscriptions/s/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-aks/subnets/snet-apps", Pools: []string{"apps"},
		RT: &armnetwork.RouteTable{ID: to.Ptr(rtID)},
		Routes: &routeTable{NIC: "nic-apps", Routes: []route{
			{Prefix: pf("0.0.0.0/0"), NextHop: hopInternet, Source: "Default"},
			{Prefix: pf("10.0.0.0/16"), NextHop: hopVnetLocal, Source: "Default"},
			{Prefix: pf("10.20.0.0/24"), NextHop: hopAppliance, NextHopIPs: []string{"10.99.0.4"}, Source: "User", Name: "to-fw"},
		}},
		Hosts: []*pullHost{{Name: "contosoacr.azurecr.io", PE: map[string][]netip.Addr{"pe": {netip.MustParseAddr("10.20.0.5")}}, PEIDs: []string{"pe"}}},
	}
	c := checkRoute(&Model{}, n)
	if c.Status != report.StepFail || !strings.Contains(c.Summary, "to appliance 10.99.0.4, and has no route to the appliance itself") {
		t.Fatalf("checkRoute = %s: %s, want a failure naming the appliance", c.Status, c.Summary)
	}
	want := []report.Change{{Resource: rtID + "/routes/to-fw", Kind: "Microsoft.Network/routeTables/routes", Touches: []string{"10.99.0.4"},
		Action:  "point route to-fw at an appliance pool apps reaches (the one at 10.99.0.4 is not reachable), or delete it",
		Command: "az network route-table route update -g rg-net --route-table-name rt-apps -n to-fw --next-hop-type VirtualAppliance --next-hop-ip-address APPLIANCE_IP"}}
	if diff := cmp.Diff(want, c.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}
