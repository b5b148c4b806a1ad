package aws

import (
	"fmt"
	"slices"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkRouteTable names the table that routes the subnet: its explicit
// association, else the VPC's main table (a subnet with no association
// uses it). Blackhole routes off the pull's path are a warn; on the path
// route-internet and s3-route name them.
func checkRouteTable(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileRouteTables] {
		return m.missing(FileRouteTables)
	}
	if ns.RouteTable == nil {
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s has no route table: no explicit association and no main table in %s", ns.ID, FileRouteTables))
		return audit.WithChange(c, report.Change{Resource: ns.ID, Kind: "subnet", Action: "associate the subnet with a route table that reaches the registry",
			Command: fmt.Sprintf("aws ec2 associate-route-table --subnet-id %s --route-table-id RTB%s", ns.ID, m.regionFlag())})
	}
	id := str(ns.RouteTable.RouteTableId)
	how := "explicit association"
	if ns.RTMain {
		how = "the VPC's main table: the subnet has no explicit association"
	}
	var ev []string
	for i := range ns.RouteTable.Routes {
		ev = append(ev, routeString(&ns.RouteTable.Routes[i]))
	}
	var holes, gone []string
	for i := range ns.RouteTable.Routes {
		r := &ns.RouteTable.Routes[i]
		if r.State != ec2types.RouteStateBlackhole || str(r.DestinationCidrBlock) == "0.0.0.0/0" || onFamilyPath(r) || str(r.DestinationPrefixListId) != "" {
			continue
		}
		holes = append(holes, routeString(r))
		if t := routeTarget(r); t != "nothing" && !slices.Contains(gone, t) {
			gone = append(gone, t)
		}
	}
	if len(holes) > 0 {
		c := audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s (%s) has blackhole routes off the pull's path: %s", id, how, firstN(holes, 3)), ev...)
		c = audit.WithResources(c, id)
		return audit.WithChange(c, report.Change{Resource: id, Kind: "route-table", Touches: gone, Action: "delete or repoint the blackhole routes (their target is gone)",
			Command: fmt.Sprintf("aws ec2 describe-route-tables --route-table-ids %s%s", id, m.regionFlag())})
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s (%s)", id, how), ev...), id)
}

// onFamilyPath: the IPv6 routes route-ipv6 and dns64-nat64 judge (::/0,
// 64:ff9b::/96), not routes off the pull's path.
func onFamilyPath(r *ec2types.Route) bool {
	d := str(r.DestinationIpv6CidrBlock)
	return d == anyIPv6.String() || d == nat64Prefix.String()
}
