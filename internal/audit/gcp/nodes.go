package gcp

import (
	"net/netip"
	"slices"
	"sort"
	"strings"

	compute "google.golang.org/api/compute/v1"
)

// GKE labels its node instances with the cluster and the pool.
const (
	labelCluster = "goog-k8s-cluster-name"
	labelPool    = "goog-k8s-node-pool-name"
)

// nodeProfile is what the network and IAM see of a set of nodes: one pool's
// nodes in one subnet with the same tags, service account, scopes and
// external address (or its configuration when no instance is listed).
type nodeProfile struct {
	Pool     string
	Tags     []string
	SA       string // email; "" when the pool says "default" and the project number is unknown
	Scopes   []string
	External bool // the nodes have an external IPv4 address
	Count    int
	// FromConfig: no instance was listed, this is the pool's configuration
	// (GKE adds a network tag of its own that the configuration does not show).
	FromConfig bool
}

// nodeSubnet is what every check reads for one node subnet.
type nodeSubnet struct {
	Path     string // projects/P/regions/R/subnetworks/N
	Name     string
	Region   string
	Subnet   *compute.Subnetwork // nil when not described
	Pools    []string
	Nodes    int
	Profiles []*nodeProfile
	Hosts    []*pullHost
}

func (n *nodeSubnet) poolsString() string {
	switch len(n.Pools) {
	case 0:
		return "subnet " + n.Name
	case 1:
		return "pool " + n.Pools[0]
	}
	return "pools " + strings.Join(n.Pools, ", ")
}

func (n *nodeSubnet) primary() (netip.Prefix, bool) {
	if n.Subnet == nil {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(n.Subnet.IpCidrRange)
	return p, err == nil
}

func (n *nodeSubnet) private() []*nodeProfile {
	var out []*nodeProfile
	for _, p := range n.Profiles {
		if !p.External {
			out = append(out, p)
		}
	}
	return out
}

func (m *Model) subnet(path string) *compute.Subnetwork { return m.Subnets[strings.ToLower(path)] }

// clusterInstances are the listed instances of this cluster.
func (m *Model) clusterInstances() []*compute.Instance {
	var out []*compute.Instance
	for _, in := range m.Instances {
		if in == nil {
			continue
		}
		if c, ok := in.Labels[labelCluster]; ok && c != m.Cluster.Name {
			continue
		}
		out = append(out, in)
	}
	return out
}

func nic0(in *compute.Instance) *compute.NetworkInterface {
	if len(in.NetworkInterfaces) == 0 {
		return nil
	}
	return in.NetworkInterfaces[0]
}

// NodeSubnetPaths are the node subnets: those of the listed nodes, then
// those node pools create nodes in (a pool scaled to zero still puts its
// next node there).
func (m *Model) NodeSubnetPaths() []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || seen[strings.ToLower(p)] {
			return
		}
		seen[strings.ToLower(p)] = true
		out = append(out, p)
	}
	for _, p := range m.Cluster.NodePools {
		if p != nil {
			add(m.poolSubnet(p))
		}
	}
	for _, in := range m.clusterInstances() {
		if n := nic0(in); n != nil {
			add(resPath(n.Subnetwork))
		}
	}
	return out
}

// defaultSA is the Compute Engine default service account of the cluster's
// project, when its number is known (from projects-describe.json when the
// registry is in the cluster's project, or from a node that runs as it).
func (m *Model) defaultSA() string {
	if m.Project != nil && m.Project.ProjectId == m.ClusterProject() && m.Project.ProjectNumber != 0 {
		return itoa(m.Project.ProjectNumber) + "-compute@developer.gserviceaccount.com"
	}
	for _, in := range m.clusterInstances() {
		for _, sa := range in.ServiceAccounts {
			if sa != nil && strings.HasSuffix(sa.Email, "-compute@developer.gserviceaccount.com") {
				return sa.Email
			}
		}
	}
	return ""
}

// buildSubnets makes the per-subnet views, in the order NodeSubnetPaths
// gives.
func (m *Model) buildSubnets(hosts []*pullHost) []*nodeSubnet {
	var out []*nodeSubnet
	byPath := map[string]*nodeSubnet{}
	for _, p := range m.NodeSubnetPaths() {
		ns := &nodeSubnet{Path: p, Name: lastSeg(p), Region: segment(p, "regions"), Subnet: m.subnet(p), Hosts: hosts}
		byPath[strings.ToLower(p)] = ns
		out = append(out, ns)
	}
	listed := map[string]bool{} // pools with listed instances
	type key struct {
		pool, tags, sa, scopes string
		ext                    bool
	}
	profs := map[string]map[key]*nodeProfile{}
	for _, in := range m.clusterInstances() {
		n := nic0(in)
		if n == nil {
			continue
		}
		ns := byPath[strings.ToLower(resPath(n.Subnetwork))]
		pool := in.Labels[labelPool]
		listed[pool] = true
		pr := &nodeProfile{Pool: pool, Count: 1}
		if in.Tags != nil {
			pr.Tags = append([]string(nil), in.Tags.Items...)
			sort.Strings(pr.Tags)
		}
		if len(in.ServiceAccounts) > 0 && in.ServiceAccounts[0] != nil {
			pr.SA = in.ServiceAccounts[0].Email
			pr.Scopes = in.ServiceAccounts[0].Scopes
		}
		for _, ac := range n.AccessConfigs {
			if ac != nil && ac.NatIP != "" {
				pr.External = true
			}
		}
		k := key{pool, strings.Join(pr.Tags, ","), pr.SA, strings.Join(pr.Scopes, ","), pr.External}
		if profs[ns.Path] == nil {
			profs[ns.Path] = map[key]*nodeProfile{}
		}
		if have, ok := profs[ns.Path][k]; ok {
			have.Count++
			continue
		}
		profs[ns.Path][k] = pr
		ns.Profiles = append(ns.Profiles, pr)
	}
	for _, p := range m.Cluster.NodePools {
		if p == nil || listed[p.Name] && m.InstancesKnown {
			continue
		}
		ns := byPath[strings.ToLower(m.poolSubnet(p))]
		if ns == nil {
			continue
		}
		pr := &nodeProfile{Pool: p.Name, External: !m.poolPrivate(p), FromConfig: true, Count: int(p.InitialNodeCount)}
		if c := p.Config; c != nil {
			pr.Tags = append([]string(nil), c.Tags...)
			sort.Strings(pr.Tags)
			pr.SA = c.ServiceAccount
			pr.Scopes = c.OauthScopes
		}
		if pr.SA == "" || pr.SA == "default" {
			pr.SA = m.defaultSA()
		}
		ns.Profiles = append(ns.Profiles, pr)
	}
	m.nodesBySubnet = map[string]int{}
	for _, ns := range out {
		for _, pr := range ns.Profiles {
			m.nodesBySubnet[ns.Path] += pr.Count
			ns.Nodes += pr.Count
			if pr.Pool != "" && !slices.Contains(ns.Pools, pr.Pool) {
				ns.Pools = append(ns.Pools, pr.Pool)
			}
		}
	}
	return out
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
