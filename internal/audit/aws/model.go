package aws

import (
	"net/netip"
	"slices"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/pullpath/pullpath/internal/report"
)

// Model is the account, indexed once for the checks.
type Model struct {
	Cluster     string
	ClusterARN  string
	Region      string
	Account     string
	Partition   string // aws, aws-cn, aws-us-gov
	VPC         string
	VPCCIDRs    []netip.Prefix
	ClusterSG   string   // the EKS cluster security group
	ClusterSGs  []string // the cluster's additional security groups
	Nodegroups  []*ekstypes.Nodegroup
	NodeRoleARN string // the role the simulation file is for (the first nodegroup's)
	NodeRoles   []string
	// RegistryAccount is the account of the image's registry when it is
	// not the cluster's (cross-account pulls).
	RegistryAccount string
	// RegistryDualStack: the image names ECR's dual-stack registry name
	// (ACCOUNT.dkr-ecr.REGION.on.aws), which has AAAA records and which
	// AWS PrivateLink does not serve (ECR's "Making requests" page).
	RegistryDualStack bool

	Subnets     map[string]*ec2types.Subnet
	RouteTables map[string]*ec2types.RouteTable
	rtBySubnet  map[string]string
	MainRT      string
	Endpoints   []*ec2types.VpcEndpoint
	SGs         map[string]*ec2types.SecurityGroup
	ACLs        map[string]*ec2types.NetworkAcl
	aclBySubnet map[string]string
	DefaultACL  string
	NATs        map[string]*ec2types.NatGateway
	S3PL        *ec2types.PrefixList
	S3PLCIDRs   []netip.Prefix
	DNSSupport  *bool
	DNSHosts    *bool
	DHCP        *ec2types.DhcpOptions
	DHCPNote    string // why DHCP is undecided when it is
	Simulate    []iamtypes.EvaluationResult
	instances   map[string][]*ec2types.Instance // by subnet

	// NodeSubnets are the subnets with nodes or nodegroups, in a stable
	// order (nodegroup subnets first, as the nodegroups list them).
	NodeSubnets []*NodeSubnet
	// Have says which contract files were given.
	Have      map[string]bool
	Warnings  []report.AuditWarning
	failed    map[string]string
	denied    map[string]string // by file, the IAM action a live call was refused for
	truncated map[string]bool   // by file: the last page names a next one
	// asked are the files not given that the running check asked for
	// (audit.Inputs): a check never fails on a file it did not have.
	asked []string
	// the ECR pull-through cache (cache.go)
	cacheModel
}

// BeginCheck, Absent and Collect make the model an audit.Inputs.
func (m *Model) BeginCheck()                { m.asked = m.asked[:0] }
func (m *Model) Absent() []string           { return m.asked }
func (m *Model) Collect(file string) string { return m.command(file) + " --output json > " + file }

// WarnsLean makes the model an audit.Leaning: a warn keeps the direction
// it leans (a DNS warn is a DNS risk).
func (m *Model) WarnsLean() bool { return true }

// given reports whether a contract file was given; when it was not, the
// running check has asked for it (and may not fail on its absence).
func (m *Model) given(file string) bool {
	if m.Have[file] {
		return true
	}
	m.note(file)
	return false
}

func (m *Model) note(files ...string) {
	for _, f := range files {
		if !slices.Contains(m.asked, f) {
			m.asked = append(m.asked, f)
		}
	}
}

// NodeSubnet is one subnet that has (or will have) nodes.
type NodeSubnet struct {
	ID         string
	Subnet     *ec2types.Subnet // nil: referenced but not described
	CIDR       netip.Prefix
	AZ         string
	Pools      []string
	Instances  []*ec2types.Instance
	RouteTable *ec2types.RouteTable
	RTMain     bool // no explicit association: the VPC's main table
	ACL        *ec2types.NetworkAcl
	Nodes      []Node // who sends the pull's packets, for the security-group checks
	paths      map[string]*hostPath
}

// Node is one sender of a pull's packets in a subnet: a running instance
// (its private address, its security groups), or, where a nodegroup has no
// instance yet, the nodes it would launch (the subnet's CIDR, the groups
// EKS gives them).
type Node struct {
	Name   string // i-0abc (ip-10-0-3-17.ec2.internal) or "new nodes of ng-spot"
	Prefix netip.Prefix
	SGs    []string
}

// Services of a pull.
const (
	SvcECRAPI = "ecr.api"
	SvcECRDKR = "ecr.dkr"
	SvcS3     = "s3"
)

// Hosts of a pull in the model's region.
func (m *Model) Host(svc string) string {
	d := "amazonaws.com"
	if m.Partition == "aws-cn" {
		d = "amazonaws.com.cn"
	}
	switch svc {
	case SvcECRAPI:
		return "api.ecr." + m.Region + "." + d
	case SvcECRDKR:
		acct := m.Account
		if m.RegistryAccount != "" {
			acct = m.RegistryAccount
		}
		if acct == "" {
			acct = "ACCOUNT"
		}
		if m.RegistryDualStack {
			ds := "on.aws"
			if m.Partition == "aws-cn" {
				ds = "on.amazonwebservices.com.cn"
			}
			return acct + ".dkr-ecr." + m.Region + "." + ds
		}
		return acct + ".dkr.ecr." + m.Region + "." + d
	}
	return m.LayerBucket() + ".s3." + m.Region + "." + d
}

// LayerBucket is the S3 bucket ECR serves layers from.
func (m *Model) LayerBucket() string { return "prod-" + m.Region + "-starport-layer-bucket" }

// ServiceName is the VPC endpoint service name of svc.
func (m *Model) ServiceName(svc string) string {
	p := "com.amazonaws."
	if m.Partition == "aws-cn" {
		p = "cn.com.amazonaws."
	}
	return p + m.Region + "." + svc
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func appendUnique(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// endpointsFor are the VPC's endpoints of a service and type.
func (m *Model) endpointsFor(svc string, typ ec2types.VpcEndpointType) []*ec2types.VpcEndpoint {
	m.given(FileEndpoints)
	want := m.ServiceName(svc)
	var out []*ec2types.VpcEndpoint
	for _, e := range m.Endpoints {
		if str(e.ServiceName) == want && e.VpcEndpointType == typ {
			out = append(out, e)
		}
	}
	return out
}

// subnetAZ is the AZ of any described subnet.
func (m *Model) subnetAZ(id string) string {
	if s, ok := m.Subnets[id]; ok {
		return str(s.AvailabilityZone)
	}
	return ""
}

func (m *Model) subnetCIDR(id string) (netip.Prefix, bool) {
	if s, ok := m.Subnets[id]; ok {
		if p, err := netip.ParsePrefix(str(s.CidrBlock)); err == nil {
			return p.Masked(), true
		}
	}
	return netip.Prefix{}, false
}

// aclOf is the network ACL of any subnet.
func (m *Model) aclOf(subnet string) *ec2types.NetworkAcl {
	m.given(FileNetworkACLs)
	if id, ok := m.aclBySubnet[subnet]; ok {
		return m.ACLs[id]
	}
	if m.DefaultACL != "" {
		return m.ACLs[m.DefaultACL]
	}
	return nil
}

// routeTableOf is the route table of any subnet, and whether it is the main
// one by fallback.
func (m *Model) routeTableOf(subnet string) (*ec2types.RouteTable, bool) {
	m.given(FileRouteTables)
	if id, ok := m.rtBySubnet[subnet]; ok {
		return m.RouteTables[id], false
	}
	if m.MainRT != "" {
		return m.RouteTables[m.MainRT], true
	}
	return nil, false
}
