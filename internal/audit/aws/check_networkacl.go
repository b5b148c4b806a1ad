package aws

import (
	"fmt"
	"net/netip"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Ephemeral ports: AWS's guidance for NACLs is 1024-65535; a Linux node
// picks its source ports from 32768-60999 (net.ipv4.ip_local_port_range),
// which is what must be open for the replies to reach it.
const (
	ephemeralLo, ephemeralHi = 1024, 65535
	linuxLo, linuxHi         = 32768, 60999
)

// aclFlow is one stateless direction a pull needs through one ACL.
type aclFlow struct {
	egress bool
	lo, hi int32
	far    netip.Prefix
	what   string
	// suggest is the CIDR a fix should name (0.0.0.0/0 for a prefix
	// list's CIDRs: an ACL cannot name a prefix list).
	suggest netip.Prefix
}

// evalFlows evaluates flows through acl; it returns the failures, the
// warnings (denied only outside the Linux port range, partial rules) and
// the change for the first failure.
func (m *Model) evalFlows(acl *ec2types.NetworkAcl, flows []aclFlow) (fails, warns []string, change *report.Change) {
	id := str(acl.NetworkAclId)
	for _, f := range flows {
		v := evalACL(acl, f.egress, f.lo, f.hi, f.far)
		dir := "inbound"
		if f.egress {
			dir = "outbound"
		}
		for _, n := range v.Notes {
			warns = append(warns, fmt.Sprintf("%s %s: %s", id, dir, n))
		}
		if v.Allowed {
			continue
		}
		msg := fmt.Sprintf("%s %s %s denies TCP %s %s %s (%s)", id, dir, ruleName(v.DenyRule), portsString(v.Denied), map[bool]string{true: "to", false: "from"}[f.egress], f.far, f.what)
		if f.lo == ephemeralLo && f.hi == ephemeralHi && !deniedWithin(v.Denied, linuxLo, linuxHi) {
			warns = append(warns, msg+": Linux nodes (32768-60999) are not affected")
			continue
		}
		fails = append(fails, msg)
		if change == nil {
			flag := "--ingress"
			if f.egress {
				flag = "--egress"
			}
			n := freeRule(acl, f.egress, v.DenyRule)
			cidr := f.far
			if f.suggest.IsValid() {
				cidr = f.suggest
			}
			cidrFlag := "--cidr-block"
			if cidr.Addr().Is6() {
				cidrFlag = "--ipv6-cidr-block"
			}
			change = &report.Change{Resource: id, Kind: "network-acl", Action: fmt.Sprintf("allow TCP %s %s %s %s before %s", portsString([][2]int32{{f.lo, f.hi}}), dir, map[bool]string{true: "to", false: "from"}[f.egress], cidr, ruleName(v.DenyRule)),
				Command: fmt.Sprintf("aws ec2 create-network-acl-entry --network-acl-id %s %s --rule-number %d --protocol tcp --port-range From=%d,To=%d %s %s --rule-action allow%s",
					id, flag, n, f.lo, f.hi, cidrFlag, cidr, m.regionFlag())}
		}
	}
	return fails, warns, change
}

// freeRule picks a free rule number below the denying rule.
func freeRule(acl *ec2types.NetworkAcl, egress bool, below int32) int32 {
	used := map[int32]bool{}
	for _, e := range acl.Entries {
		if e.Egress != nil && *e.Egress == egress && e.RuleNumber != nil {
			used[*e.RuleNumber] = true
		}
	}
	if below >= 32767 {
		// After the last numbered rule, on the next multiple of ten.
		top := int32(0)
		for n := range used {
			if n < 32766 && n > top {
				top = n
			}
		}
		if n := (top/10 + 1) * 10; n < 32767 {
			return n
		}
	}
	for n := below - 1; n >= 1; n-- {
		if !used[n] && n%10 == 0 || !used[n] && n < 10 {
			return n
		}
	}
	return 1
}

// checkNACLNode: the node subnet's ACL lets 443 out to each destination
// and the replies in on ephemeral ports, rule by rule in number order.
// Traffic to an ENI in the same subnet never crosses the ACL.
func checkNACLNode(m *Model, ns *NodeSubnet) report.CheckResult {
	if c, ok := ipv4Skip(ns); ok {
		return c
	}
	if !m.Have[FileNetworkACLs] {
		return m.missing(FileNetworkACLs)
	}
	if ns.ACL == nil {
		return audit.Warn(verdict.ConditionRoute, fmt.Sprintf("no network ACL for %s in %s", ns.ID, FileNetworkACLs))
	}
	id := str(ns.ACL.NetworkAclId)
	var flows []aclFlow
	for _, d := range m.destinations(ns) {
		for _, p := range d.peers {
			if p.name == ns.ID {
				continue // same subnet: no ACL in between
			}
			var suggest netip.Prefix
			if len(p.pls) > 0 {
				suggest = anyIPv4
			}
			flows = append(flows,
				aclFlow{egress: true, lo: 443, hi: 443, far: p.prefix, what: d.what, suggest: suggest},
				aclFlow{egress: false, lo: ephemeralLo, hi: ephemeralHi, far: p.prefix, what: "replies from " + d.what, suggest: suggest})
		}
	}
	fails, warns, change := m.evalFlows(ns.ACL, flows)
	return aclResult(id, fails, warns, change, failRoute, fmt.Sprintf("%s allows 443 out and the replies in for every host of the pull", id))
}

// failRoute is a failing route-condition result.
func failRoute(summary string, evidence ...string) report.CheckResult {
	return audit.Fail(verdict.ConditionRoute, summary, evidence...)
}

// aclResult is a node ACL check's result from its flows' evaluation: the
// first failing flow (with fail, which may soften it), else the first
// warning, else pass; the ACL as its resource and the entry to add.
func aclResult(id string, fails, warns []string, change *report.Change, fail func(string, ...string) report.CheckResult, pass string) report.CheckResult {
	var c report.CheckResult
	switch {
	case len(fails) > 0:
		c = fail(fails[0], append(fails[1:], warns...)...)
	case len(warns) > 0:
		c = audit.Warn(verdict.ConditionRoute, warns[0], warns[1:]...)
	default:
		c = audit.Pass(pass)
	}
	c = audit.WithResources(c, id)
	if change != nil {
		c = audit.WithChange(c, *change)
	}
	return c
}

// checkNACLPath: the ACLs of the subnets at the far end (the endpoints'
// ENIs, the NAT gateway) admit 443 from the node subnet and let the replies
// back to it; a NAT's subnet also lets 443 out and the replies in from the
// internet.
func checkNACLPath(m *Model, ns *NodeSubnet) report.CheckResult {
	if c, ok := ipv4Skip(ns); ok {
		return c
	}
	if !m.Have[FileNetworkACLs] {
		return m.missing(FileNetworkACLs)
	}
	var fails, warns []string
	var c report.CheckResult
	checked := 0
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		p := m.path(ns, svc)
		if !p.captured {
			continue
		}
		for _, s := range p.iface.SubnetIds {
			if s == ns.ID {
				continue
			}
			acl := m.aclOf(s)
			if acl == nil {
				warns = append(warns, "no network ACL for endpoint subnet "+s)
				continue
			}
			checked++
			f, w, ch := m.evalFlows(acl, []aclFlow{
				{egress: false, lo: 443, hi: 443, far: ns.CIDR, what: ns.ID + " to " + str(p.iface.VpcEndpointId) + " in " + s},
				{egress: true, lo: ephemeralLo, hi: ephemeralHi, far: ns.CIDR, what: "replies of " + str(p.iface.VpcEndpointId) + " to " + ns.ID},
			})
			fails, warns = append(fails, f...), append(warns, w...)
			c = audit.WithResources(c, str(acl.NetworkAclId))
			if ch != nil {
				c = audit.WithChange(c, *ch)
			}
		}
	}
	if r := m.lookupRoute(ns.RouteTable, anyIPv4); r != nil && str(r.Route.NatGatewayId) != "" {
		need := false
		for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
			need = need || m.path(ns, svc).internet
		}
		if n, ok := m.NATs[str(r.Route.NatGatewayId)]; ok && need && str(n.SubnetId) != ns.ID {
			if acl := m.aclOf(str(n.SubnetId)); acl != nil {
				checked++
				nat := str(n.NatGatewayId)
				f, w, ch := m.evalFlows(acl, []aclFlow{
					{egress: false, lo: 443, hi: 443, far: ns.CIDR, what: ns.ID + " to " + nat},
					{egress: true, lo: 443, hi: 443, far: anyIPv4, what: nat + " to the registry"},
					{egress: false, lo: ephemeralLo, hi: ephemeralHi, far: anyIPv4, what: "replies to " + nat},
					{egress: true, lo: ephemeralLo, hi: ephemeralHi, far: ns.CIDR, what: "replies of " + nat + " to " + ns.ID},
				})
				fails, warns = append(fails, f...), append(warns, w...)
				c = audit.WithResources(c, str(acl.NetworkAclId))
				if ch != nil {
					c = audit.WithChange(c, *ch)
				}
			}
		}
	}
	var r report.CheckResult
	switch {
	case checked == 0 && len(warns) == 0:
		return audit.Skip("no endpoint or NAT gateway in another subnet on the pull's path")
	case len(fails) > 0:
		r = audit.Fail(verdict.ConditionRoute, fails[0], append(fails[1:], warns...)...)
	case len(warns) > 0:
		r = audit.Warn(verdict.ConditionRoute, warns[0], warns[1:]...)
	default:
		r = audit.Pass(fmt.Sprintf("%d far-side ACL(s) admit the pull from %s: %s", checked, ns.ID, strings.Join(c.Resources, ", ")))
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}
