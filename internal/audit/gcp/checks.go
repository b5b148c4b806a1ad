package gcp

import (
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Check ids, in the order of a pull: names first (the node's resolver is
// Cloud DNS, which the network's server policy and bound private zones
// decide), then where packets go (Private Google Access, routes, the
// egress firewall, Cloud NAT), then who may pull (access scopes, IAM, VPC
// Service Controls).
const (
	CheckDNSPolicy      = "dns-policy"
	CheckDNSZone        = "dns-zone"
	CheckPGA            = "private-google-access"
	CheckRoute          = "route"
	CheckFirewall       = "firewall-egress-443"
	CheckNAT            = "cloud-nat"
	CheckScopes         = "access-scopes"
	CheckIdentity       = "identity-reader"
	CheckVPCSC          = "vpc-sc"
	CheckSubnetDescribe = "subnet-described"
	CheckRemoteCreds    = "remote-upstream-credentials"
	CheckRemoteVPCSC    = "remote-vpc-sc"
)

// Checks are the audit's checks, in report order.
var Checks = []audit.Check[*Model, *nodeSubnet]{
	audit.NewNeeds(CheckDNSPolicy, "the network's DNS server policy", needsFiles(FileDNSPolicies), checkDNSPolicy),
	audit.NewNeeds(CheckDNSZone, "private zones for pkg.dev, gcr.io, googleapis.com answer the VIP", needsFiles(FileZones), checkDNSZone),
	audit.NewNeeds(CheckPGA, "Private Google Access on the node subnet", needsPGA, checkPGA),
	audit.NewNeeds(CheckRoute, "a route via the default internet gateway to each address", needsFiles(FileRoutes, FileZones), checkRoute),
	audit.NewNeeds(CheckFirewall, "VPC firewall lets TCP 443 out to each address", needsFiles(FileFirewalls, FileZones), checkFirewall),
	audit.NewNeeds(CheckNAT, "Cloud NAT covers the subnet, with ports for its nodes", needsSubnet(FileRouters, FileZones), checkNAT),
	audit.NewNeeds(CheckIPv6, "IPv6 from a dual-stack cluster to Google's AAAA addresses: Private Google Access, ::/0 route, firewall", needsSubnet(FileRoutes, FileFirewalls, FileZones), checkIPv6),
	audit.NewNeeds(CheckScopes, "node access scopes carry a storage or cloud-platform scope", needsNone, checkScopes),
	audit.NewNeeds(CheckIdentity, "node service account reads the repository", needsIdentity, checkIdentity),
	audit.NewNeeds(CheckVPCSC, "VPC Service Controls perimeters let the nodes' project reach the registry's", needsFiles(FilePerimeters, FileProject), checkVPCSC),
	audit.NewNeeds(CheckRemoteCreds, "a remote repository's upstream credentials: the Artifact Registry service agent reads their secret", needsRemoteCredentials, checkRemoteCredentials),
	audit.NewNeeds(CheckRemoteVPCSC, "a remote repository inside a perimeter: the project's VPC-SC config allows its upstream", needsRemoteVPCSC, checkRemoteVPCSC),
}

// The remote repository's checks are the cache's (diagnose puts their
// changes first on a CACHE_UPSTREAM_* pull and proves with an image not yet
// cached).
func init() { audit.RegisterCacheChecks(CheckRemoteCreds, CheckRemoteVPCSC) }

// CheckIDs lists the check ids in order.
func CheckIDs() []string {
	out := make([]string, len(Checks))
	for i, c := range Checks {
		out[i] = c.ID()
	}
	return out
}

// pathCondition is the repair direction of a path failure on h: the
// registry's own host is the route; another host the registry hands out
// (Cloud Storage for GCR layers) is the endpoint set.
func pathCondition(h *pullHost) verdict.Condition {
	for _, r := range h.Roles {
		if r == verdict.RoleRegistry {
			return verdict.ConditionRoute
		}
	}
	return verdict.ConditionEndpointSet
}

func profileName(p *nodeProfile) string {
	if p.Pool == "" {
		return "nodes without a pool label"
	}
	return "pool " + p.Pool
}

// nodeTag is the tag a firewall rule or route for the nodes should target:
// GKE's own node tag (gke-CLUSTER-HASH-node) when the nodes carry it.
func nodeTag(p *nodeProfile) string {
	for _, t := range p.Tags {
		if strings.HasPrefix(t, "gke-") && strings.HasSuffix(t, "-node") {
			return t
		}
	}
	if len(p.Tags) > 0 {
		return p.Tags[0]
	}
	return ""
}
