package azure

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The IPv6 path of a dual-stack cluster, by Azure's documents: AKS
// dual-stack (networkProfile.ipFamilies [IPv4, IPv6]) gives every node an
// IPv4 and an IPv6 address from its subnet; AKS has no IPv6-only mode. A
// registry's names have AAAA records only with the endpoint protocol
// IPv4AndIPv6 (ACR's "IPv6 dual-stack endpoints", preview, Premium, with
// dedicated data endpoints), and only on its public endpoints: private
// endpoint traffic stays IPv4. So IPv6 is on the pull's path when a
// dual-stack cluster pulls a dual-stack registry over its public
// endpoints; the nodes (Go's dialer in containerd and the kubelet) dial
// IPv6 first and fall back to IPv4 after 300 ms, so a dropped IPv6 path
// costs time on every new connection and fails nothing: a warn, in
// IPV6_PATH_BROKEN's direction.

// CheckIPv6 is the check's id.
const CheckIPv6 = "ipv6-egress"

const dualStackProtocol = "IPv4AndIPv6"

// clusterIPv6 reports whether the cluster is dual-stack.
func (m *Model) clusterIPv6() bool {
	if m.Cluster == nil || m.Cluster.Properties == nil || m.Cluster.Properties.NetworkProfile == nil {
		return false
	}
	for _, f := range m.Cluster.Properties.NetworkProfile.IPFamilies {
		if f != nil && *f == armcontainerservice.IPFamilyIPv6 {
			return true
		}
	}
	return false
}

// checkIPv6 judges the IPv6 path from a dual-stack node subnet to a
// dual-stack registry's public hosts: the ::/0 route and the subnet NSG's
// outbound rules for IPv6.
func checkIPv6(m *Model, n *nodeSubnet) report.CheckResult {
	if !m.clusterIPv6() {
		return audit.Skip("the cluster is IPv4-only (networkProfile.ipFamilies): the pull is IPv4")
	}
	if !strings.EqualFold(m.EndpointProtocol, dualStackProtocol) {
		return audit.Skip(fmt.Sprintf("registry %s has the IPv4 endpoint protocol: its names have only A records, so the dual-stack nodes pull over IPv4", m.RegistryName()))
	}
	var public, private []string
	for _, h := range n.Hosts {
		if h.private() {
			private = append(private, h.Name)
		} else {
			public = append(public, h.Name)
		}
	}
	if len(public) == 0 {
		return audit.Skip("every host of the pull goes through a private endpoint, which carries IPv4 only")
	}
	var v6 []netip.Prefix
	for _, p := range subnetPrefixes(n.Subnet) {
		if p.Addr().Is6() {
			v6 = append(v6, p)
		}
	}
	if len(v6) == 0 {
		return audit.Skip(fmt.Sprintf("subnet %s has no IPv6 prefix: its nodes have no IPv6 address", lastName(n.ID)))
	}
	hosts := strings.Join(public, ", ")
	ev := []string{fmt.Sprintf("%s: endpoint protocol %s, public hosts %s", m.RegistryName(), m.EndpointProtocol, hosts),
		"subnet " + lastName(n.ID) + " IPv6: " + prefixesString(v6)}
	if len(private) > 0 {
		ev = append(ev, "by private endpoint (IPv4 only): "+strings.Join(private, ", "))
	}
	var problems []string
	var c report.CheckResult
	if n.Routes != nil {
		r, ok := n.Routes.route6()
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("pool %s has no route for ::/0", strings.Join(n.Pools, ",")))
		case r.NextHop == hopNone:
			problems = append(problems, fmt.Sprintf("%s drops IPv6 to %s", r, hosts))
			if strings.EqualFold(r.Source, "User") && n.RT != nil {
				rtID := str(n.RT.ID)
				c = audit.WithChange(c, report.Change{Resource: rtID + "/routes/" + r.Name, Kind: "Microsoft.Network/routeTables/routes",
					Action:  "delete the user route that drops ::/0 (or point it at the internet or an appliance that forwards IPv6)",
					Command: fmt.Sprintf("az network route-table route delete -g %s --route-table-name %s -n %s", resourceGroupOf(rtID), lastName(rtID), r.Name)})
			}
		default:
			ev = append(ev, "IPv6 to the registry: "+r.String())
		}
	}
	if n.NSG != nil {
		nsgID := str(n.NSG.ID)
		e := &nsgEval{vnet: m.virtualNetworkTag(n), src: v6, region: m.registryRegion()}
		rules := outboundRules(n.NSG)
		for _, h := range public {
			r, t := e.decide(rules, dest{Service: "AzureContainerRegistry", Host: h, V6: true})
			switch {
			case t == no:
				problems = append(problems, fmt.Sprintf("no rule of %s matches TCP 443 over IPv6 to %s", lastName(nsgID), h))
			case r.Allow:
				ev = append(ev, fmt.Sprintf("TCP 443 over IPv6 to %s: allowed by %s (priority %d)", h, r.Name, r.Priority))
				continue
			case t == maybe:
				problems = append(problems, fmt.Sprintf("rule %s (priority %d, Deny) of %s may block TCP 443 over IPv6 to %s", r.Name, r.Priority, lastName(nsgID), h))
			default:
				problems = append(problems, fmt.Sprintf("%s denies TCP 443 over IPv6 from %s to %s: rule %s (priority %d) matches first", lastName(nsgID), n.poolsString(), h, r.Name, r.Priority))
			}
			if prio := freePriority(rules, r.Priority); prio > 0 && len(c.Changes) < 2 {
				c = audit.WithChange(c, report.Change{Resource: nsgID, Kind: "Microsoft.Network/networkSecurityGroups",
					Action:  fmt.Sprintf("add an outbound rule allowing TCP 443 over IPv6 at a priority before %s (%d)", r.Name, r.Priority),
					Command: fmt.Sprintf("az network nsg rule create -g %s --nsg-name %s -n allow-acr-443-ipv6 --priority %d --direction Outbound --access Allow --protocol Tcp --source-address-prefixes %s --destination-address-prefixes ::/0 --destination-port-ranges 443", resourceGroupOf(nsgID), lastName(nsgID), prio, prefixesArg(v6))})
			}
			break
		}
	}
	var r report.CheckResult
	if len(problems) == 0 {
		r = audit.Pass(fmt.Sprintf("IPv6 from %s reaches %s (route and NSG)", n.poolsString(), hosts), ev...)
	} else {
		r = audit.Warn(verdict.ConditionRoute, problems[0]+": the dual-stack nodes dial IPv6 first and fall back to IPv4 after 300 ms (Happy Eyeballs), on every new connection", append(problems[1:], ev...)...)
	}
	r.Changes = c.Changes
	return audit.WithResources(r, c.Resources...)
}

func prefixesArg(ps []netip.Prefix) string {
	ss := make([]string, len(ps))
	for i, p := range ps {
		ss[i] = p.String()
	}
	return strings.Join(ss, " ")
}
