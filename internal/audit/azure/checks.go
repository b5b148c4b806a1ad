package azure

import "github.com/pullpath/pullpath/internal/audit"

// Check ids, in the order of work: route the node network first (routes,
// peering and gateway transit, security rules), then resolve in node
// context (DNS servers, the zone link, the records), then every endpoint
// the registry hands out, then the pull identity.
const (
	CheckRoute           = "route"
	CheckPeering         = "peering"
	CheckNSGEgress       = "nsg-egress-443"
	CheckDNSServers      = "dns-servers"
	CheckDNSZoneLink     = "dns-zone-link"
	CheckDNSRecords      = "dns-records"
	CheckPrivateEndpoint = "private-endpoint"
	CheckPublicAccess    = "public-access"
	CheckProxy           = "http-proxy"
	CheckIdentity        = "identity-acrpull"
)

// Checks are the audit's checks, in report order.
var Checks = []audit.Check[*Model, *nodeSubnet]{
	audit.New(CheckRoute, "effective routes to each private endpoint address", checkRoute),
	audit.New(CheckPeering, "peering and gateway transit on the cluster side", checkPeering),
	audit.New(CheckNSGEgress, "NSG outbound TCP 443 to each private endpoint address", checkNSG),
	audit.New(CheckDNSServers, "the VNet's DNS servers", checkDNSServers),
	audit.New(CheckDNSZoneLink, "privatelink.azurecr.io linked to the VNet the nodes resolve from", checkZoneLink),
	audit.New(CheckDNSRecords, "an A record for the registry and every data endpoint", checkRecords),
	audit.New(CheckPrivateEndpoint, "private endpoint connections Approved, covering every host", checkPrivateEndpoint),
	audit.New(CheckPublicAccess, "public network access and the network rule set", checkPublicAccess),
	audit.New(CheckIPv6, "IPv6 from a dual-stack cluster to a dual-stack registry: ::/0 route and NSG", checkIPv6),
	audit.New(CheckProxy, "the cluster's httpProxyConfig: which hosts containerd sends through the proxy", checkProxy),
	audit.New(CheckIdentity, "the kubelet identity can pull", checkIdentity),
}

// CheckIDs lists the check ids in order.
func CheckIDs() []string {
	out := make([]string, len(Checks))
	for i, c := range Checks {
		out[i] = c.ID()
	}
	return out
}
