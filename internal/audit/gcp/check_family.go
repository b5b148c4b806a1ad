package gcp

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// The IPv6 path of a dual-stack cluster, by Google's documents: a GKE
// cluster with stackType IPV4_IPV6 in a dual-stack subnet (stackType
// IPV4_IPV6) gives its nodes an IPv6 address too, internal or external
// (the subnet's ipv6AccessType). Google's API names (pkg.dev, gcr.io,
// googleapis.com) answer AAAA when no private zone answers for them, so the
// nodes (Go's dialer in containerd and the kubelet) dial IPv6 first. A node
// without an external IPv6 address reaches Google's IPv6 addresses only
// through Private Google Access on its subnet (which takes "the VM
// interface's internal IPv6 address" as a source); the VPC needs a route
// for them to the default internet gateway (::/0), and the egress firewall
// judges IPv6 by the rules whose ranges are IPv6. Cloud NAT translates
// IPv4 only. Where IPv6 is dropped and IPv4 works, the pull succeeds after
// the 300 ms fallback to IPv4, on every new connection: a warn, in
// IPV6_PATH_BROKEN's direction.

// CheckIPv6 is the check's id.
const CheckIPv6 = "ipv6-path"

const stackDual = "IPV4_IPV6"

// clusterDualStack reports whether the cluster's nodes get IPv6.
func (m *Model) clusterDualStack() bool {
	p := m.Cluster.IpAllocationPolicy
	return p != nil && strings.EqualFold(p.StackType, stackDual)
}

func checkIPv6(m *Model, ns *nodeSubnet) report.CheckResult {
	if ns.Subnet == nil {
		return undescribed(m, ns)
	}
	if !m.clusterDualStack() {
		return audit.Skip("the cluster is IPv4-only (ipAllocationPolicy.stackType): the pull is IPv4")
	}
	if !strings.EqualFold(ns.Subnet.StackType, stackDual) {
		return audit.Skip(fmt.Sprintf("subnet %s is %s: its nodes have no IPv6 address", ns.Name, strings.ToLower(cmp.Or(ns.Subnet.StackType, "IPV4_ONLY"))))
	}
	var public []*pullHost
	for _, h := range ns.Hosts {
		if h.Answer.ok() && h.Answer.Public {
			public = append(public, h)
		}
	}
	if len(public) == 0 {
		return audit.Skip("every host of the pull answers a private zone's A records (the VIP): the nodes dial it over IPv4")
	}
	var names []string
	for _, h := range public {
		names = append(names, h.Name)
	}
	hosts := strings.Join(names, ", ")
	d := dest{Public: true, V6: true}
	access := strings.ToUpper(ns.Subnet.Ipv6AccessType)
	ev := []string{fmt.Sprintf("subnet %s: stackType %s, ipv6AccessType %s, Private Google Access %v", ns.Name, ns.Subnet.StackType, cmp.Or(access, "unset"), ns.pgaOn()),
		"hosts with AAAA records (no private zone): " + hosts}
	warn := func(summary string, resources []string, changes ...report.Change) report.CheckResult {
		c := audit.Warn(pathCondition(public[0]), summary+": the dual-stack nodes dial IPv6 first and fall back to IPv4 after 300 ms (Happy Eyeballs), on every new connection", ev...)
		return audit.WithChange(audit.WithResources(audit.WithHost(c, public[0].Name), resources...), changes...)
	}
	if access != "EXTERNAL" && !ns.pgaOn() {
		return warn(fmt.Sprintf("Private Google Access is off on %s: its nodes' internal IPv6 addresses cannot reach %s at %s (Cloud NAT translates IPv4 only)", ns.Name, hosts, d), []string{ns.Path}, subnetUpdatePGA(ns))
	}
	if m.RoutesKnown {
		for _, p := range ns.Profiles {
			r := m.bestRoute(p, d)
			switch {
			case r == nil:
				return warn(fmt.Sprintf("no route of network %s covers ::/0 for the nodes of %s: IPv6 to %s goes nowhere", m.NetworkName(), profileName(p), hosts), []string{m.NetworkPath()},
					report.Change{Resource: m.NetworkPath(), Kind: "route", Action: "add a route for ::/0 with next hop the default internet gateway",
						Command: fmt.Sprintf("gcloud compute routes create default-internet-ipv6 --network %s --project %s --destination-range ::/0 --next-hop-gateway default-internet-gateway", m.NetworkName(), m.NetworkProject())})
			case !isDIG(r):
				return warn(fmt.Sprintf("route %s (%s, priority %d) sends IPv6 to %s, not the default internet gateway", r.Name, r.DestRange, r.Priority, nextHop(r)), []string{r.Name})
			}
			ev = append(ev, fmt.Sprintf("IPv6 via %s (%s)", r.Name, r.DestRange))
		}
	}
	if m.FirewallsKnown {
		for _, p := range ns.Profiles {
			v := m.egress443(p, d)
			if !v.Allow {
				f := v.Rule
				return warn(fmt.Sprintf("egress rule %s (priority %d, deny) drops TCP 443 from the nodes of %s to %s (%s)", f.Name, f.Priority, profileName(p), d, hosts), []string{f.Name}, firewallChange(m, f.Name, f.Priority, p, d))
			}
		}
	}
	return audit.Pass(fmt.Sprintf("IPv6 from %s reaches %s (Private Google Access or external IPv6, route, firewall)", ns.poolsString(), hosts), ev...)
}
