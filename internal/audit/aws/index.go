package aws

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Building the Model from a Raw: each file indexed once (by id, filtered to
// the cluster's VPC), then the node subnets resolved (their route table,
// network ACL and who sends the pull's packets from them).

// Build indexes a Raw into a Model. It fails only when the cluster cannot be
// identified; everything else missing or odd becomes a warning naming the
// file.
func Build(raw *Raw) (*Model, error) {
	m := &Model{
		Subnets: map[string]*ec2types.Subnet{}, RouteTables: map[string]*ec2types.RouteTable{},
		rtBySubnet: map[string]string{}, SGs: map[string]*ec2types.SecurityGroup{},
		ACLs: map[string]*ec2types.NetworkAcl{}, aclBySubnet: map[string]string{},
		NATs: map[string]*ec2types.NatGateway{}, instances: map[string][]*ec2types.Instance{},
		Have: map[string]bool{},
	}
	if raw.Cluster == nil || raw.Cluster.Cluster == nil {
		return nil, fmt.Errorf("%s: no cluster (want the output of `aws eks describe-cluster --name CLUSTER`)", FileCluster)
	}
	c := raw.Cluster.Cluster
	m.Cluster = str(c.Name)
	m.ClusterARN = str(c.Arn)
	if parts := strings.Split(m.ClusterARN, ":"); len(parts) >= 6 && parts[0] == "arn" {
		m.Partition, m.Region, m.Account = parts[1], parts[3], parts[4]
	}
	if m.Region == "" {
		m.Region = regionFromEndpoint(str(c.Endpoint))
	}
	if m.Partition == "" {
		m.Partition = "aws"
	}
	if vc := c.ResourcesVpcConfig; vc != nil {
		m.VPC = str(vc.VpcId)
		m.ClusterSG = str(vc.ClusterSecurityGroupId)
		m.ClusterSGs = vc.SecurityGroupIds
	}
	m.failed, m.denied, m.truncated = raw.Failed, raw.Denied, raw.Truncated
	m.markHave(raw)
	m.indexNodegroups(raw)
	m.warnMissingFiles()
	m.indexSubnets(raw)
	m.indexRouteTables(raw)
	m.indexEndpoints(raw)
	m.indexSGs(raw)
	m.indexACLs(raw)
	m.indexNATs(raw)
	m.indexPrefixList(raw)
	m.indexVPCAttributes(raw)
	m.indexDHCP(raw)
	if raw.Simulate != nil {
		m.Simulate = raw.Simulate.EvaluationResults
	}
	m.indexInstances(raw)
	m.indexCache(raw)
	m.buildNodeSubnets(raw)
	return m, nil
}

func regionFromEndpoint(ep string) string {
	// https://ABC.gr7.us-east-1.eks.amazonaws.com
	parts := strings.Split(strings.TrimPrefix(ep, "https://"), ".")
	for i, p := range parts {
		if p == "eks" && i > 0 {
			return parts[i-1]
		}
	}
	return ""
}

func (m *Model) markHave(raw *Raw) {
	set := func(name string, ok bool) {
		if ok {
			m.Have[name] = true
		}
	}
	set(FileCluster, raw.Cluster != nil)
	set(FileNodegroups, raw.Nodegroups != nil)
	set(FileInstances, raw.Instances != nil)
	set(FileSubnets, raw.Subnets != nil)
	set(FileRouteTables, raw.RouteTables != nil)
	set(FileEndpoints, raw.Endpoints != nil)
	set(FileSecurityGroups, raw.SecurityGroups != nil)
	set(FileNetworkACLs, raw.NetworkACLs != nil)
	set(FileNATGateways, raw.NATGateways != nil)
	set(FilePrefixLists, raw.PrefixLists != nil)
	set(FileDNSSupport, raw.DNSSupport != nil)
	set(FileDNSHostnames, raw.DNSHostnames != nil)
	set(FileDHCPOptions, raw.DHCPOptions != nil)
	set(FileVPCs, raw.VPCs != nil)
	set(FileSimulate, raw.Simulate != nil)
	set(FileCacheRules, raw.CacheRules != nil)
	set(FileTemplates, raw.Templates != nil)
	set(FileRepositories, raw.Repositories != nil)
	set(FileRegistryPolicy, raw.RegistryPolicy != nil)
	set(FileSecret, raw.Secret != nil)
}

// warnMissingFiles warns once per optional file not given, with the
// command that writes it.
func (m *Model) warnMissingFiles() {
	for _, f := range Files {
		if f.Required || strings.Contains(f.Name, "NAME") || m.Have[f.Name] {
			continue
		}
		if f.Name == FileVPCs {
			if _, failed := m.failed[f.Name]; !failed {
				m.Warnings = append(m.Warnings, warnFile(f.Name, f.Name+" not given: which DHCP option set and CIDRs are the VPC's is inferred from the other files",
					CommandFor(f.Name, m.Cluster, m.VPC, m.Region, m.NodeRoleARN)+" --output json > "+f.Name))
				continue
			}
		}
		m.warnMissing(f.Name)
	}
	for _, name := range sortedKeys(m.truncated) {
		m.Warnings = append(m.Warnings, warnFile(name, name+"'s last page names a next one (NextToken): the objects of the pages not given are unknown",
			CommandFor(name, m.Cluster, m.VPC, m.Region, m.NodeRoleARN)+" --output json > "+name))
	}
}

func (m *Model) warnMissing(name string) {
	if e, ok := m.failed[name]; ok {
		w := warnFile(name, "the call for "+name+" failed: "+e+"; the checks that read it warn instead of deciding",
			CommandFor(name, m.Cluster, m.VPC, m.Region, m.NodeRoleARN))
		w.Permission = m.denied[name]
		m.Warnings = append(m.Warnings, w)
		return
	}
	m.Warnings = append(m.Warnings, warnFile(name, name+" not given: the checks that read it warn instead of deciding",
		CommandFor(name, m.Cluster, m.VPC, m.Region, m.NodeRoleARN)+" --output json > "+name))
}

func (m *Model) dup(file, kind, id string) {
	m.Warnings = append(m.Warnings, warnFile(file, fmt.Sprintf("duplicate %s %s: the first one is used", kind, id), ""))
}

func (m *Model) indexNodegroups(raw *Raw) {
	seen := map[string]bool{}
	for _, ng := range raw.NodegroupDetails {
		if ng == nil || ng.Nodegroup == nil {
			continue
		}
		name := str(ng.Nodegroup.NodegroupName)
		if seen[name] {
			m.dup(NodegroupFile(name), "nodegroup", name)
			continue
		}
		seen[name] = true
		m.Nodegroups = append(m.Nodegroups, ng.Nodegroup)
		if r := str(ng.Nodegroup.NodeRole); r != "" && !slices.Contains(m.NodeRoles, r) {
			m.NodeRoles = append(m.NodeRoles, r)
		}
	}
	if len(m.NodeRoles) > 0 {
		m.NodeRoleARN = m.NodeRoles[0]
	}
	if raw.Nodegroups != nil {
		for _, n := range raw.Nodegroups.Nodegroups {
			if !seen[n] {
				f := NodegroupFile(n)
				m.Warnings = append(m.Warnings, warnFile(f, fmt.Sprintf("nodegroup %s is listed in %s but %s is not given: its subnets are known only from its instances", n, FileNodegroups, f),
					CommandFor(f, m.Cluster, m.VPC, m.Region, "")+" --output json > "+f))
			}
		}
	}
}

func (m *Model) indexSubnets(raw *Raw) {
	for i := range raw.Subnets.Subnets {
		s := &raw.Subnets.Subnets[i]
		id := str(s.SubnetId)
		if id == "" {
			continue
		}
		if _, ok := m.Subnets[id]; ok {
			m.dup(FileSubnets, "subnet", id)
			continue
		}
		m.Subnets[id] = s
		if m.VPC == "" {
			m.VPC = str(s.VpcId)
		}
	}
}

func (m *Model) indexRouteTables(raw *Raw) {
	if raw.RouteTables == nil {
		return
	}
	for i := range raw.RouteTables.RouteTables {
		rt := &raw.RouteTables.RouteTables[i]
		id := str(rt.RouteTableId)
		if _, ok := m.RouteTables[id]; ok {
			m.dup(FileRouteTables, "route table", id)
			continue
		}
		m.RouteTables[id] = rt
		for _, a := range rt.Associations {
			if a.AssociationState != nil && a.AssociationState.State != "" && a.AssociationState.State != ec2types.RouteTableAssociationStateCodeAssociated {
				continue
			}
			// A folder written without the VPC filter holds other
			// VPCs' main tables: only the cluster VPC's is the fallback.
			if a.Main != nil && *a.Main && m.inVPC(rt.VpcId) {
				m.MainRT = id
			}
			if sid := str(a.SubnetId); sid != "" {
				if prev, ok := m.rtBySubnet[sid]; ok && prev != id {
					m.Warnings = append(m.Warnings, warnFile(FileRouteTables, fmt.Sprintf("subnet %s is associated with both %s and %s: %s is used", sid, prev, id, prev), ""))
					continue
				}
				m.rtBySubnet[sid] = id
			}
		}
	}
}

// inVPC says whether an object's VpcId is the cluster's VPC (an object
// without one, or a model without a VPC, is taken as in it).
func (m *Model) inVPC(vpc *string) bool {
	return m.VPC == "" || vpc == nil || *vpc == "" || *vpc == m.VPC
}

func (m *Model) indexEndpoints(raw *Raw) {
	if raw.Endpoints == nil {
		return
	}
	seen := map[string]bool{}
	for i := range raw.Endpoints.VpcEndpoints {
		e := &raw.Endpoints.VpcEndpoints[i]
		id := str(e.VpcEndpointId)
		if seen[id] {
			m.dup(FileEndpoints, "VPC endpoint", id)
			continue
		}
		seen[id] = true
		if m.VPC != "" && e.VpcId != nil && str(e.VpcId) != m.VPC {
			continue
		}
		m.Endpoints = append(m.Endpoints, e)
	}
}

func (m *Model) indexSGs(raw *Raw) {
	if raw.SecurityGroups == nil {
		return
	}
	for i := range raw.SecurityGroups.SecurityGroups {
		g := &raw.SecurityGroups.SecurityGroups[i]
		id := str(g.GroupId)
		if _, ok := m.SGs[id]; ok {
			m.dup(FileSecurityGroups, "security group", id)
			continue
		}
		m.SGs[id] = g
	}
}

func (m *Model) indexACLs(raw *Raw) {
	if raw.NetworkACLs == nil {
		return
	}
	for i := range raw.NetworkACLs.NetworkAcls {
		a := &raw.NetworkACLs.NetworkAcls[i]
		id := str(a.NetworkAclId)
		if _, ok := m.ACLs[id]; ok {
			m.dup(FileNetworkACLs, "network ACL", id)
			continue
		}
		m.ACLs[id] = a
		// Every VPC has a default ACL: only the cluster VPC's is the
		// fallback for a subnet with no association in the file.
		if a.IsDefault != nil && *a.IsDefault && m.inVPC(a.VpcId) {
			m.DefaultACL = id
		}
		for _, as := range a.Associations {
			if sid := str(as.SubnetId); sid != "" {
				m.aclBySubnet[sid] = id
			}
		}
	}
}

func (m *Model) indexNATs(raw *Raw) {
	if raw.NATGateways == nil {
		return
	}
	for i := range raw.NATGateways.NatGateways {
		n := &raw.NATGateways.NatGateways[i]
		id := str(n.NatGatewayId)
		if prev, ok := m.NATs[id]; ok {
			// describe-nat-gateways keeps deleted gateways for a while;
			// prefer the live record.
			if prev.State == ec2types.NatGatewayStateDeleted {
				m.NATs[id] = n
			}
			continue
		}
		m.NATs[id] = n
	}
}

func (m *Model) indexPrefixList(raw *Raw) {
	if raw.PrefixLists == nil {
		return
	}
	want := m.ServiceName(SvcS3)
	for i := range raw.PrefixLists.PrefixLists {
		pl := &raw.PrefixLists.PrefixLists[i]
		if str(pl.PrefixListName) != want && m.S3PL != nil {
			continue
		}
		if str(pl.PrefixListName) == want || m.S3PL == nil && strings.HasSuffix(str(pl.PrefixListName), ".s3") {
			m.S3PL = pl
		}
	}
	if m.S3PL == nil {
		return
	}
	m.S3PLCIDRs = nil
	for _, c := range m.S3PL.Cidrs {
		if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() {
			m.S3PLCIDRs = append(m.S3PLCIDRs, p.Masked())
		}
	}
}

func (m *Model) indexVPCAttributes(raw *Raw) {
	if raw.DNSSupport != nil && raw.DNSSupport.EnableDnsSupport != nil {
		m.DNSSupport = raw.DNSSupport.EnableDnsSupport.Value
	} else if raw.DNSSupport != nil {
		m.Warnings = append(m.Warnings, warnFile(FileDNSSupport, "no EnableDnsSupport member (is it the enableDnsHostnames output?)", ""))
	}
	if raw.DNSHostnames != nil && raw.DNSHostnames.EnableDnsHostnames != nil {
		m.DNSHosts = raw.DNSHostnames.EnableDnsHostnames.Value
	} else if raw.DNSHostnames != nil {
		m.Warnings = append(m.Warnings, warnFile(FileDNSHostnames, "no EnableDnsHostnames member (is it the enableDnsSupport output?)", ""))
	}
	if raw.VPCs != nil {
		for _, v := range raw.VPCs.Vpcs {
			if str(v.VpcId) != m.VPC {
				continue
			}
			for _, a := range v.CidrBlockAssociationSet {
				if p, err := netip.ParsePrefix(str(a.CidrBlock)); err == nil {
					m.VPCCIDRs = append(m.VPCCIDRs, p.Masked())
				}
			}
			if len(m.VPCCIDRs) == 0 {
				if p, err := netip.ParsePrefix(str(v.CidrBlock)); err == nil {
					m.VPCCIDRs = append(m.VPCCIDRs, p.Masked())
				}
			}
		}
	}
}

func (m *Model) indexDHCP(raw *Raw) {
	if raw.DHCPOptions == nil {
		return
	}
	sets := raw.DHCPOptions.DhcpOptions
	want := ""
	if raw.VPCs != nil {
		for _, v := range raw.VPCs.Vpcs {
			if str(v.VpcId) == m.VPC {
				want = str(v.DhcpOptionsId)
			}
		}
	}
	switch {
	case want == "default":
		m.DHCPNote = "the VPC uses no DHCP option set (\"default\"): AmazonProvidedDNS"
	case want != "":
		for i := range sets {
			if str(sets[i].DhcpOptionsId) == want {
				m.DHCP = &sets[i]
			}
		}
		if m.DHCP == nil {
			m.DHCPNote = fmt.Sprintf("the VPC's option set %s is not in %s", want, FileDHCPOptions)
		}
	case len(sets) == 1:
		m.DHCP = &sets[0]
	case len(sets) == 0:
		m.DHCPNote = "no DHCP option sets in the region: AmazonProvidedDNS"
	default:
		// Which set is the VPC's is only in describe-vpcs; decide when they
		// agree on name servers.
		first := dnsServers(&sets[0])
		same := true
		for i := range sets[1:] {
			if strings.Join(dnsServers(&sets[i+1]), ",") != strings.Join(first, ",") {
				same = false
			}
		}
		if same {
			m.DHCP = &sets[0]
		} else {
			m.DHCPNote = fmt.Sprintf("%d DHCP option sets with different name servers and no %s to say which is the VPC's", len(sets), FileVPCs)
		}
	}
}

func dnsServers(d *ec2types.DhcpOptions) []string {
	var out []string
	for _, c := range d.DhcpConfigurations {
		if str(c.Key) != "domain-name-servers" {
			continue
		}
		for _, v := range c.Values {
			out = append(out, str(v.Value))
		}
	}
	return out
}

func (m *Model) indexInstances(raw *Raw) {
	if raw.Instances == nil {
		return
	}
	seen := map[string]bool{}
	var foreign []string
	for ri := range raw.Instances.Reservations {
		r := &raw.Instances.Reservations[ri]
		for ii := range r.Instances {
			in := &r.Instances[ii]
			id := str(in.InstanceId)
			if seen[id] {
				m.dup(FileInstances, "instance", id)
				continue
			}
			seen[id] = true
			if in.State != nil && (in.State.Name == ec2types.InstanceStateNameTerminated || in.State.Name == ec2types.InstanceStateNameShuttingDown) {
				continue
			}
			if !m.clusterNode(in) {
				foreign = append(foreign, id)
				continue
			}
			sid := str(in.SubnetId)
			if sid == "" {
				continue
			}
			m.instances[sid] = append(m.instances[sid], in)
		}
	}
	if len(foreign) > 0 {
		m.Warnings = append(m.Warnings, warnFile(FileInstances, fmt.Sprintf("%d instances carry no tag of cluster %s (eks:cluster-name, kubernetes.io/cluster/%s, a nodegroup of it): not counted as its nodes (%s)",
			len(foreign), m.Cluster, m.Cluster, firstN(foreign, 3)), CommandFor(FileInstances, m.Cluster, m.VPC, m.Region, "")+" --output json > "+FileInstances))
	}
}

// clusterNode reports whether an instance is a node of the cluster by its
// own tags (a folder written without the cluster-tag filter holds every
// instance of the VPC): eks:cluster-name (managed nodegroups),
// aws:eks:cluster-name, eks:eks-cluster-name (Karpenter 1.x),
// alpha.eksctl.io/cluster-name (eksctl), kubernetes.io/cluster/CLUSTER
// (owned or shared: self-managed nodes, Karpenter), an eks:nodegroup-name
// of the cluster's nodegroups, or the Auto Scaling group of one.
func (m *Model) clusterNode(in *ec2types.Instance) bool {
	asgs := map[string]bool{}
	groups := map[string]bool{}
	for _, ng := range m.Nodegroups {
		groups[str(ng.NodegroupName)] = true
		if ng.Resources != nil {
			for _, g := range ng.Resources.AutoScalingGroups {
				asgs[str(g.Name)] = true
			}
		}
	}
	for _, t := range in.Tags {
		k, v := str(t.Key), str(t.Value)
		switch {
		case k == "eks:cluster-name" || k == "aws:eks:cluster-name" || k == "eks:eks-cluster-name" || k == "alpha.eksctl.io/cluster-name":
			if v == m.Cluster {
				return true
			}
		case k == "kubernetes.io/cluster/"+m.Cluster && (v == "owned" || v == "shared"):
			return true
		case k == "eks:nodegroup-name" && groups[v], k == "aws:autoscaling:groupName" && asgs[v]:
			return true
		}
	}
	return false
}

// poolOf names an instance's pool: its managed nodegroup, its Karpenter
// node pool, or self-managed.
func poolOf(in *ec2types.Instance) string {
	var karpenter string
	for _, t := range in.Tags {
		switch str(t.Key) {
		case "eks:nodegroup-name":
			return str(t.Value)
		case "karpenter.sh/nodepool", "karpenter.sh/provisioner-name":
			karpenter = "karpenter/" + str(t.Value)
		}
	}
	if karpenter != "" {
		return karpenter
	}
	return "self-managed"
}

func (m *Model) buildNodeSubnets(raw *Raw) {
	byID := map[string]*NodeSubnet{}
	var order []string
	get := func(id, from string) *NodeSubnet {
		if ns, ok := byID[id]; ok {
			return ns
		}
		ns := &NodeSubnet{ID: id}
		byID[id] = ns
		order = append(order, id)
		if s, ok := m.Subnets[id]; ok {
			ns.Subnet = s
			ns.AZ = str(s.AvailabilityZone)
			if p, err := netip.ParsePrefix(str(s.CidrBlock)); err == nil {
				ns.CIDR = p.Masked()
			}
		} else {
			m.Warnings = append(m.Warnings, warnFile(FileSubnets, fmt.Sprintf("subnet %s is referenced by %s but not described in %s", id, from, FileSubnets),
				CommandFor(FileSubnets, m.Cluster, m.VPC, m.Region, "")+" --output json > "+FileSubnets))
		}
		return ns
	}
	for _, ng := range m.Nodegroups {
		name := str(ng.NodegroupName)
		for _, sid := range ng.Subnets {
			ns := get(sid, NodegroupFile(name))
			ns.Pools = appendUnique(ns.Pools, name)
		}
	}
	// Subnets with instances but no nodegroup: self-managed and Karpenter.
	var extra []string
	for sid := range m.instances {
		if _, ok := byID[sid]; !ok {
			extra = append(extra, sid)
		}
	}
	sort.Strings(extra)
	for _, sid := range extra {
		get(sid, FileInstances)
	}
	for _, id := range order {
		ns := byID[id]
		ns.Instances = m.instances[id]
		for _, in := range ns.Instances {
			ns.Pools = appendUnique(ns.Pools, poolOf(in))
		}
		m.resolveTables(ns)
		m.resolveNodes(ns)
		m.NodeSubnets = append(m.NodeSubnets, ns)
	}
}

// resolveTables finds the subnet's route table (its explicit association,
// else the VPC's main table) and network ACL (its association, else the
// VPC's default ACL).
func (m *Model) resolveTables(ns *NodeSubnet) {
	if id, ok := m.rtBySubnet[ns.ID]; ok {
		ns.RouteTable = m.RouteTables[id]
	} else if m.MainRT != "" {
		ns.RouteTable = m.RouteTables[m.MainRT]
		ns.RTMain = true
	}
	if id, ok := m.aclBySubnet[ns.ID]; ok {
		ns.ACL = m.ACLs[id]
	} else if m.DefaultACL != "" {
		ns.ACL = m.ACLs[m.DefaultACL]
	}
}

// resolveNodes lists who sends the pull's packets from the subnet: each
// instance, and for each nodegroup with no instance here the nodes it would
// launch (EKS gives managed nodes the cluster security group unless a launch
// template sets others).
func (m *Model) resolveNodes(ns *NodeSubnet) {
	withInstances := map[string]bool{}
	for _, in := range ns.Instances {
		n := Node{Name: str(in.InstanceId)}
		if d := str(in.PrivateDnsName); d != "" {
			n.Name += " (" + d + ")"
		}
		if a, err := netip.ParseAddr(str(in.PrivateIpAddress)); err == nil {
			n.Prefix = netip.PrefixFrom(a, a.BitLen())
		} else {
			n.Prefix = ns.CIDR
		}
		for _, g := range in.SecurityGroups {
			n.SGs = append(n.SGs, str(g.GroupId))
		}
		ns.Nodes = append(ns.Nodes, n)
		withInstances[poolOf(in)] = true
	}
	for _, ng := range m.Nodegroups {
		name := str(ng.NodegroupName)
		if withInstances[name] || !slices.Contains(ng.Subnets, ns.ID) {
			continue
		}
		n := Node{Name: "new nodes of " + name, Prefix: ns.CIDR}
		if m.ClusterSG != "" {
			n.SGs = append(n.SGs, m.ClusterSG)
		}
		if ng.Resources != nil && ng.Resources.RemoteAccessSecurityGroup != nil {
			n.SGs = append(n.SGs, *ng.Resources.RemoteAccessSecurityGroup)
		}
		ns.Nodes = append(ns.Nodes, n)
	}
}
