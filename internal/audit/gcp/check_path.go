package gcp

import (
	"fmt"
	"slices"
	"strings"

	compute "google.golang.org/api/compute/v1"
	dns "google.golang.org/api/dns/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// undescribed is the warn of a path check on a subnet without its file.
func undescribed(m *Model, ns *nodeSubnet) report.CheckResult {
	return audit.MissingResult(FileSubnet(ns.Name), "", cmdSubnet(segment(ns.Path, "projects"), ns.Region, ns.Name))
}

func (ns *nodeSubnet) pgaOn() bool { return ns.Subnet != nil && ns.Subnet.PrivateIpGoogleAccess }

func subnetUpdatePGA(ns *nodeSubnet) report.Change {
	return report.Change{Resource: ns.Path, Kind: "subnetwork",
		Action:  "enable Private Google Access on the subnet (nodes without external IPs reach Google APIs and the VIPs only through it)",
		Command: fmt.Sprintf("gcloud compute networks subnets update %s --region %s --project %s --enable-private-ip-google-access", ns.Name, ns.Region, segment(ns.Path, "projects"))}
}

// checkPGA: nodes without an external IP reach Google APIs through Private
// Google Access on their subnet; without it only Cloud NAT carries them to
// Google's public addresses, and nothing carries them to the VIPs.
func checkPGA(m *Model, ns *nodeSubnet) report.CheckResult {
	if ns.Subnet == nil {
		return undescribed(m, ns)
	}
	priv := ns.private()
	if len(priv) == 0 {
		return audit.Pass(fmt.Sprintf("the nodes of %s have external IPs: they reach Google's addresses without Private Google Access", ns.poolsString()))
	}
	if ns.pgaOn() {
		return audit.Pass(fmt.Sprintf("Private Google Access is on for %s", ns.Name))
	}
	for _, h := range ns.Hosts {
		if h.Answer.ok() && !h.Answer.Public {
			c := audit.Fail(pathCondition(h), fmt.Sprintf("Private Google Access is off on %s: its nodes without external IPs (%s) cannot reach %s at %s", ns.Name, ns.poolsString(), h.Name, h.Answer))
			return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), ns.Path), subnetUpdatePGA(ns))
		}
	}
	if nats := m.regionNATs(ns.Region); len(nats) > 0 {
		return audit.Pass(fmt.Sprintf("Private Google Access is off on %s; its nodes reach Google's public addresses through Cloud NAT (%s check)", ns.Name, CheckNAT))
	}
	h := ns.Hosts[0]
	c := audit.Fail(pathCondition(h), fmt.Sprintf("Private Google Access is off on %s and no Cloud NAT serves %s: the nodes of %s have no external IP and no path to %s", ns.Name, ns.Region, ns.poolsString(), h.Name))
	return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), ns.Path), subnetUpdatePGA(ns))
}

// checkRoute: the route the VPC picks for each address (most specific
// range, then priority, among routes whose tags match the nodes) must send
// it to the default internet gateway: Private Google Access and Cloud NAT
// use no other next hop.
func checkRoute(m *Model, ns *nodeSubnet) report.CheckResult {
	if !m.RoutesKnown {
		return audit.MissingResult(FileRoutes, "", cmdRoutes(m.NetworkProject(), m.NetworkName()))
	}
	var ok []string
	seen := map[string]bool{}
	for _, h := range ns.Hosts {
		if !h.Answer.ok() {
			continue
		}
		for _, d := range dests(h.Answer) {
			for _, p := range ns.Profiles {
				r := m.bestRoute(p, d)
				if d.Public && (r == nil || !isDIG(r)) {
					if b, ok := m.bindFix(ns, h, func(v dest) bool { r := m.bestRoute(p, v); return r != nil && isDIG(r) }); ok {
						what := fmt.Sprintf("no route of network %s covers Google's public addresses for the nodes of %s", m.NetworkName(), profileName(p))
						if r != nil {
							what = fmt.Sprintf("route %s (%s) sends Google's public addresses to %s, not the default internet gateway", r.Name, r.DestRange, nextHop(r))
						}
						return m.bindFail(h, what, b)
					}
				}
				switch {
				case r == nil:
					c := audit.Fail(pathCondition(h), fmt.Sprintf("no route of network %s covers %s (%s) for the nodes of %s", m.NetworkName(), d, h.Name, profileName(p)))
					return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), m.NetworkPath()), routeChange(m, d, ""))
				case !isDIG(r):
					c := audit.Fail(pathCondition(h), fmt.Sprintf("route %s (%s, priority %d) sends %s (%s) to %s, not the default internet gateway: Private Google Access and Cloud NAT use only routes to the default internet gateway", r.Name, r.DestRange, r.Priority, d, h.Name, nextHop(r)))
					return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), r.Name), routeChange(m, d, r.Name))
				}
				if k := r.Name + d.String(); !seen[k] {
					seen[k] = true
					ok = append(ok, fmt.Sprintf("%s via %s (%s)", d, r.Name, r.DestRange))
				}
			}
		}
	}
	if len(ok) == 0 {
		return audit.Skip("no host's address is known (dns-zone)")
	}
	return audit.Pass(strings.Join(ok, "; ") + " to the default internet gateway")
}

// routeChange is the route to add: the VIP's /30 for a VIP address (it wins
// over a broader route through an appliance), the default route otherwise.
func routeChange(m *Model, d dest, shadowing string) report.Change {
	rng, name := "0.0.0.0/0", "default-internet"
	switch {
	case !d.Public && privateVIP.Contains(d.Addr):
		rng, name = privateVIP.String(), "private-googleapis"
	case !d.Public && restrictedVIP.Contains(d.Addr):
		rng, name = restrictedVIP.String(), "restricted-googleapis"
	}
	action := "add a route for " + rng + " with next hop the default internet gateway"
	if shadowing != "" {
		action += ", more specific than " + shadowing
	}
	if d.Public && shadowing != "" {
		action = fmt.Sprintf("Google's public addresses leave through %s's next hop: answer the registry hosts with private.googleapis.com (199.36.153.8/30) in a private zone and route that /30 to the default internet gateway", shadowing)
		rng, name = privateVIP.String(), "private-googleapis"
	}
	return report.Change{Resource: m.NetworkPath(), Kind: "route", Action: action,
		Command: fmt.Sprintf("gcloud compute routes create %s --network %s --project %s --destination-range %s --next-hop-gateway default-internet-gateway", name, m.NetworkName(), m.NetworkProject(), rng)}
}

// checkFirewall: the VPC firewall's egress decision for TCP 443 from each
// set of nodes (their tags and service account) to each address.
func checkFirewall(m *Model, ns *nodeSubnet) report.CheckResult {
	if !m.FirewallsKnown {
		return audit.MissingResult(FileFirewalls, "", cmdFirewalls(m.NetworkProject(), m.NetworkName()))
	}
	var ok, evidence []string
	seen := map[string]bool{}
	for _, h := range ns.Hosts {
		if !h.Answer.ok() {
			continue
		}
		for _, d := range dests(h.Answer) {
			for _, p := range ns.Profiles {
				v := m.egress443(p, d)
				for _, name := range v.Partial {
					evidence = append(evidence, fmt.Sprintf("rule %s covers part of the internet: whether it holds Google's API addresses is not decided here", name))
				}
				if !v.Allow {
					f := v.Rule
					if a := m.allowMissing(p, d, f); a != nil {
						c := audit.Fail(pathCondition(h), fmt.Sprintf("egress rule %s (priority %d, deny) drops TCP 443 from the nodes of %s to %s (%s): rule %s (priority %d) allows it, but its %s miss the pool", f.Name, f.Priority, profileName(p), d, h.Name, a.Name, a.Priority, targetsString(a)), evidence...)
						return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), a.Name, f.Name), retargetChange(m, a, p))
					}
					if d.Public {
						if b, ok := m.bindFix(ns, h, func(v dest) bool { return m.egress443(p, v).Allow }); ok {
							return m.bindFail(h, fmt.Sprintf("egress rule %s (priority %d, deny) drops TCP 443 from the nodes of %s to Google's public addresses", f.Name, f.Priority, profileName(p)), b)
						}
					}
					c := audit.Fail(pathCondition(h), fmt.Sprintf("egress rule %s (priority %d, deny) drops TCP 443 from the nodes of %s to %s (%s)", f.Name, f.Priority, profileName(p), d, h.Name), evidence...)
					return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), f.Name), firewallChange(m, f.Name, f.Priority, p, d))
				}
				by := "the implied allow-egress rule"
				if v.Rule != nil {
					by = fmt.Sprintf("rule %s (priority %d)", v.Rule.Name, v.Rule.Priority)
				}
				if k := by + d.String(); !seen[k] {
					seen[k] = true
					ok = append(ok, fmt.Sprintf("%s allows 443 to %s", by, d))
				}
			}
		}
	}
	if len(ok) == 0 {
		return audit.Skip("no host's address is known (dns-zone)")
	}
	return audit.Pass(strings.Join(ok, "; "), evidence...)
}

// bindFix: a host answered at Google's public addresses because the private
// zone that holds it is not bound to the nodes' network; bound, it would
// answer a VIP the nodes reach (reaches), or its records are not in the
// folder (the binding is still the change, said so).
func (m *Model) bindFix(ns *nodeSubnet, h *pullHost, reaches func(dest) bool) (zoneBinding, bool) {
	var names []string
	for _, x := range ns.Hosts {
		names = append(names, x.Name)
	}
	b, ok := m.unboundAnswer(h.Name, names)
	if !ok || b.Answer.Undecided != "" {
		return b, ok
	}
	if !b.Answer.ok() {
		return b, false
	}
	for _, d := range dests(b.Answer) {
		if d.Public || !reaches(d) {
			return b, false
		}
	}
	return b, true
}

// bindFail: the public path fails (what), and the change is binding the
// project's private zones for the host to the nodes' network, not a path
// to the internet the network was built without.
func (m *Model) bindFail(h *pullHost, what string, b zoneBinding) report.CheckResult {
	var changes []report.Change
	var zs []string
	for _, z := range b.Zones {
		zs = append(zs, fmt.Sprintf("%s (%s, bound to %s)", z.Name, z.DnsName, zoneNetworks(z)))
		changes = append(changes, bindChange(m, z, h, b.Answer))
	}
	then := "would answer it with " + b.Answer.String()
	if b.Answer.Undecided != "" {
		then = "holds it (" + b.Answer.Undecided + ")"
	}
	c := audit.Fail(pathCondition(h), fmt.Sprintf("%s (%s): private zone %s %s but is not bound to network %s, so the nodes get Google's public addresses", what, h.Name, strings.Join(zs, ", "), then, m.NetworkName()), b.Answer.Path...)
	var res []string
	for _, z := range b.Zones {
		res = append(res, z.Name)
	}
	return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), res...), changes...)
}

func zoneNetworks(z *dns.ManagedZone) string {
	var out []string
	if z.PrivateVisibilityConfig != nil {
		for _, n := range z.PrivateVisibilityConfig.Networks {
			if n != nil {
				out = append(out, lastSeg(n.NetworkUrl))
			}
		}
	}
	if len(out) == 0 {
		return "no network"
	}
	return strings.Join(out, ", ")
}

// bindChange adds the nodes' network to a zone's networks (the flag
// replaces the list, so the command repeats the networks it has, as URLs).
func bindChange(m *Model, z *dns.ManagedZone, h *pullHost, a answer) report.Change {
	var nets []string
	if z.PrivateVisibilityConfig != nil {
		for _, n := range z.PrivateVisibilityConfig.Networks {
			if n != nil {
				nets = append(nets, n.NetworkUrl)
			}
		}
	}
	nets = append(nets, "https://www.googleapis.com/compute/v1/"+m.NetworkPath())
	action := fmt.Sprintf("bind private zone %s (%s) to network %s, so the nodes resolve %s to %s", z.Name, z.DnsName, m.NetworkName(), h.Name, a)
	if a.Undecided != "" {
		action = fmt.Sprintf("bind private zone %s (%s) to network %s (its records are not in the folder: check that it answers %s with the VIP)", z.Name, z.DnsName, m.NetworkName(), h.Name)
	}
	return report.Change{Resource: z.Name, Kind: "dns-managed-zone", Action: action,
		Command: fmt.Sprintf("gcloud dns managed-zones update %s --project %s --networks %s", z.Name, m.NetworkProject(), strings.Join(nets, ","))}
}

func targetsString(f *compute.Firewall) string {
	if len(f.TargetTags) > 0 {
		return "target tags (" + strings.Join(f.TargetTags, ", ") + ")"
	}
	return "target service accounts (" + strings.Join(f.TargetServiceAccounts, ", ") + ")"
}

// retargetChange adds the pool to the allow rule it misses: its network
// tag to a rule with target tags, its service account to a rule with
// target service accounts (a rule has one kind or the other; the flag
// replaces the list, so the command repeats what the rule has).
func retargetChange(m *Model, f *compute.Firewall, p *nodeProfile) report.Change {
	if len(f.TargetTags) > 0 {
		tag := nodeTag(p)
		what := "the network tag " + tag + " of " + profileName(p)
		if tag == "" {
			tag, what = "POOL_TAG", "a network tag "+profileName(p)+"'s nodes carry (none is known: "+FileInstances+" lists them)"
		}
		return report.Change{Resource: f.Name, Kind: "firewall-rule",
			Action:  fmt.Sprintf("add %s to rule %s's target tags (%s), so the allow written for this path reaches the pool", what, f.Name, strings.Join(f.TargetTags, ", ")),
			Command: fmt.Sprintf("gcloud compute firewall-rules update %s --project %s --target-tags %s", f.Name, m.NetworkProject(), strings.Join(append(slices.Clone(f.TargetTags), tag), ","))}
	}
	sa := p.SA
	if sa == "" {
		sa = "SERVICE_ACCOUNT"
	}
	return report.Change{Resource: f.Name, Kind: "firewall-rule",
		Action:  fmt.Sprintf("add %s's service account %s to rule %s's target service accounts (%s), so the allow written for this path reaches the pool", profileName(p), sa, f.Name, strings.Join(f.TargetServiceAccounts, ", ")),
		Command: fmt.Sprintf("gcloud compute firewall-rules update %s --project %s --target-service-accounts %s", f.Name, m.NetworkProject(), strings.Join(append(slices.Clone(f.TargetServiceAccounts), sa), ","))}
}

func firewallChange(m *Model, deny string, prio int64, p *nodeProfile, d dest) report.Change {
	rng := "0.0.0.0/0"
	switch {
	case d.Public && d.V6:
		rng = "::/0"
	case !d.Public && privateVIP.Contains(d.Addr):
		rng = privateVIP.String()
	case !d.Public && restrictedVIP.Contains(d.Addr):
		rng = restrictedVIP.String()
	}
	target := ""
	switch {
	case nodeTag(p) != "":
		target = " --target-tags " + nodeTag(p)
	case p.SA != "":
		target = " --target-service-accounts " + p.SA
	}
	if prio == 0 {
		return report.Change{Resource: deny, Kind: "firewall-rule",
			Action:  fmt.Sprintf("rule %s denies at priority 0, which no allow rule can precede: exclude %s from its destination ranges", deny, rng),
			Command: fmt.Sprintf("gcloud compute firewall-rules describe %s --project %s", deny, m.NetworkProject())}
	}
	return report.Change{Resource: deny, Kind: "firewall-rule",
		Action:  fmt.Sprintf("add an egress allow for TCP 443 to %s at a priority number below %s's %d (at equal priority the deny wins)", rng, deny, prio),
		Command: fmt.Sprintf("gcloud compute firewall-rules create allow-egress-googleapis-443%s --network %s --project %s --direction EGRESS --action ALLOW --rules tcp:443 --destination-ranges %s --priority %d%s", v6Suffix(d), m.NetworkName(), m.NetworkProject(), rng, prio-1, target)}
}

// checkNAT: when the nodes depend on Cloud NAT (no external IP, Private
// Google Access off, a host at Google's public addresses), a public NAT
// gateway of the subnet's region must translate its primary range, with
// enough source ports for its nodes.
func checkNAT(m *Model, ns *nodeSubnet) report.CheckResult {
	if ns.Subnet == nil {
		return undescribed(m, ns)
	}
	if len(ns.private()) == 0 {
		return audit.Skip(fmt.Sprintf("the nodes of %s have external IPs: Cloud NAT does not translate them", ns.poolsString()))
	}
	if ns.pgaOn() {
		return audit.Skip(fmt.Sprintf("Private Google Access is on for %s: the pull does not go through Cloud NAT", ns.Name))
	}
	var public *pullHost
	for _, h := range ns.Hosts {
		if h.Answer.ok() && h.Answer.Public {
			public = h
			break
		}
	}
	if public == nil {
		return audit.Skip("every host answers a VIP: Cloud NAT does not carry it")
	}
	if !m.RoutersKnown {
		return audit.MissingResult(FileRouters, "", cmdRouters(m.NetworkProject(), m.NetworkName()))
	}
	nats := m.regionNATs(ns.Region)
	if len(nats) == 0 {
		return audit.Skip(fmt.Sprintf("no Cloud NAT gateway in %s (%s names the fix)", ns.Region, CheckPGA))
	}
	var covering []natRef
	for _, n := range nats {
		if n.covers(ns.Path) {
			covering = append(covering, n)
		}
	}
	if len(covering) == 0 {
		n := nats[0]
		c := audit.Fail(pathCondition(public), fmt.Sprintf("no Cloud NAT gateway of %s translates %s's primary range: %s serves %s", ns.Region, ns.Name, n, natServes(n)))
		return audit.WithChange(audit.WithResources(audit.WithHost(c, public.Name), n.Router.Name), natCoverChange(m, n, ns))
	}
	n := covering[0]
	if n.NAT.NatIpAllocateOption == "MANUAL_ONLY" {
		capacity := int64(len(n.NAT.NatIps)) * portsPerIP
		vms := int64(0)
		for path, count := range m.nodesBySubnet {
			if n.covers(path) {
				vms += int64(count)
			}
		}
		if need := vms * n.minPorts(); need > capacity {
			c := audit.Fail(pathCondition(public), fmt.Sprintf("Cloud NAT %s has %d NAT IP(s), %d source ports, for %d nodes at %d ports each (%d): nodes past the first %d get no ports (SYN drops, i/o timeouts)",
				n, len(n.NAT.NatIps), capacity, vms, n.minPorts(), need, capacity/n.minPorts()))
			more := (need+portsPerIP-1)/portsPerIP - int64(len(n.NAT.NatIps))
			return audit.WithChange(audit.WithResources(audit.WithHost(c, public.Name), n.Router.Name), report.Change{Resource: n.Router.Name, Kind: "cloud-nat",
				Action:  fmt.Sprintf("give %s %d more NAT IP address(es) (or lower --min-ports-per-vm to %d)", n.NAT.Name, more, capacity/max(vms, 1)),
				Command: fmt.Sprintf("gcloud compute routers nats update %s --router %s --region %s --project %s --nat-external-ip-pool %s", n.NAT.Name, n.Router.Name, ns.Region, m.NetworkProject(), strings.Join(append(natIPNames(n), "NEW_ADDRESS"), ","))})
		}
		return audit.Pass(fmt.Sprintf("Cloud NAT %s translates %s's primary range: %d NAT IP(s) for %d nodes at %d ports each", n, ns.Name, len(n.NAT.NatIps), vms, n.minPorts()))
	}
	return audit.Pass(fmt.Sprintf("Cloud NAT %s translates %s's primary range (NAT IPs allocated automatically, %d ports per node)", n, ns.Name, n.minPorts()))
}

func natServes(n natRef) string {
	if n.NAT.SourceSubnetworkIpRangesToNat != "LIST_OF_SUBNETWORKS" {
		return n.NAT.SourceSubnetworkIpRangesToNat
	}
	var s []string
	for _, sn := range n.NAT.Subnetworks {
		if sn != nil {
			s = append(s, lastSeg(sn.Name)+" "+strings.Join(sn.SourceIpRangesToNat, "+"))
		}
	}
	return "only " + strings.Join(s, ", ")
}

func natIPNames(n natRef) []string {
	var out []string
	for _, ip := range n.NAT.NatIps {
		out = append(out, lastSeg(ip))
	}
	return out
}

// natCoverChange adds the subnet to the gateway's list (the flag replaces
// the whole list, so the command repeats the subnets it serves).
func natCoverChange(m *Model, n natRef, ns *nodeSubnet) report.Change {
	var list []string
	for _, sn := range n.NAT.Subnetworks {
		if sn != nil {
			list = append(list, lastSeg(sn.Name))
		}
	}
	list = append(list, ns.Name)
	return report.Change{Resource: n.Router.Name, Kind: "cloud-nat",
		Action:  fmt.Sprintf("add subnet %s to Cloud NAT %s (or enable Private Google Access on it)", ns.Name, n.NAT.Name),
		Command: fmt.Sprintf("gcloud compute routers nats update %s --router %s --region %s --project %s --nat-custom-subnet-ip-ranges %s", n.NAT.Name, n.Router.Name, ns.Region, m.NetworkProject(), strings.Join(list, ","))}
}

func v6Suffix(d dest) string {
	if d.V6 {
		return "-ipv6"
	}
	return ""
}
