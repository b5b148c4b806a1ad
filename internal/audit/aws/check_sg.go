package aws

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// nodesOf are the senders of a subnet; a subnet with neither instances nor
// nodegroups is audited as its CIDR with the cluster security group.
func (m *Model) nodesOf(ns *NodeSubnet) []Node {
	// Without the instances, who sends is assumed (the cluster security
	// group on new nodes): no failure rests on that.
	m.given(FileInstances)
	if len(ns.Nodes) > 0 {
		return ns.Nodes
	}
	n := Node{Name: "nodes of " + ns.ID, Prefix: ns.CIDR}
	if m.ClusterSG != "" {
		n.SGs = []string{m.ClusterSG}
	}
	return []Node{n}
}

// checkSGEndpoint: the interface endpoints in use admit TCP 443 from the
// nodes: a rule naming a node's security group, or a CIDR holding its
// address (security groups are allow-only; any group of the endpoint may
// allow).
func checkSGEndpoint(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileEndpoints] {
		return m.missing(FileEndpoints)
	}
	var used []*hostPath
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		if p := m.path(ns, svc); p.captured {
			used = append(used, p)
		}
	}
	if len(used) == 0 {
		return audit.Skip("no interface endpoint is in use from this subnet")
	}
	if !m.Have[FileSecurityGroups] {
		return m.missing(FileSecurityGroups)
	}
	nodes := m.nodesOf(ns)
	var c report.CheckResult
	var bad, ev, unknown []string
	for _, p := range used {
		id := str(p.iface.VpcEndpointId)
		var groups []string
		for _, g := range p.iface.Groups {
			groups = append(groups, str(g.GroupId))
		}
		partial := false
		for _, g := range groups {
			if _, ok := m.SGs[g]; !ok {
				unknown = append(unknown, g)
				partial = true
			}
		}
		var denied []string
		for _, n := range nodes {
			ok, rule := false, ""
			for _, g := range groups {
				if sg, found := m.SGs[g]; found {
					if ok, rule = sgPermits(sg.IpPermissions, 443, peer{prefix: n.Prefix, sgs: n.SGs}); ok {
						ev = append(ev, fmt.Sprintf("%s (%s) admits %s: %s allows %s", id, p.svc, n.Name, g, rule))
						break
					}
				}
			}
			// Security groups add up: a group not in the file may be the
			// one that admits the node, so only a fully known set denies.
			if !ok && !partial {
				denied = append(denied, n.Name)
			}
		}
		if len(denied) == 0 {
			continue
		}
		g := strings.Join(groups, ",")
		bad = append(bad, fmt.Sprintf("%s of %s (%s) admits no TCP 443 from %s (groups %s, address %s)", g, id, p.svc, firstN(denied, 3), strings.Join(nodes[0].SGs, ","), nodes[0].Prefix))
		src := fmt.Sprintf("--cidr %s", ns.CIDR)
		if len(nodes[0].SGs) > 0 {
			src = "--source-group " + nodes[0].SGs[0]
		}
		target := g
		if len(groups) > 0 {
			target = groups[0]
		}
		c = audit.WithChange(c, report.Change{Resource: target, Kind: "security-group", Action: fmt.Sprintf("allow TCP 443 in from the nodes (%s)", strings.TrimPrefix(strings.TrimPrefix(src, "--source-group "), "--cidr ")),
			Command: fmt.Sprintf("aws ec2 authorize-security-group-ingress --group-id %s --protocol tcp --port 443 %s%s", target, src, m.regionFlag())})
		c = audit.WithResources(c, id)
	}
	var r report.CheckResult
	switch {
	case len(bad) > 0:
		r = audit.Fail(verdict.ConditionRoute, bad[0], append(bad[1:], ev...)...)
	case len(unknown) > 0:
		r = audit.Warn(verdict.ConditionRoute, "endpoint security groups not in "+FileSecurityGroups+": "+strings.Join(unknown, ", "), ev...)
	default:
		r = audit.Pass(fmt.Sprintf("the endpoints admit 443 from %d node(s)", len(nodes)), ev...)
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}

// destinations of the pull's packets from a subnet, per host path.
type dest struct {
	what  string
	peers []peer
}

func (m *Model) destinations(ns *NodeSubnet) []dest {
	var out []dest
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		p := m.path(ns, svc)
		switch {
		case p.captured:
			var groups []string
			for _, g := range p.iface.Groups {
				groups = append(groups, str(g.GroupId))
			}
			d := dest{what: fmt.Sprintf("%s (%s ENIs)", p.host, str(p.iface.VpcEndpointId))}
			for _, s := range p.iface.SubnetIds {
				if c, ok := m.subnetCIDR(s); ok {
					d.peers = append(d.peers, peer{prefix: c, sgs: groups, name: s})
				}
			}
			out = append(out, d)
		case p.gateway != nil:
			d := dest{what: fmt.Sprintf("%s (S3 prefix list via %s)", p.host, str(p.gateway.VpcEndpointId))}
			pl := str(p.gwRoute.DestinationPrefixListId)
			if len(m.S3PLCIDRs) == 0 {
				d.peers = append(d.peers, peer{prefix: anyIPv4, pls: []string{pl}, name: pl})
			}
			for _, c := range m.S3PLCIDRs {
				d.peers = append(d.peers, peer{prefix: c, pls: []string{pl}, name: pl + " " + c.String()})
			}
			out = append(out, d)
		default:
			out = append(out, dest{what: p.host + " (public address)", peers: []peer{{prefix: anyIPv4, name: "0.0.0.0/0"}}})
		}
	}
	return out
}

// checkSGNodeEgress: some security group of each node lets TCP 443 out to
// every destination of the pull (the reply needs no rule: stateful).
func checkSGNodeEgress(m *Model, ns *NodeSubnet) report.CheckResult {
	if c, ok := ipv4Skip(ns); ok {
		return c
	}
	if !m.Have[FileSecurityGroups] {
		return m.missing(FileSecurityGroups)
	}
	nodes := m.nodesOf(ns)
	var c report.CheckResult
	var bad, unknown []string
	for _, n := range nodes {
		if len(n.SGs) == 0 {
			unknown = append(unknown, n.Name+" has no known security group")
			continue
		}
		partial := false
		for _, g := range n.SGs {
			if _, ok := m.SGs[g]; !ok {
				unknown = append(unknown, g+" is not in "+FileSecurityGroups)
				partial = true
			}
		}

		for _, d := range m.destinations(ns) {
			for _, pr := range d.peers {
				ok := false
				for _, g := range n.SGs {
					if sg, found := m.SGs[g]; found {
						if ok, _ = sgPermits(sg.IpPermissionsEgress, 443, pr); ok {
							break
						}
					}
				}
				if ok {
					continue
				}
				if partial {
					// A group not described may be the one that allows
					// the egress: warn (below), never fail on a partial set.
					break
				}
				bad = append(bad, fmt.Sprintf("%s (groups %s) may not send TCP 443 to %s: %s", n.Name, strings.Join(n.SGs, ","), d.what, pr.name))
				cidr := pr.prefix.String()
				perm := fmt.Sprintf("IpProtocol=tcp,FromPort=443,ToPort=443,IpRanges=[{CidrIp=%s}]", cidr)
				if len(pr.pls) > 0 {
					perm = fmt.Sprintf("IpProtocol=tcp,FromPort=443,ToPort=443,PrefixListIds=[{PrefixListId=%s}]", pr.pls[0])
				}
				c = audit.WithChange(c, report.Change{Resource: n.SGs[0], Kind: "security-group", Action: "allow TCP 443 out to " + d.what,
					Command: fmt.Sprintf("aws ec2 authorize-security-group-egress --group-id %s --ip-permissions %s%s", n.SGs[0], perm, m.regionFlag())})
				break
			}
		}
	}
	var r report.CheckResult
	switch {
	case len(bad) > 0:
		r = audit.Fail(verdict.ConditionRoute, bad[0], bad[1:]...)
	case len(unknown) > 0:
		r = audit.Warn(verdict.ConditionRoute, "cannot decide node egress: "+unknown[0], unknown[1:]...)
	default:
		r = audit.Pass(fmt.Sprintf("%d node(s) may send TCP 443 to every host of the pull", len(nodes)))
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}

var _ = netip.Prefix{}
