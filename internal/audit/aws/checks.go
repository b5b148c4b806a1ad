package aws

import (
	"fmt"
	"sort"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// Check ids, in the order of a pull: where packets go, names, the
// endpoints and their guards, the layers' path, the internet path, the
// subnet filters, the identity.
const (
	CheckRouteTable       = "route-table"
	CheckDNSAttributes    = "dns-vpc-attributes"
	CheckDHCPOptions      = "dns-dhcp-options"
	CheckPrivateDNS       = "dns-private-dns"
	CheckEndpointECRAPI   = "endpoint-ecr-api"
	CheckEndpointECRDKR   = "endpoint-ecr-dkr"
	CheckEndpointPolicy   = "endpoint-ecr-policy"
	CheckSGEndpoint       = "sg-endpoint-ingress-443"
	CheckSGNodeEgress     = "sg-node-egress-443"
	CheckS3Route          = "s3-route"
	CheckS3Policy         = "s3-endpoint-policy"
	CheckInternet         = "route-internet"
	CheckNACLNode         = "nacl-node-subnet"
	CheckNACLPath         = "nacl-path-subnets"
	CheckIPv6Route        = "route-ipv6"
	CheckDNS64            = "dns64-nat64"
	CheckNACLIPv6         = "nacl-node-ipv6"
	CheckSGNodeEgressIPv6 = "sg-node-egress-443-ipv6"
	CheckIdentity         = "identity-ecr-actions"
	CheckCacheMiss        = "pull-through-cache-miss"
	CheckCacheIdentity    = "pull-through-cache-identity"
	CheckCacheSecret      = "pull-through-cache-secret"
	CheckCacheTemplate    = "pull-through-cache-template"
	CheckSubnetDescribed  = "subnet-described"
)

// Checks are the audit's checks, in report order.
var Checks = []audit.Check[*Model, *NodeSubnet]{
	audit.New(CheckRouteTable, "route table of the subnet", checkRouteTable),
	audit.New(CheckDNSAttributes, "VPC DNS support and DNS host names", checkDNSAttributes),
	audit.New(CheckDHCPOptions, "DHCP option set name servers", checkDHCPOptions),
	audit.New(CheckPrivateDNS, "private DNS of the ECR interface endpoints", checkPrivateDNS),
	audit.New(CheckEndpointECRAPI, "ecr.api interface endpoint (auth token)", func(m *Model, ns *NodeSubnet) report.CheckResult { return checkEndpoint(m, ns, SvcECRAPI) }),
	audit.New(CheckEndpointECRDKR, "ecr.dkr interface endpoint (manifests, layer URLs)", func(m *Model, ns *NodeSubnet) report.CheckResult { return checkEndpoint(m, ns, SvcECRDKR) }),
	audit.New(CheckEndpointPolicy, "ECR endpoint policies allow the pull", checkECRPolicy),
	audit.New(CheckSGEndpoint, "endpoint security groups admit 443 from the nodes", checkSGEndpoint),
	audit.New(CheckSGNodeEgress, "node security groups let 443 out", checkSGNodeEgress),
	audit.New(CheckS3Route, "S3 path for the layers", checkS3Route),
	audit.New(CheckS3Policy, "S3 endpoint policy allows the layer bucket", checkS3Policy),
	audit.New(CheckInternet, "internet path (NAT gateway or internet gateway)", checkInternet),
	audit.New(CheckNACLNode, "network ACL of the node subnet", checkNACLNode),
	audit.New(CheckNACLPath, "network ACLs of the endpoint and NAT subnets", checkNACLPath),
	audit.New(CheckIPv6Route, "IPv6 route out (::/0 to an egress-only or internet gateway)", checkIPv6Route),
	audit.New(CheckDNS64, "DNS64 and NAT64 for the A-only hosts (64:ff9b::/96 to a NAT gateway)", checkDNS64),
	audit.New(CheckNACLIPv6, "network ACL of the node subnet over IPv6", checkNACLIPv6),
	audit.New(CheckSGNodeEgressIPv6, "node security groups let 443 out over IPv6", checkSGNodeEgressIPv6),
	audit.New(CheckIdentity, "node role may pull from ECR", checkIdentity),
	audit.New(CheckCacheMiss, "pull-through cache: a cache miss's path to the upstream", checkCacheMiss),
	audit.New(CheckCacheIdentity, "pull-through cache: the node role may import and create the repository", checkCacheIdentity),
	audit.New(CheckCacheSecret, "pull-through cache: the rule's upstream secret (ecr-pullthroughcache/)", checkCacheSecret),
	audit.New(CheckCacheTemplate, "pull-through cache: the repository creation template's role for its tags and KMS key", checkCacheTemplate),
}

func init() {
	audit.RegisterCacheChecks(CheckCacheMiss, CheckCacheIdentity, CheckCacheSecret, CheckCacheTemplate)
}

// missing is the warn of a check whose input file was not given, or
// whose live call failed (then the failure, not "not given": a call that
// failed once under load must not read as a folder someone left short).
func (m *Model) missing(file string) report.CheckResult {
	r := audit.Warn("", fmt.Sprintf("%s not given: cannot decide (%s)", file, m.command(file)))
	if e, ok := m.failed[file]; ok {
		r = audit.Warn("", fmt.Sprintf("the call for %s failed (%s): cannot decide (%s)", file, e, m.command(file)))
	}
	r.Missing = []string{file}
	return r
}

func (m *Model) command(file string) string {
	return m.cacheCommand(CommandFor(file, m.Cluster, m.VPC, m.Region, m.NodeRoleARN))
}

func (m *Model) regionFlag() string {
	if m.Region == "" {
		return ""
	}
	return " --region " + m.Region
}

// internetOK reports whether the subnet has a working default route out:
// to an available NAT gateway whose own subnet reaches an internet gateway,
// or to an internet gateway with public addresses on the nodes.
//
// An IPv6-only subnet has no IPv4 route to use: its way out is NAT64 (a
// NAT gateway for 64:ff9b::/96, which the A-only names need, with DNS64 on)
// or ::/0 to an egress-only or internet gateway (the AAAA names); the
// family checks judge which host needs which.
func (m *Model) internetOK(ns *NodeSubnet) (bool, string) {
	if ns.family() == FamilyIPv6 {
		if nat, why := m.nat64(ns, []*hostPath{{internet: true}}); why == "" {
			return true, nat + " (NAT64)"
		}
		if r := m.lookupRoute(ns.RouteTable, anyIPv6); r != nil && r.Route.State != ec2types.RouteStateBlackhole {
			if t := routeTarget(r.Route); strings.HasPrefix(t, "eigw-") || strings.HasPrefix(t, "igw-") {
				return true, t
			}
		}
		return false, ""
	}
	r := m.lookupRoute(ns.RouteTable, anyIPv4)
	if r == nil || r.Route.State == ec2types.RouteStateBlackhole {
		return false, ""
	}
	if nat := str(r.Route.NatGatewayId); nat != "" {
		n, ok := m.NATs[nat]
		if !ok && !m.given(FileNATGateways) {
			return true, nat
		}
		if !ok || n.State != ec2types.NatGatewayStateAvailable || n.ConnectivityType == ec2types.ConnectivityTypePrivate {
			return false, ""
		}
		if !m.natHasIGW(n) {
			return false, ""
		}
		return true, nat
	}
	if gw := str(r.Route.GatewayId); strings.HasPrefix(gw, "igw-") {
		if len(m.noPublicIP(ns)) == 0 {
			return true, gw
		}
		return false, ""
	}
	if t := routeTarget(r.Route); t != "nothing" && t != "local" {
		return true, t // beyond what the audit sees; not a reason to fail other checks
	}
	return false, ""
}

func (m *Model) natHasIGW(n *ec2types.NatGateway) bool {
	rt, _ := m.routeTableOf(str(n.SubnetId))
	if rt == nil {
		return !m.Have[FileRouteTables]
	}
	r := m.lookupRoute(rt, anyIPv4)
	return r != nil && r.Route.State != ec2types.RouteStateBlackhole && strings.HasPrefix(str(r.Route.GatewayId), "igw-")
}

// noPublicIP lists the nodes of a subnet that have no public IPv4 address
// (for a subnet whose default route is an internet gateway).
func (m *Model) noPublicIP(ns *NodeSubnet) []string {
	m.given(FileInstances)
	var out []string
	for _, in := range ns.Instances {
		if str(in.PublicIpAddress) == "" {
			out = append(out, str(in.InstanceId))
		}
	}
	if len(ns.Instances) == 0 && ns.Subnet != nil && (ns.Subnet.MapPublicIpOnLaunch == nil || !*ns.Subnet.MapPublicIpOnLaunch) {
		out = append(out, "new nodes (MapPublicIpOnLaunch is false)")
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func firstN(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(" and %d more", len(list)-n)
}
