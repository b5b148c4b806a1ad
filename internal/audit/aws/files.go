// Package aws audits the node path of an EKS cluster to ECR and S3, subnet
// by subnet, from the cloud's configuration: live through the AWS SDK for Go
// v2, or offline from a folder of verbatim AWS CLI v2 JSON outputs. Both
// fill one Raw (the SDK's own types), one Model is built from it and one set
// of checks reads the model; no check calls an API.
//
// Contract (docs/aws.md): one file per command, named as in Files.
package aws

import "strings"

// A File is one command's output in the offline folder.
type File struct {
	Name     string // eks-describe-cluster.json
	Command  string // the AWS CLI command that writes it, with CLUSTER, VPC, REGION, NAME, NODE_ROLE_ARN placeholders
	Key      string // the top-level member the output must hold ("cluster", "Subnets")
	Required bool   // without it the audit cannot start
}

// Files of the offline contract, in the order collect writes them.
// eks-describe-nodegroup-NAME.json is one file per nodegroup.
var Files = []File{
	{"eks-describe-cluster.json", "aws eks describe-cluster --name CLUSTER", "cluster", true},
	{"eks-list-nodegroups.json", "aws eks list-nodegroups --cluster-name CLUSTER", "nodegroups", false},
	{"eks-describe-nodegroup-NAME.json", "aws eks describe-nodegroup --cluster-name CLUSTER --nodegroup-name NAME", "nodegroup", false},
	{"ec2-describe-instances.json", "aws ec2 describe-instances --filters Name=tag:eks:cluster-name,Values=CLUSTER", "Reservations", false},
	{"ec2-describe-subnets.json", "aws ec2 describe-subnets --filters Name=vpc-id,Values=VPC", "Subnets", true},
	{"ec2-describe-route-tables.json", "aws ec2 describe-route-tables --filters Name=vpc-id,Values=VPC", "RouteTables", false},
	{"ec2-describe-vpc-endpoints.json", "aws ec2 describe-vpc-endpoints --filters Name=vpc-id,Values=VPC", "VpcEndpoints", false},
	{"ec2-describe-security-groups.json", "aws ec2 describe-security-groups --filters Name=vpc-id,Values=VPC", "SecurityGroups", false},
	{"ec2-describe-network-acls.json", "aws ec2 describe-network-acls --filters Name=vpc-id,Values=VPC", "NetworkAcls", false},
	{"ec2-describe-nat-gateways.json", "aws ec2 describe-nat-gateways --filter Name=vpc-id,Values=VPC", "NatGateways", false},
	{"ec2-describe-prefix-lists.json", "aws ec2 describe-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.REGION.s3", "PrefixLists", false},
	{"ec2-describe-vpc-attribute-enableDnsSupport.json", "aws ec2 describe-vpc-attribute --vpc-id VPC --attribute enableDnsSupport", "EnableDnsSupport", false},
	{"ec2-describe-vpc-attribute-enableDnsHostnames.json", "aws ec2 describe-vpc-attribute --vpc-id VPC --attribute enableDnsHostnames", "EnableDnsHostnames", false},
	{"ec2-describe-dhcp-options.json", "aws ec2 describe-dhcp-options", "DhcpOptions", false},
	// Not in the contract's first table: which DHCP option set the VPC uses is only in
	// describe-vpcs. Optional; without it a single option set is assumed to
	// be the VPC's and several are a warn.
	{"ec2-describe-vpcs.json", "aws ec2 describe-vpcs --vpc-ids VPC", "Vpcs", false},
	{"iam-simulate-principal-policy.json", "aws iam simulate-principal-policy --policy-source-arn NODE_ROLE_ARN --action-names " + strings.Join(ECRActions, " ") + " " + strings.Join(CacheActions, " "), "EvaluationResults", false},
}

// ECRActions are the node role's actions for a pull (AmazonEC2ContainerRegistryReadOnly).
var ECRActions = []string{"ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"}

// Names of the contract files.
const (
	FileCluster        = "eks-describe-cluster.json"
	FileNodegroups     = "eks-list-nodegroups.json"
	FileInstances      = "ec2-describe-instances.json"
	FileSubnets        = "ec2-describe-subnets.json"
	FileRouteTables    = "ec2-describe-route-tables.json"
	FileEndpoints      = "ec2-describe-vpc-endpoints.json"
	FileSecurityGroups = "ec2-describe-security-groups.json"
	FileNetworkACLs    = "ec2-describe-network-acls.json"
	FileNATGateways    = "ec2-describe-nat-gateways.json"
	FilePrefixLists    = "ec2-describe-prefix-lists.json"
	FileDNSSupport     = "ec2-describe-vpc-attribute-enableDnsSupport.json"
	FileDNSHostnames   = "ec2-describe-vpc-attribute-enableDnsHostnames.json"
	FileDHCPOptions    = "ec2-describe-dhcp-options.json"
	FileVPCs           = "ec2-describe-vpcs.json"
	FileSimulate       = "iam-simulate-principal-policy.json"
)

// NodegroupFile is the file name of one nodegroup's describe-nodegroup.
func NodegroupFile(name string) string { return "eks-describe-nodegroup-" + name + ".json" }

// fileSpec finds the contract entry of a file name.
func fileSpec(name string) (File, bool) {
	if strings.HasPrefix(name, "eks-describe-nodegroup-") && strings.HasSuffix(name, ".json") {
		return Files[2], true
	}
	for _, f := range append(Files[:len(Files):len(Files)], CacheFiles...) {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// CommandFor is a file's command with the placeholders that are known
// filled in.
func CommandFor(name, cluster, vpc, region, nodeRoleARN string) string {
	f, ok := fileSpec(name)
	if !ok {
		return ""
	}
	c := f.Command
	if strings.HasPrefix(name, "eks-describe-nodegroup-") {
		c = strings.ReplaceAll(c, "NAME", strings.TrimSuffix(strings.TrimPrefix(name, "eks-describe-nodegroup-"), ".json"))
	}
	for _, r := range [][2]string{{"CLUSTER", cluster}, {"VPC", vpc}, {"REGION", region}, {"NODE_ROLE_ARN", nodeRoleARN}} {
		if r[1] != "" {
			c = strings.ReplaceAll(c, r[0], r[1])
		}
	}
	return c
}
