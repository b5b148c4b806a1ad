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
	CheckCacheCredSet    = "cache-credential-set"
	CheckCacheKeyVault   = "cache-keyvault-access"
)

// Checks are the audit's checks, in report order.
var Checks = []audit.Check[*Model, *nodeSubnet]{
	audit.NewNeeds(CheckRoute, "effective routes to each private endpoint address", needsAll(needsRoutes, needsEndpoints), checkRoute),
	audit.NewNeeds(CheckPeering, "peering and gateway transit on the cluster side", needsAll(needsFiles(FilePeerings), needsRoutes, needsEndpoints), checkPeering),
	audit.NewNeeds(CheckNSGEgress, "NSG outbound TCP 443 to each private endpoint address", needsAll(needsNSG, needsEndpoints, needsFiles(FileVNet)), checkNSG),
	audit.NewNeeds(CheckDNSServers, "the VNet's DNS servers", needsAll(needsFiles(FileVNet), needsRoutes), checkDNSServers),
	audit.NewNeeds(CheckDNSZoneLink, "privatelink.azurecr.io linked to the VNet the nodes resolve from", needsFiles(FileZones, FileLinks(ACRZone), FileVNet), checkZoneLink),
	audit.NewNeeds(CheckDNSRecords, "an A record for the registry and every data endpoint", needsAll(needsFiles(FileZones, FileRecords(ACRZone)), needsEndpoints), checkRecords),
	audit.NewNeeds(CheckPrivateEndpoint, "private endpoint connections Approved, covering every host", needsEndpoints, checkPrivateEndpoint),
	audit.NewNeeds(CheckPublicAccess, "public network access and the network rule set", needsNone, checkPublicAccess),
	audit.NewNeeds(CheckIPv6, "IPv6 from a dual-stack cluster to a dual-stack registry: ::/0 route and NSG", needsAll(needsRoutes, needsNSG), checkIPv6),
	audit.NewNeeds(CheckProxy, "the cluster's httpProxyConfig: which hosts containerd sends through the proxy", needsEndpoints, checkProxy),
	audit.NewNeeds(CheckIdentity, "the kubelet identity can pull", needsFiles(FileRoles), checkIdentity),
	audit.NewNeeds(CheckCacheCredSet, "artifact cache: the rule's credential set for its source", needsCache, checkCacheCredentials),
	audit.NewNeeds(CheckCacheKeyVault, "artifact cache: the credential set's identity may read its Key Vault secrets", needsVaultRoles, checkCacheKeyVault),
}

func init() { audit.RegisterCacheChecks(CheckCacheCredSet, CheckCacheKeyVault) }

// CheckIDs lists the check ids in order.
func CheckIDs() []string {
	out := make([]string, len(Checks))
	for i, c := range Checks {
		out[i] = c.ID()
	}
	return out
}
