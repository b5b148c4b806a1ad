// Package gcp is `pullpath gcp audit` and `pullpath gcp collect`: it loads
// a GKE cluster's node path to Artifact Registry or Container Registry
// (node pools and instances, the node subnets with Private Google Access,
// routes, VPC firewall rules, Cloud NAT, the private Cloud DNS zones bound
// to the network, DNS server policies, the registry's IAM policies and VPC
// Service Controls perimeters) into the google.golang.org/api types, either
// from verbatim `gcloud ... --format=json` files (--from) or from the live
// REST APIs (which go through the same files), and runs one set of checks
// per node subnet for every host of a pull.
//
// It dials no registry: it reads configuration. `pullpath probe` walks the
// path from a node.
package gcp

import (
	"sort"
	"strings"

	accesscontextmanager "google.golang.org/api/accesscontextmanager/v1"
	artifactregistry "google.golang.org/api/artifactregistry/v1"
	cloudresourcemanager "google.golang.org/api/cloudresourcemanager/v1"
	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	dns "google.golang.org/api/dns/v1"
	secretmanager "google.golang.org/api/secretmanager/v1"

	"github.com/pullpath/pullpath/internal/report"
)

// Model is one cluster's configuration as gcloud prints it. Lists that
// came from an optional file carry a Known flag: absent is not empty.
type Model struct {
	Cluster *container.Cluster

	Instances      []*compute.Instance
	InstancesKnown bool
	Network        *compute.Network
	// Subnets are the described node subnets, by resPath.
	Subnets        map[string]*compute.Subnetwork
	Routes         []*compute.Route
	RoutesKnown    bool
	Firewalls      []*compute.Firewall
	FirewallsKnown bool
	Routers        []*compute.Router
	RoutersKnown   bool

	Zones       []*dns.ManagedZone
	ZonesKnown  bool
	Records     map[string][]*dns.ResourceRecordSet // by zone name; present = described
	Policies    []*dns.Policy
	PolicyKnown bool

	// RepoPolicies are the repositories' IAM policies, by repository name.
	RepoPolicies map[string]*artifactregistry.Policy
	// Repos are the repositories as described, by name; SecretPolicies
	// the IAM policies of remote repositories' credential secrets, by
	// secret name; VPCSC the registry project's VPC-SC config for remote
	// repositories in the registry's location.
	Repos          map[string]*artifactregistry.Repository
	SecretPolicies map[string]*secretmanager.Policy
	VPCSC          *artifactregistry.VPCSCConfig
	ProjectPolicy  *cloudresourcemanager.Policy
	Project        *cloudresourcemanager.Project
	// NodeProjects are the nodes' projects other than the registry's (the
	// cluster's, the network's host project), by project id.
	NodeProjects    map[string]*cloudresourcemanager.Project
	Perimeters      []*accesscontextmanager.ServicePerimeter
	PerimetersKnown bool

	Warnings []report.AuditWarning

	// target is the registry audited (Audit sets it).
	target Target
	// nodesBySubnet counts nodes per node subnet path (buildSubnets).
	nodesBySubnet map[string]int
}

// ClusterProject is the cluster's project id (from its selfLink).
func (m *Model) ClusterProject() string {
	if p := segment(m.Cluster.SelfLink, "projects"); p != "" {
		return p
	}
	return segment(m.Cluster.Id, "projects")
}

// Location is the cluster's region or zone.
func (m *Model) Location() string {
	if m.Cluster.Location != "" {
		return m.Cluster.Location
	}
	return m.Cluster.Zone
}

// Region is the cluster's region (a zonal cluster's zone minus its suffix).
func (m *Model) Region() string { return regionOf(m.Location()) }

func regionOf(loc string) string {
	parts := strings.Split(loc, "-")
	if len(parts) == 3 && len(parts[2]) == 1 {
		return parts[0] + "-" + parts[1]
	}
	return loc
}

// NetworkPath is the node network as projects/P/global/networks/N (with
// Shared VPC, P is the host project).
func (m *Model) NetworkPath() string {
	if nc := m.Cluster.NetworkConfig; nc != nil && nc.Network != "" {
		return resPath(nc.Network)
	}
	if m.Network != nil {
		return resPath(m.Network.SelfLink)
	}
	if m.Cluster.Network != "" {
		return "projects/" + m.ClusterProject() + "/global/networks/" + m.Cluster.Network
	}
	return ""
}

// NetworkProject is the project of the node network (the host project
// with Shared VPC): its zones, routes, firewall rules and routers count.
func (m *Model) NetworkProject() string {
	if p := segment(m.NetworkPath(), "projects"); p != "" {
		return p
	}
	return m.ClusterProject()
}

// NetworkName is the node network's name.
func (m *Model) NetworkName() string { return lastSeg(m.NetworkPath()) }

// defaultSubnet is the cluster's own subnetwork (node pools without one of
// their own use it).
func (m *Model) defaultSubnet() string {
	if nc := m.Cluster.NetworkConfig; nc != nil && nc.Subnetwork != "" {
		return resPath(nc.Subnetwork)
	}
	if m.Cluster.Subnetwork != "" {
		return "projects/" + m.NetworkProject() + "/regions/" + m.Region() + "/subnetworks/" + m.Cluster.Subnetwork
	}
	return ""
}

// poolSubnet is the subnetwork a node pool's nodes are created in.
func (m *Model) poolSubnet(p *container.NodePool) string {
	if p.NetworkConfig != nil && p.NetworkConfig.Subnetwork != "" {
		s := p.NetworkConfig.Subnetwork
		if !strings.Contains(s, "/") {
			s = "projects/" + m.NetworkProject() + "/regions/" + m.Region() + "/subnetworks/" + s
		}
		return resPath(s)
	}
	return m.defaultSubnet()
}

// poolPrivate reports whether a pool's nodes get no external IP.
func (m *Model) poolPrivate(p *container.NodePool) bool {
	if p.NetworkConfig != nil && p.NetworkConfig.EnablePrivateNodes {
		return true
	}
	if c := m.Cluster.PrivateClusterConfig; c != nil && c.EnablePrivateNodes {
		return true
	}
	if nc := m.Cluster.NetworkConfig; nc != nil && nc.DefaultEnablePrivateNodes {
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
