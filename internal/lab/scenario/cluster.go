package scenario

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// ClusterSpec is the optional `cluster:` section of a scenario: a real
// Kubernetes control plane on one host of the lab and real kubelets on
// others. docs/lab.md documents every field; the scale-up scenario
// (scenarios/scale-up-new-subnet.yaml) is the worked example.
type ClusterSpec struct {
	// ControlPlane is the host whose namespace runs etcd, kube-apiserver,
	// kube-controller-manager and kube-scheduler (as EKS's control-plane
	// ENIs sit in the VPC). Node hosts need a route to its first address.
	ControlPlane string `json:"controlPlane"`
	// Provider decides the labels and providerID the nodes get: aws (EKS:
	// eks.amazonaws.com/nodegroup, aws:///ZONE/i-...) or azure (AKS:
	// kubernetes.azure.com/agentpool, azure:///subscriptions/...).
	Provider string `json:"provider,omitempty"`
	// PodCIDR is cut into one /24 per node, in creation order (default
	// 10.244.0.0/16). It must not overlap a subnet.
	PodCIDR string `json:"podCIDR,omitempty"`
	// ServiceCIDR is the apiserver's service range (default 10.96.0.0/24).
	ServiceCIDR string `json:"serviceCIDR,omitempty"`
	// Nodes maps a host to the kubelet node it plays.
	Nodes map[string]*ClusterNode `json:"nodes"`
	// Workload is the Deployment the scenario runs (optional).
	Workload *Workload `json:"workload,omitempty"`
	// Expect is what must hold after the workload ran: which nodes fail
	// and what `pullpath explain` says about the cluster.
	Expect *ClusterExpect `json:"expect,omitempty"`
}

// ClusterNode is one kubelet node.
type ClusterNode struct {
	// Name is the Kubernetes node name; default the provider's form
	// (ip-10-0-1-10.REGION.compute.internal, aks-POOL-12345678-vmss00000N).
	Name string `json:"name,omitempty"`
	// Pool is the node group (EKS) or agent pool (AKS) label value.
	Pool string `json:"pool,omitempty"`
	// Zone is topology.kubernetes.io/zone.
	Zone string `json:"zone,omitempty"`
	// Subnet is the pullpath.io/subnet label (default: the host's first
	// subnet, by name).
	Subnet string `json:"subnet,omitempty"`
	// Labels are more node labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Later marks a node that joins after the workload is healthy (the
	// scale-up); the others start with the cluster, by host name.
	Later bool `json:"later,omitempty"`
	// Nameservers and HostsEntries replace node.nameservers and add to
	// node.hostsEntries for this node only (a pool whose resolver cannot
	// see the private zone).
	Nameservers  []string `json:"nameservers,omitempty"`
	HostsEntries []string `json:"hostsEntries,omitempty"`
	// Proxy is this node's containerd proxy environment, as its drop-in
	// gives it (proxy.go); none without it.
	Proxy *NodeProxy `json:"proxy,omitempty"`
	// Mirrors are the mirrors.hosts (by name) this node's certs.d
	// hosts.toml for the registry lists, in this order (mirror.go); none:
	// the node's certs.d has no hosts.toml, and it pulls from the registry.
	Mirrors []string `json:"mirrors,omitempty"`
	// Layout is where this node keeps containerd's config and certs.d:
	// "" (/etc/containerd/config.toml, config_path /etc/containerd/certs.d)
	// or k3s (/var/lib/rancher/k3s/agent/etc/containerd/config.toml with
	// the certs.d beside it), as a sweep Pod mounting the node's /etc and
	// /var/lib finds them (lab/cluster layoutPaths).
	Layout string `json:"layout,omitempty"`
}

// Workload is a Deployment of the registry's image (made runnable by the
// lab: its first layer holds a small static binary that waits), one replica
// per node (required pod anti-affinity on the hostname).
type Workload struct {
	Name      string `json:"name,omitempty"`      // default "app"
	Namespace string `json:"namespace,omitempty"` // default "default"
	// Image is the image the Deployment runs (default the probe's image).
	Image string `json:"image,omitempty"`
	// PrePulled pulls the image through CRI on the first nodes before the
	// Deployment exists, as nodes that have had it for a long time: their
	// replicas start from the cache ("already present on machine").
	PrePulled bool `json:"prePulled,omitempty"`
	// PullSecret gives the Deployment an imagePullSecret with node.credentials
	// instead of the nodes' docker config.json.
	PullSecret bool `json:"pullSecret,omitempty"`
}

// ClusterExpect is what a cluster scenario must show.
type ClusterExpect struct {
	// FailingNodes are the hosts whose replica must fail to pull (the
	// others must run). Empty: every replica runs.
	FailingNodes []string `json:"failingNodes,omitempty"`
	// Explain is what `pullpath explain deployment/NAME` must say.
	Explain *ExplainExpect `json:"explain,omitempty"`
}

// ExplainExpect names fields of explain's report about the workload's
// image (its one group). Empty fields are not checked.
type ExplainExpect struct {
	Pattern     string   `json:"pattern,omitempty"` // subnet | pool | zone | node-age | all-nodes | single-node | ...
	Condition   string   `json:"condition,omitempty"`
	Cause       string   `json:"cause,omitempty"`
	Code        string   `json:"code,omitempty"`
	Stage       string   `json:"stage,omitempty"`
	Endpoint    string   `json:"endpoint,omitempty"`
	SeparatedBy []string `json:"separatedBy,omitempty"` // must be among the group's
	// HealthyEvidence is the evidence every healthy node must carry, e.g.
	// "cached: evidence of nothing".
	HealthyEvidence string `json:"healthyEvidence,omitempty"`
	// Says are phrases the group's verdict must contain.
	Says []string `json:"says,omitempty"`
	// Advises are phrases some line of the group's advice, or of its
	// findings' advice, must contain (a message's own hint, e.g. "DNS64"
	// for an IPv4 address unreachable from an IPv6-only node).
	Advises []string `json:"advises,omitempty"`
	// NoFailures: explain must find no pull failure at all.
	NoFailures bool `json:"noFailures,omitempty"`
	ExitCode   *int `json:"exitCode,omitempty"`
}

var (
	defaultPodCIDR     = netip.MustParsePrefix("10.244.0.0/16")
	defaultServiceCIDR = netip.MustParsePrefix("10.96.0.0/24")
	labelKeyRE         = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRE       = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
	nodeNameRE         = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// ClusterOrder lists the node hosts in creation order: the first nodes by
// host name, then the later ones by host name.
func (c *ClusterSpec) ClusterOrder() []string {
	var first, later []string
	for _, h := range sortedKeys(c.Nodes) {
		if c.Nodes[h] != nil && c.Nodes[h].Later {
			later = append(later, h)
		} else {
			first = append(first, h)
		}
	}
	return append(first, later...)
}

// PodRange is cluster.podCIDR (default 10.244.0.0/16).
func (c *ClusterSpec) PodRange() netip.Prefix {
	if p, err := netip.ParsePrefix(c.PodCIDR); err == nil {
		return p.Masked()
	}
	return defaultPodCIDR
}

// ServiceRange is cluster.serviceCIDR (default 10.96.0.0/24).
func (c *ClusterSpec) ServiceRange() netip.Prefix {
	if p, err := netip.ParsePrefix(c.ServiceCIDR); err == nil {
		return p.Masked()
	}
	return defaultServiceCIDR
}

// APIServiceIP is the kubernetes Service's ClusterIP: the service range's
// first address, as the apiserver allocates it.
func (c *ClusterSpec) APIServiceIP() netip.Addr { return c.ServiceRange().Masked().Addr().Next() }

// DNSServiceIP is the cluster DNS address the kubelets are given: the
// service range's tenth address (10.96.0.10 by default, as kubeadm's).
func (c *ClusterSpec) DNSServiceIP() netip.Addr {
	a := c.APIServiceIP()
	for range 9 {
		a = a.Next()
	}
	return a
}

// NodePodCIDR is the /24 of the i-th node in creation order.
func (c *ClusterSpec) NodePodCIDR(i int) netip.Prefix {
	b := c.PodRange().Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n += uint32(i) << 8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), 24)
}

// defaultPodCIDR6 holds the pod ranges of IPv6-only nodes: one /64 per
// node, the i-th node's fd00:10:244:i::/64 (host-local gives its Pods
// IPv6 addresses only, as an IPv6 cluster's VPC CNI does from the node's
// prefix).
var defaultPodCIDR6 = netip.MustParsePrefix("fd00:10:244::/56")

// NodePodCIDR6 is the IPv6 pod range of the i-th node in creation order,
// for a node whose address is IPv6 (an IPv6-only node has no IPv4 at all,
// not even on its cni0 bridge).
func (c *ClusterSpec) NodePodCIDR6(i int) netip.Prefix {
	b := defaultPodCIDR6.Addr().As16()
	b[6], b[7] = byte(i>>8), byte(i)
	return netip.PrefixFrom(netip.AddrFrom16(b), 64)
}

// NodeIP is the address a node host's kubelet registers (--node-ip): its
// first address, IPv4 or, on an IPv6-only host, IPv6.
func (t *Scenario) NodeIP(host string) netip.Addr {
	if a := t.HostAddrs(host); len(a) > 0 {
		return a[0]
	}
	return netip.Addr{}
}

// APIServerAddr is the control plane's address a node of family ip
// reaches the apiserver at: its first address of that family, else its
// first address.
func (t *Scenario) APIServerAddr(ip netip.Addr) netip.Addr {
	addrs := t.HostAddrs(t.Cluster.ControlPlane)
	for _, a := range addrs {
		if a.Is4() == ip.Is4() {
			return a
		}
	}
	if len(addrs) > 0 {
		return addrs[0]
	}
	return netip.Addr{}
}

// NodeName is the Kubernetes name of a node host.
func (t *Scenario) NodeName(host string) string {
	c := t.Cluster
	n := c.Nodes[host]
	if n != nil && n.Name != "" {
		return n.Name
	}
	ip := ""
	if a := t.HostAddrs(host); len(a) > 0 {
		ip = a[0].String()
	}
	if c.Provider == "azure" {
		idx := 0
		for i, h := range c.ClusterOrder() {
			if h == host {
				idx = i
			}
		}
		return fmt.Sprintf("aks-%s-12345678-vmss%06d", strings.ToLower(n.pool(host)), idx)
	}
	if a := t.NodeIP(host); a.Is6() {
		// an IPv6 address has no ip-name: EKS's IPv6 nodes are named by
		// their instance (resource-based hostnames)
		return t.instanceID(host) + "." + t.region() + ".compute.internal"
	}
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + t.region() + ".compute.internal"
}

// instanceID is the EC2 instance ID of a node host (in its providerID).
func (t *Scenario) instanceID(host string) string {
	return fmt.Sprintf("i-0%015x", Seed(t.Name+"/"+host)&0xfffffffffffffff)
}

func (n *ClusterNode) pool(host string) string {
	if n != nil && n.Pool != "" {
		return n.Pool
	}
	return "default"
}

// region is the zone without its last letter (ap-northeast-2a ->
// ap-northeast-2), else a fixed one.
func (t *Scenario) region() string {
	for _, h := range sortedKeys(t.Cluster.Nodes) {
		if n := t.Cluster.Nodes[h]; n != nil && len(n.Zone) > 1 {
			z := n.Zone
			if c := z[len(z)-1]; c >= 'a' && c <= 'z' {
				return z[:len(z)-1]
			}
			if i := strings.LastIndexByte(z, '-'); i > 0 {
				return z[:i]
			}
		}
	}
	if t.Cluster.Provider == "azure" {
		return "koreacentral"
	}
	return "us-east-1"
}

// NodeLabels are the labels a node registers with, as its platform sets them.
func (t *Scenario) NodeLabels(host string) map[string]string {
	c := t.Cluster
	n := c.Nodes[host]
	l := map[string]string{}
	switch c.Provider {
	case "azure":
		l["kubernetes.azure.com/agentpool"] = n.pool(host)
		l["agentpool"] = n.pool(host)
		l["node.kubernetes.io/instance-type"] = "Standard_D4s_v5"
	default:
		l["eks.amazonaws.com/nodegroup"] = n.pool(host)
		l["node.kubernetes.io/instance-type"] = "m6i.large"
	}
	if n.Zone != "" {
		l["topology.kubernetes.io/zone"] = n.Zone
		l["topology.kubernetes.io/region"] = t.region()
	}
	l["pullpath.io/subnet"] = t.nodeSubnet(host)
	for k, v := range n.Labels {
		l[k] = v
	}
	return l
}

// nodeSubnet is the node's subnet label value.
func (t *Scenario) nodeSubnet(host string) string {
	if n := t.Cluster.Nodes[host]; n != nil && n.Subnet != "" {
		return n.Subnet
	}
	if h := t.Hosts[host]; h != nil {
		if ks := sortedKeys(h.Interfaces); len(ks) > 0 {
			return ks[0]
		}
	}
	return ""
}

// ProviderID is spec.providerID in the cloud's form.
func (t *Scenario) ProviderID(host string) string {
	c := t.Cluster
	n := c.Nodes[host]
	idx := 0
	for i, h := range c.ClusterOrder() {
		if h == host {
			idx = i
		}
	}
	if c.Provider == "azure" {
		return fmt.Sprintf("azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_lab_lab_%s/providers/Microsoft.Compute/virtualMachineScaleSets/aks-%s-12345678-vmss/virtualMachines/%d",
			t.region(), strings.ToLower(n.pool(host)), idx)
	}
	zone := n.Zone
	if zone == "" {
		zone = t.region() + "a"
	}
	return fmt.Sprintf("aws:///%s/%s", zone, t.instanceID(host))
}

// cluster checks the cluster section; called by Validate.
func (v *validator) cluster() {
	c := v.t.Cluster
	if c == nil {
		return
	}
	if !v.clusterControlPlane() || !v.clusterRanges() {
		return
	}
	if len(c.Nodes) == 0 {
		v.fail("cluster.nodes", "want at least one node host")
	}
	names := map[string]string{}
	first := 0
	for _, h := range sortedKeys(c.Nodes) {
		if v.clusterNode(h, names) && !c.Nodes[h].Later {
			first++
		}
	}
	if len(c.Nodes) > 0 && first == 0 {
		v.fail("cluster.nodes", "every node is later: at least one must start with the cluster")
	}
	v.clusterMirrors()
	v.clusterWorkload()
}

// clusterControlPlane checks the control plane's host and the provider;
// false when there is no control plane to go on with.
func (v *validator) clusterControlPlane() bool {
	t, c := v.t, v.t.Cluster
	if c.ControlPlane == "" {
		v.fail("cluster.controlPlane", "a cluster needs a control plane: name the host that runs etcd and kube-apiserver (e.g. controlPlane: cp)")
		return false
	}
	if _, ok := t.Hosts[c.ControlPlane]; !ok {
		v.fail("cluster.controlPlane", "no such host %q", c.ControlPlane)
		return false
	}
	if len(t.HostAddrs(c.ControlPlane)) == 0 {
		v.fail("cluster.controlPlane", "host %s has no address for the apiserver", c.ControlPlane)
	}
	if len(t.RoutedSubnets(c.ControlPlane)) > 0 {
		v.fail("cluster.controlPlane", "host %s routes subnets; give the control plane its own host with an interface", c.ControlPlane)
	}
	switch c.Provider {
	case "", "aws", "azure":
	default:
		v.fail("cluster.provider", "want aws or azure, got %q", c.Provider)
	}
	return true
}

// clusterRanges checks the pod and service ranges: parsed, large enough,
// apart from each other, the subnets and the lab's internet; false when
// one does not parse.
func (v *validator) clusterRanges() bool {
	t, c := v.t, v.t.Cluster
	for _, x := range []struct{ f, s string }{{"cluster.podCIDR", c.PodCIDR}, {"cluster.serviceCIDR", c.ServiceCIDR}} {
		if x.s == "" {
			continue
		}
		p, err := netip.ParsePrefix(x.s)
		if err != nil || !p.Addr().Is4() || p.Masked() != p {
			v.fail(x.f, "want an IPv4 CIDR without host bits such as 10.244.0.0/16, got %q", x.s)
			return false
		}
	}
	ranges := map[string]netip.Prefix{"cluster.podCIDR": c.PodRange(), "cluster.serviceCIDR": c.ServiceRange()}
	if c.PodRange().Bits() > 24-bitsFor(len(c.Nodes)) {
		v.fail("cluster.podCIDR", "%s is too small for %d nodes of one /24 each", c.PodRange(), len(c.Nodes))
	}
	if c.PodRange().Overlaps(c.ServiceRange()) {
		v.fail("cluster.podCIDR", "%s overlaps cluster.serviceCIDR %s", c.PodRange(), c.ServiceRange())
	}
	for _, f := range sortedKeys(ranges) {
		p := ranges[f]
		for _, sn := range sortedKeys(t.Subnets) {
			if s := t.Subnets[sn]; s != nil && s.Prefix().IsValid() && s.Prefix().Overlaps(p) {
				v.fail(f, "%s overlaps subnet %s (%s): pod and service ranges must be apart from the subnets", p, sn, s.Prefix())
			}
		}
		if overlapsInternet(p) {
			v.fail(f, "%s overlaps the lab's internet ranges", p)
		}
	}
	return true
}

// clusterNode checks one node host (names holds the node names seen);
// false when the host cannot be a node at all.
func (v *validator) clusterNode(h string, names map[string]string) bool {
	t, c := v.t, v.t.Cluster
	f := "cluster.nodes." + h
	n := c.Nodes[h]
	if n == nil {
		n = &ClusterNode{}
		c.Nodes[h] = n
	}
	if _, ok := t.Hosts[h]; !ok {
		v.fail(f, "no such host %q", h)
		return false
	}
	if h == c.ControlPlane {
		v.fail(f, "host %s is the control plane; nodes need their own hosts", h)
	}
	if len(t.RoutedSubnets(h)) > 0 {
		v.fail(f, "host %s routes subnets; a node is a host with interfaces only", h)
	}
	if len(t.Hosts[h].Interfaces) == 0 {
		v.fail(f, "host %s has no interface", h)
		return false
	}
	name := t.NodeName(h)
	if n.Name != "" && (!nodeNameRE.MatchString(n.Name) || len(n.Name) > 63) {
		v.fail(f+".name", "want a DNS-1123 name of at most 63 characters, got %q", n.Name)
	}
	if other, dup := names[name]; dup {
		v.fail(f+".name", "node name %q is also the name of node host %s; node names must be unique", name, other)
	}
	names[name] = h
	for k, val := range t.NodeLabels(h) {
		if !labelKeyRE.MatchString(k) || len(k) > 253 {
			v.fail(f+".labels", "label key %q is not a valid Kubernetes label key", k)
		}
		if !labelValueRE.MatchString(val) || len(val) > 63 {
			v.fail(f+".labels", "label %s: value %q is not a valid label value (63 letters, digits, -_.)", k, val)
		}
	}
	for i, ns := range n.Nameservers {
		if a, err := netip.ParseAddr(ns); err != nil || !plainAddr(a) {
			v.fail(fmt.Sprintf("%s.nameservers[%d]", f, i), "want an IPv4 or IPv6 address, got %q", ns)
		}
	}
	// the kubelet reaches the apiserver in its node address's family
	if ip := t.NodeIP(h); ip.IsValid() && t.APIServerAddr(ip).Is4() != ip.Is4() {
		v.fail(f, "host %s's node address %s is %s and control plane %s has no %s address for its kubelet", h, ip, familyName(ip), c.ControlPlane, familyName(ip))
	}
	if ip := t.NodeIP(h); ip.Is6() {
		for _, sn := range sortedKeys(t.Subnets) {
			if s := t.Subnets[sn]; s != nil && s.Prefix().IsValid() && s.Prefix().Overlaps(defaultPodCIDR6) {
				v.fail(f, "IPv6-only node %s's pods take %s, which overlaps subnet %s (%s)", h, defaultPodCIDR6, sn, s.Prefix())
			}
		}
	}
	for i, line := range n.HostsEntries {
		fs := strings.Fields(line)
		if _, err := netip.ParseAddr(firstOr(fs)); len(fs) < 2 || err != nil {
			v.fail(fmt.Sprintf("%s.hostsEntries[%d]", f, i), "want \"ADDRESS NAME...\", got %q", line)
		}
	}
	return true
}

// clusterWorkload checks the workload and the expectations on it.
func (v *validator) clusterWorkload() {
	t, c := v.t, v.t.Cluster
	if w := c.Workload; w != nil {
		if w.Name != "" && !nodeNameRE.MatchString(w.Name) {
			v.fail("cluster.workload.name", "want a DNS-1123 name, got %q", w.Name)
		}
		if w.Namespace != "" && !nodeNameRE.MatchString(w.Namespace) {
			v.fail("cluster.workload.namespace", "want a DNS-1123 name, got %q", w.Namespace)
		}
		if w.PullSecret && t.Node.Credentials == nil {
			v.fail("cluster.workload.pullSecret", "a pull secret needs node.credentials")
		}
	}
	if e := c.Expect; e != nil {
		for i, h := range e.FailingNodes {
			if _, ok := c.Nodes[h]; !ok {
				v.fail(fmt.Sprintf("cluster.expect.failingNodes[%d]", i), "no such node host %q", h)
			}
		}
		if e.FailingNodes != nil && c.Workload == nil {
			v.fail("cluster.expect", "expectations need a workload")
		}
	}
}

func firstOr(fs []string) string {
	if len(fs) == 0 {
		return ""
	}
	return fs[0]
}

// bitsFor is the number of bits that count n items.
func bitsFor(n int) int {
	b := 0
	for (1 << b) < n {
		b++
	}
	return b
}
