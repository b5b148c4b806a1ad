package aws

import (
	"fmt"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkInternet: the hosts that no endpoint carries go out by the route
// table's default route (longest prefix for 0.0.0.0/0): to a NAT gateway
// that is available, public, in the subnet's AZ and whose own subnet
// reaches an internet gateway; or to an internet gateway, with public
// addresses on the nodes. A blackhole there is the finding.
func checkInternet(m *Model, ns *NodeSubnet) report.CheckResult {
	if c, ok := ipv4Skip(ns); ok {
		return c
	}
	var need, carried []string
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		p := m.path(ns, svc)
		if p.internet {
			need = append(need, p.host)
		} else {
			carried = append(carried, p.host)
		}
	}
	if len(need) == 0 {
		return audit.Skip("every host of the pull goes through an endpoint")
	}
	if !m.Have[FileRouteTables] {
		return m.missing(FileRouteTables)
	}
	if ns.RouteTable == nil {
		return audit.Skip("no route table (see route-table)")
	}
	rtID := str(ns.RouteTable.RouteTableId)
	hosts := strings.Join(need, ", ")
	r := m.lookupRoute(ns.RouteTable, anyIPv4)
	if r == nil {
		if len(carried) > 0 {
			return audit.Skip(fmt.Sprintf("%s has no default route (a private subnet by design); %s need an endpoint (see the endpoint and s3 checks)", rtID, hosts))
		}
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s has no route to 0.0.0.0/0 and no endpoint carries the pull: %s unreachable", rtID, hosts))
		return audit.WithChange(audit.WithResources(c, rtID), report.Change{Resource: rtID, Kind: "route-table", Action: "add 0.0.0.0/0 to a NAT gateway in " + ns.AZ + " (or create the ECR and S3 endpoints)",
			Command: fmt.Sprintf("aws ec2 create-route --route-table-id %s --destination-cidr-block 0.0.0.0/0 --nat-gateway-id %s%s", rtID, m.natInAZ(ns.AZ), m.regionFlag())})
	}
	route := r.Route
	ev := []string{rtID + ": " + routeString(route), "hosts by this route: " + hosts}
	target := routeTarget(route)
	// replace repoints the route away from target (gone, or unfit), which
	// the change names beside the table.
	replace := func(action, target string) report.Change {
		var touches []string
		if target != "nothing" {
			touches = []string{target}
		}
		return report.Change{Resource: rtID, Kind: "route-table", Touches: touches, Action: action,
			Command: fmt.Sprintf("aws ec2 replace-route --route-table-id %s --destination-cidr-block %s --nat-gateway-id %s%s", rtID, r.Dest, m.natInAZ(ns.AZ), m.regionFlag())}
	}
	if route.State == ec2types.RouteStateBlackhole {
		c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s, a blackhole (its target is gone): %s unreachable", rtID, r.Dest, target, hosts), ev...)
		return audit.WithChange(audit.WithResources(c, rtID, target), replace("point "+r.Dest+" at an available NAT gateway in "+ns.AZ, target))
	}
	if nat := str(route.NatGatewayId); nat != "" {
		n, ok := m.NATs[nat]
		if !ok {
			if !m.Have[FileNATGateways] {
				return m.missing(FileNATGateways)
			}
			c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s, which is not in %s (deleted?)", rtID, r.Dest, nat, FileNATGateways), ev...)
			return audit.WithChange(audit.WithResources(c, rtID, nat), replace("point "+r.Dest+" at an available NAT gateway in "+ns.AZ, nat))
		}
		natSubnet := str(n.SubnetId)
		natAZ := m.subnetAZ(natSubnet)
		ev = append(ev, fmt.Sprintf("%s state=%s connectivity=%s subnet=%s az=%s", nat, n.State, n.ConnectivityType, natSubnet, natAZ))
		switch {
		case n.State != ec2types.NatGatewayStateAvailable:
			c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s, which is %s", rtID, r.Dest, nat, n.State), ev...)
			return audit.WithChange(audit.WithResources(c, rtID, nat), replace("point "+r.Dest+" at an available NAT gateway in "+ns.AZ, nat))
		case n.ConnectivityType == ec2types.ConnectivityTypePrivate:
			c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s is a private NAT gateway: it reaches no public address (%s)", nat, hosts), ev...)
			return audit.WithChange(audit.WithResources(c, rtID, nat), replace("point "+r.Dest+" at a public NAT gateway in "+ns.AZ, nat))
		case !m.natHasIGW(n):
			nrt, _ := m.routeTableOf(natSubnet)
			nrtID := "its route table"
			if nrt != nil {
				nrtID = str(nrt.RouteTableId)
			}
			c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s's subnet %s has no route to an internet gateway in %s", nat, natSubnet, nrtID), ev...)
			return audit.WithChange(audit.WithResources(c, nat, nrtID), report.Change{Resource: nrtID, Kind: "route-table", Action: "route 0.0.0.0/0 of the NAT gateway's subnet to the VPC's internet gateway",
				Command: fmt.Sprintf("aws ec2 create-route --route-table-id %s --destination-cidr-block 0.0.0.0/0 --gateway-id IGW%s", nrtID, m.regionFlag())})
		case natAZ != "" && ns.AZ != "" && natAZ != ns.AZ:
			c := audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s in %s, not in the subnet's AZ %s: it works, but the pull depends on another AZ and pays cross-AZ transfer", rtID, r.Dest, nat, natAZ, ns.AZ), ev...)
			return audit.WithChange(audit.WithResources(c, rtID, nat), replace("point "+r.Dest+" at a NAT gateway in "+ns.AZ, nat))
		}
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s routes %s to %s (available, %s)", rtID, r.Dest, nat, natAZ), ev...), rtID, nat)
	}
	if gw := str(route.GatewayId); strings.HasPrefix(gw, "igw-") {
		if missing := m.noPublicIP(ns); len(missing) > 0 {
			c := audit.Fail(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s, but %s have no public IPv4 address: an internet gateway forwards only public addresses", rtID, r.Dest, gw, firstN(missing, 3)), ev...)
			return audit.WithChange(audit.WithResources(c, rtID, gw, ns.ID), report.Change{Resource: ns.ID, Kind: "subnet", Action: "give new nodes public addresses (or route through a NAT gateway)",
				Command: fmt.Sprintf("aws ec2 modify-subnet-attribute --subnet-id %s --map-public-ip-on-launch%s", ns.ID, m.regionFlag())})
		}
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s routes %s to %s; the nodes have public addresses", rtID, r.Dest, gw), ev...), rtID, gw)
	}
	return audit.WithResources(audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s routes %s to %s: the path beyond it is not visible to this audit", rtID, r.Dest, target), ev...), rtID, target)
}

// natInAZ names an available public NAT gateway in the AZ, for a command.
func (m *Model) natInAZ(az string) string {
	for _, id := range sortedKeys(m.NATs) {
		n := m.NATs[id]
		if n.State == ec2types.NatGatewayStateAvailable && n.ConnectivityType != ec2types.ConnectivityTypePrivate && m.subnetAZ(str(n.SubnetId)) == az {
			return id
		}
	}
	return "NAT_IN_" + strings.ToUpper(strings.ReplaceAll(az, "-", "_"))
}
