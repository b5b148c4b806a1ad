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

// checkS3Route: ECR layers come from S3. An S3 gateway endpoint is a route,
// not an address: the endpoint must list the subnet's table AND the table
// must carry the pl- route to it, winning by longest prefix for every CIDR
// of the S3 prefix list. An S3 interface endpoint with private DNS also
// carries them; otherwise the internet path does (and NAT charges).
func checkS3Route(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileRouteTables] {
		return m.missing(FileRouteTables)
	}
	if ns.RouteTable == nil {
		return audit.Skip("no route table (see route-table)")
	}
	rtID := str(ns.RouteTable.RouteTableId)
	p := m.path(ns, SvcS3)
	if p.captured {
		return audit.WithResources(audit.Pass(fmt.Sprintf("layers through the S3 interface endpoint %s (private DNS)", str(p.iface.VpcEndpointId))), str(p.iface.VpcEndpointId))
	}
	if ns.family() == FamilyIPv6 {
		// The nodes send IPv6 only: the gateway endpoint's IPv4 prefix-list
		// route never sees their packets; S3's IPv4-only name is reached
		// through DNS64 and NAT64.
		return audit.Skip(fmt.Sprintf("%s is IPv6-only: layers from %s (A only) go through DNS64 and NAT64, not an IPv4 prefix-list route (see %s)", ns.ID, p.host, CheckDNS64))
	}
	if p.gateway != nil && p.gwByRoute {
		gw := str(p.gateway.VpcEndpointId)
		pl := str(p.gwRoute.DestinationPrefixListId)
		whose := "the S3 prefix list's"
		if m.S3PL == nil {
			// Only S3 and DynamoDB have gateway endpoints.
			whose = "a gateway endpoint's (S3's or DynamoDB's: " + FilePrefixLists + " not given to tell)"
		}
		c := audit.Pass(fmt.Sprintf("%s routes %s to %s, %s route: the layers go through that gateway endpoint, not the internet; its state and policy are unknown (%s not given)", rtID, pl, gw, whose, FileEndpoints), routeString(p.gwRoute))
		if len(p.gwRoutes) > 1 {
			var routes, ids []string
			for _, r := range p.gwRoutes {
				routes, ids = append(routes, routeString(r)), append(ids, str(r.GatewayId))
			}
			c = audit.Pass(fmt.Sprintf("%s routes %s, gateway endpoints' routes (S3's and DynamoDB's: %s not given to tell which is S3's): the layers go through one of them, not the internet; their state and policy are unknown (%s not given)",
				rtID, strings.Join(routes, " and "), FilePrefixLists, FileEndpoints), routes...)
			c = audit.Warn(verdict.ConditionRoute, c.Summary, c.Evidence...)
			c.Missing = []string{FilePrefixLists, FileEndpoints}
			return audit.WithResources(c, append([]string{rtID}, ids...)...)
		}
		if m.S3PL == nil {
			c = audit.Warn(verdict.ConditionRoute, c.Summary, c.Evidence...)
			c.Missing = []string{FilePrefixLists, FileEndpoints}
		}
		return audit.WithResources(c, rtID, gw)
	}
	if p.gateway != nil {
		gw := str(p.gateway.VpcEndpointId)
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s routes %s to the S3 gateway endpoint %s", rtID, str(p.gwRoute.DestinationPrefixListId), gw), routeString(p.gwRoute)), rtID, gw)
	}
	okNet, via := m.internetOK(ns)
	plID := "pl-... (com.amazonaws." + m.Region + ".s3)"
	if m.S3PL != nil {
		plID = str(m.S3PL.PrefixListId)
	}
	gws := m.endpointsFor(SvcS3, ec2types.VpcEndpointTypeGateway)
	if len(gws) == 0 {
		if okNet {
			none := "no S3 endpoint"
			if !m.Have[FileEndpoints] {
				none = fmt.Sprintf("no S3 gateway route in %s (%s not given: an S3 endpoint is unknown)", rtID, FileEndpoints)
			}
			note := ""
			if strings.HasPrefix(via, "nat-") {
				note = " (NAT data processing is charged: see the cost note)"
			}
			return audit.Pass(fmt.Sprintf("%s: layers go out through %s%s", none, via, note))
		}
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s has no path for the layers: no S3 gateway endpoint, no S3 interface endpoint, no internet path", rtID))
		return audit.WithChange(audit.WithResources(c, rtID), report.Change{Resource: m.VPC, Kind: "vpc", Action: "create an S3 gateway endpoint on the subnet's route table (free)",
			Command: fmt.Sprintf("aws ec2 create-vpc-endpoint --vpc-id %s --vpc-endpoint-type Gateway --service-name %s --route-table-ids %s%s", m.VPC, m.ServiceName(SvcS3), rtID, m.regionFlag())})
	}
	// There is a gateway endpoint, and the table does not use it: say why.
	gw := gws[0]
	for _, g := range gws {
		if slices.Contains(g.RouteTableIds, rtID) || prefixListRouteTo(ns.RouteTable, str(g.VpcEndpointId)) != nil {
			gw = g
		}
	}
	gwID := str(gw.VpcEndpointId)
	route := prefixListRouteTo(ns.RouteTable, gwID)
	var c report.CheckResult
	change := report.Change{Resource: gwID, Kind: "vpc-endpoint", Action: "add the subnet's route table to the S3 gateway endpoint (it writes the pl- route)",
		Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --add-route-table-ids %s%s", gwID, rtID, m.regionFlag())}
	switch {
	case !available(gw):
		c = audit.Fail(verdict.ConditionRoute, fmt.Sprintf("the S3 gateway endpoint %s is %s, not available", gwID, gw.State))
		change = report.Change{Resource: gwID, Kind: "vpc-endpoint", Action: "find why the S3 gateway endpoint is not available",
			Command: fmt.Sprintf("aws ec2 describe-vpc-endpoints --vpc-endpoint-ids %s%s", gwID, m.regionFlag())}
	case route != nil && route.State == ec2types.RouteStateBlackhole:
		c = audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s but the route is a blackhole", rtID, str(route.DestinationPrefixListId), gwID), routeString(route))
		change = report.Change{Resource: rtID, Kind: "route-table", Touches: []string{gwID}, Action: "remove the route table from the endpoint and add it again to rewrite the route",
			Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --remove-route-table-ids %s && aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --add-route-table-ids %s%s", gwID, rtID, gwID, rtID, m.regionFlag())}
	case route != nil:
		// The pl- route is there but a more specific route takes S3's
		// addresses.
		taken := m.s3Takers(ns.RouteTable, route)
		c = audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s has the route %s -> %s, but more specific routes take S3's addresses: %s", rtID, str(route.DestinationPrefixListId), gwID, firstN(taken, 3)))
		change = report.Change{Resource: rtID, Kind: "route-table", Action: "remove the more specific routes that take the S3 prefix list's CIDRs",
			Command: fmt.Sprintf("aws ec2 describe-route-tables --route-table-ids %s%s", rtID, m.regionFlag())}
	case slices.Contains(gw.RouteTableIds, rtID):
		summary := fmt.Sprintf("%s lists %s but the table has no route to %s (S3 gateway endpoint %s)", gwID, rtID, plID, gwID)
		if okNet {
			c = audit.Warn(verdict.ConditionRoute, summary+": layers go out through "+via+" instead (NAT data processing is charged)")
		} else {
			c = audit.Fail(verdict.ConditionRoute, summary)
		}
	default:
		summary := fmt.Sprintf("%s has no route to %s (S3 gateway endpoint %s serves %s)", rtID, plID, gwID, strings.Join(gw.RouteTableIds, ", "))
		if ns.RTMain {
			summary += "; the subnet uses the main table"
		}
		if okNet {
			c = audit.Warn(verdict.ConditionRoute, summary+": layers go out through "+via+" instead (NAT data processing is charged)")
		} else {
			c = audit.Fail(verdict.ConditionRoute, summary+" and the subnet has no internet path")
		}
	}
	c.Evidence = append(c.Evidence, fmt.Sprintf("%s state=%s routeTables=%s", gwID, gw.State, strings.Join(gw.RouteTableIds, ",")))
	return audit.WithChange(audit.WithResources(c, rtID, gwID), change)
}

func prefixListRouteTo(rt *ec2types.RouteTable, vpce string) *ec2types.Route {
	for i := range rt.Routes {
		if str(rt.Routes[i].DestinationPrefixListId) != "" && str(rt.Routes[i].GatewayId) == vpce {
			return &rt.Routes[i]
		}
	}
	return nil
}

// checkS3Policy: the S3 endpoint the layers use must allow s3:GetObject on
// the layer bucket. ECR hands out URLs it signed itself, so only a
// statement with Principal "*" matches, and an explicit Deny wins.
func checkS3Policy(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileEndpoints] {
		return m.missing(FileEndpoints)
	}
	p := m.path(ns, SvcS3)
	var e *ec2types.VpcEndpoint
	switch {
	case p.captured:
		e = p.iface
	case p.gateway != nil:
		e = p.gateway
	default:
		return audit.Skip("the layers do not go through an S3 endpoint: no endpoint policy applies")
	}
	id := str(e.VpcEndpointId)
	arn := fmt.Sprintf("arn:%s:s3:::%s/*", m.Partition, m.LayerBucket())
	d, why := evalPolicy(str(e.PolicyDocument), request{action: "s3:GetObject", resource: fmt.Sprintf("arn:%s:s3:::%s/layer", m.Partition, m.LayerBucket()), signedByAWS: true, account: m.Account})
	switch d {
	case allowed:
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s's policy allows s3:GetObject on %s (%s)", id, arn, why)), id)
	case undecided:
		return audit.WithResources(audit.Warn(verdict.ConditionTLSIdentity, fmt.Sprintf("cannot decide %s's policy for s3:GetObject on %s: %s", id, arn, why)), id)
	}
	c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("%s's policy refuses s3:GetObject on %s (%s: %s): layer downloads get 403", id, arn, d, why))
	stmt := fmt.Sprintf(`{"Sid":"ECRLayers","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"%s"}`, arn)
	return audit.WithChange(audit.WithResources(c, id), report.Change{Resource: id, Kind: "vpc-endpoint", Action: "allow s3:GetObject on " + arn + " to Principal \"*\" (and no Deny that matches it): " + stmt,
		Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --policy-document file://policy.json%s", id, m.regionFlag())})
}
