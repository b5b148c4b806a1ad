package aws

import (
	"fmt"
	"slices"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

func available(e *ec2types.VpcEndpoint) bool { return strings.EqualFold(string(e.State), "available") }

// checkEndpoint: the service's interface endpoint is available and has an
// ENI in the subnet, or at least in its AZ (an interface endpoint has one
// ENI per selected subnet, one subnet per AZ; a subnet added later and not
// added to the endpoint resolves the name but has no ENI near it).
func checkEndpoint(m *Model, ns *NodeSubnet, svc string) report.CheckResult {
	if !m.Have[FileEndpoints] {
		return m.missing(FileEndpoints)
	}
	p := m.path(ns, svc)
	e := p.iface
	if e == nil {
		if ok, via := m.internetOK(ns); ok {
			return audit.Pass(fmt.Sprintf("no %s interface endpoint: %s resolves public and goes out through %s", svc, p.host, via))
		}
		if r := m.lookupRoute(ns.RouteTable, anyIPv4); r != nil {
			return audit.Skip(fmt.Sprintf("no %s interface endpoint: %s goes out by %s (see route-internet)", svc, p.host, routeString(r.Route)))
		}
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("no %s interface endpoint in %s and no internet path from %s: %s is unreachable", m.ServiceName(svc), m.VPC, ns.ID, p.host))
		return audit.WithChange(c, report.Change{Resource: m.VPC, Kind: "vpc", Action: "create the " + svc + " interface endpoint with private DNS, with a subnet in each AZ that has nodes",
			Command: fmt.Sprintf("aws ec2 create-vpc-endpoint --vpc-id %s --vpc-endpoint-type Interface --service-name %s --subnet-ids %s --security-group-ids SG --private-dns-enabled%s",
				m.VPC, m.ServiceName(svc), strings.Join(m.onePerAZ(), " "), m.regionFlag())})
	}
	if svc == SvcECRDKR && m.RegistryDualStack {
		return m.dualStackName(ns, p)
	}
	id := str(e.VpcEndpointId)
	ev := []string{fmt.Sprintf("%s state=%s privateDns=%s subnets=%s enis=%d", id, e.State, boolString(e.PrivateDnsEnabled), strings.Join(e.SubnetIds, ","), len(e.NetworkInterfaceIds))}
	sev := func(c report.CheckResult) report.CheckResult {
		// An endpoint the nodes do not use (private DNS off, a working
		// NAT) is a risk, not today's failure.
		if !p.captured && c.Status == report.StepFail {
			if ok, _ := m.internetOK(ns); ok {
				c.Status = report.StepWarn
				c.Summary += " (not in use: " + p.dnsWhy + ")"
			}
		}
		return c
	}
	if !available(e) {
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s (%s) is %s, not available", id, svc, e.State), ev...)
		if r := str(e.FailureReason); r != "" {
			c.Evidence = append(c.Evidence, "failure reason: "+r)
		}
		return sev(audit.WithChange(c, report.Change{Resource: id, Kind: "vpc-endpoint", Action: "find why the endpoint is not available (accept, recreate)",
			Command: fmt.Sprintf("aws ec2 describe-vpc-endpoints --vpc-endpoint-ids %s%s", id, m.regionFlag())}))
	}
	if slices.Contains(e.SubnetIds, ns.ID) {
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s (%s) is available with an ENI in this subnet", id, svc), ev...), id)
	}
	for _, s := range e.SubnetIds {
		if az := m.subnetAZ(s); az != "" && az == ns.AZ {
			return audit.WithResources(audit.Pass(fmt.Sprintf("%s (%s) is available with an ENI in this subnet's AZ %s (in %s, not in %s)", id, svc, az, s, ns.ID), ev...), id, s)
		}
	}
	pools := ""
	if len(ns.Pools) > 0 {
		pools = ", nodegroup " + strings.Join(ns.Pools, ", ")
	}
	c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s (%s) has no subnet in %s (%s%s)", id, svc, ns.AZ, ns.ID, pools), ev...)
	return sev(audit.WithChange(c, report.Change{Resource: id, Kind: "vpc-endpoint", Action: "add the subnet to the endpoint (one ENI per AZ)",
		Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --add-subnet-ids %s%s", id, ns.ID, m.regionFlag())}))
}

// dualStackName judges an image named by ECR's dual-stack registry name in
// a VPC with an ecr.dkr interface endpoint: AWS PrivateLink does not serve
// the dual-stack names (ECR's "Making requests to Amazon ECR registries"),
// so the name resolves public and the pull leaves by the route table. With
// a working route out that is a bypass of the endpoint (a warn); without
// one the registry is unreachable (a fail); either way the IPv4-only name
// is the one the endpoint serves.
func (m *Model) dualStackName(ns *NodeSubnet, p *hostPath) report.CheckResult {
	id := str(p.iface.VpcEndpointId)
	v4 := verdict.ECRIPv4Name(p.host)
	ev := []string{p.dnsWhy}
	change := report.Change{Resource: id, Kind: "vpc-endpoint", Action: fmt.Sprintf("name the image by %s (the IPv4-only name %s serves) instead of %s", v4, id, p.host)}
	if ok, via := m.internetOK(ns); ok {
		c := audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s is ECR's dual-stack name, which AWS PrivateLink does not serve: the pull bypasses %s and goes out through %s", p.host, id, via), ev...)
		return audit.WithChange(audit.WithResources(c, id, via), change)
	}
	c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s is ECR's dual-stack name, which AWS PrivateLink does not serve, and %s has no route out: the registry is unreachable; %s carries only %s", p.host, ns.ID, id, v4), ev...)
	return audit.WithChange(audit.WithResources(c, id), change)
}

// checkECRPolicy: the ECR interface endpoints' policies must allow the
// node role the four actions (a policy of the endpoint applies on top of
// the role's).
func checkECRPolicy(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileEndpoints] {
		return m.missing(FileEndpoints)
	}
	var c report.CheckResult
	var fails, unsure, oks []string
	used := false
	for _, svc := range []string{SvcECRAPI, SvcECRDKR} {
		p := m.path(ns, svc)
		if !p.captured {
			continue
		}
		used = true
		id := str(p.iface.VpcEndpointId)
		for _, action := range ECRActions {
			if svc == SvcECRAPI && action != "ecr:GetAuthorizationToken" || svc == SvcECRDKR && action == "ecr:GetAuthorizationToken" {
				continue
			}
			res := "*"
			if action != "ecr:GetAuthorizationToken" {
				res = fmt.Sprintf("arn:%s:ecr:%s:%s:repository/x", m.Partition, m.Region, m.Account)
			}
			d, why := evalPolicy(str(p.iface.PolicyDocument), request{action: action, resource: res, principal: m.NodeRoleARN, account: m.Account})
			switch d {
			case allowed:
				oks = append(oks, id+": "+why)
			case undecided:
				unsure = append(unsure, id+": "+why)
				c = audit.WithResources(c, id)
			default:
				fails = append(fails, fmt.Sprintf("%s (%s): %s: %s", id, svc, d, why))
				c = audit.WithChange(c, report.Change{Resource: id, Kind: "vpc-endpoint", Action: "let the endpoint policy allow " + action + " for the node role",
					Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --reset-policy%s", id, m.regionFlag())})
			}
		}
	}
	if !used {
		return audit.Skip("no ECR interface endpoint is in use: no endpoint policy applies")
	}
	var r report.CheckResult
	switch {
	case len(fails) > 0:
		r = audit.Fail(verdict.ConditionTLSIdentity, "endpoint policy refuses the pull: "+fails[0], append(fails[1:], unsure...)...)
	case len(unsure) > 0:
		r = audit.Warn(verdict.ConditionTLSIdentity, "cannot decide the endpoint policy: "+unsure[0], unsure[1:]...)
	default:
		r = audit.Pass("the ECR endpoint policies allow the four actions", oks...)
	}
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}

// onePerAZ is one node subnet per AZ (the first in the audit's order): an
// interface endpoint takes one subnet per AZ.
func (m *Model) onePerAZ() []string {
	seen := map[string]bool{}
	var out []string
	for _, ns := range m.NodeSubnets {
		if ns.Subnet == nil || seen[ns.AZ] {
			continue
		}
		seen[ns.AZ] = true
		out = append(out, ns.ID)
	}
	return out
}
