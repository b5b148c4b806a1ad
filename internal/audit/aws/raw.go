package aws

import (
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// Raw is everything the audit reads, as the AWS CLI prints it and the SDK
// returns it: the output shapes of the commands in Files, holding the SDK's
// own types (github.com/aws/aws-sdk-go-v2/service/{ec2,eks,iam}/types). The
// CLI and the SDK share botocore's member names, so the CLI's JSON decodes
// into these structs by field name (encoding/json matches names without
// regard to case: EKS's camelCase and EC2's PascalCase both land); the one
// shim is for timestamps (timeshim.go). A nil member is a file not given.
type Raw struct {
	Cluster          *ClusterOutput
	Nodegroups       *ListNodegroupsOutput
	NodegroupDetails []*NodegroupOutput // one per eks-describe-nodegroup-NAME.json, in name order
	Instances        *InstancesOutput
	Subnets          *SubnetsOutput
	RouteTables      *RouteTablesOutput
	Endpoints        *EndpointsOutput
	SecurityGroups   *SecurityGroupsOutput
	NetworkACLs      *NetworkACLsOutput
	NATGateways      *NATGatewaysOutput
	PrefixLists      *PrefixListsOutput
	DNSSupport       *VPCAttributeOutput
	DNSHostnames     *VPCAttributeOutput
	DHCPOptions      *DHCPOptionsOutput
	VPCs             *VPCsOutput
	Simulate         *SimulateOutput
	// The pull-through cache's (cache.go).
	CacheRules     *CacheRulesOutput
	Templates      *TemplatesOutput
	Repositories   *RepositoriesOutput
	RegistryPolicy *RegistryPolicyOutput
	Secret         *SecretOutput
	// Errors hold, by file, a call whose answer is the API's "not found"
	// (RepositoryNotFoundException, RegistryPolicyNotFoundException,
	// ResourceNotFoundException): an answer, written as boto3's error.
	Errors map[string]*RecordedError
	// Failed holds, by file, the API error of a live call that did not
	// succeed (AccessDenied): the file is left out and the report says why.
	Failed map[string]string
	// Denied holds, by file, the IAM action a live call was refused for
	// (AccessDenied, UnauthorizedOperation): a subset of Failed.
	Denied map[string]string
	// Truncated holds the files whose last page names a next one
	// (NextToken): part of the listing is not there.
	Truncated map[string]bool
}

// noteFailed records a file that holds a recorded refusal as a failed
// call, or a recorded "not found" as that answer.
func (r *Raw) noteFailed(file string, e *RecordedError) {
	if notFound(e.Code) {
		if r.Errors == nil {
			r.Errors = map[string]*RecordedError{}
		}
		r.Errors[file] = e
		return
	}
	if r.Failed == nil {
		r.Failed = map[string]string{}
	}
	r.Failed[file] = strings.TrimPrefix(e.Error(), "the recorded call failed: ")
	switch e.Code {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation":
		if r.Denied == nil {
			r.Denied = map[string]string{}
		}
		r.Denied[file] = iamAction(file)
	}
}

// The output shapes, one per command (member names as the CLI prints them).
type (
	ClusterOutput struct {
		Cluster *ekstypes.Cluster `json:"cluster"`
	}
	ListNodegroupsOutput struct {
		Nodegroups []string `json:"nodegroups"`
	}
	NodegroupOutput struct {
		Nodegroup *ekstypes.Nodegroup `json:"nodegroup"`
	}
	InstancesOutput struct {
		Reservations []ec2types.Reservation
	}
	SubnetsOutput struct {
		Subnets []ec2types.Subnet
	}
	RouteTablesOutput struct {
		RouteTables []ec2types.RouteTable
	}
	EndpointsOutput struct {
		VpcEndpoints []ec2types.VpcEndpoint
	}
	SecurityGroupsOutput struct {
		SecurityGroups []ec2types.SecurityGroup
	}
	NetworkACLsOutput struct {
		NetworkAcls []ec2types.NetworkAcl
	}
	NATGatewaysOutput struct {
		NatGateways []ec2types.NatGateway
	}
	PrefixListsOutput struct {
		PrefixLists []ec2types.PrefixList
	}
	// VPCAttributeOutput is describe-vpc-attribute's output for either
	// attribute; the file name says which.
	VPCAttributeOutput struct {
		VpcId              *string
		EnableDnsSupport   *ec2types.AttributeBooleanValue `json:",omitempty"`
		EnableDnsHostnames *ec2types.AttributeBooleanValue `json:",omitempty"`
	}
	DHCPOptionsOutput struct {
		DhcpOptions []ec2types.DhcpOptions
	}
	VPCsOutput struct {
		Vpcs []ec2types.Vpc
	}
	SimulateOutput struct {
		EvaluationResults []iamtypes.EvaluationResult
		IsTruncated       bool
	}
)
