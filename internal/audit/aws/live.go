package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"
)

// LiveOptions say which cluster to read and how to reach the APIs.
type LiveOptions struct {
	Cluster string
	Region  string // default: the profile's or the environment's
	Profile string // shared config profile
	// EndpointURL sends every call to one URL (an emulator, a test
	// server), as the AWS CLI's --endpoint-url.
	EndpointURL string
	// Config, when set, is used instead of loading the default chain
	// (tests give static credentials).
	Config *aws.Config
	// Calls counts the HTTP requests made (nil: not counted).
	Calls *atomic.Int64
}

// Page sizes: the APIs' maxima, so the number of calls grows with pages
// of results, never with subnets.
const (
	pageEC2       = 1000
	pageEC2Small  = 100 // describe-route-tables, -network-acls, -prefix-lists, -dhcp-options
	pageInstances = 1000
)

// Collect calls the audit's read-only APIs once, with the default
// credential chain (environment, shared config and SSO, IMDS, IRSA / pod
// identity), every Describe through its paginator and every list filtered
// to the cluster's VPC, and returns what the CLI would print for each file
// of the contract. A call the caller may not make (AccessDenied) leaves its
// file out, with the error kept for the report's warnings; the cluster and
// its subnets are required.
func Collect(ctx context.Context, o LiveOptions) (*Raw, error) {
	cfg, err := loadConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	eksc := eks.NewFromConfig(cfg, func(op *eks.Options) {
		if o.EndpointURL != "" {
			op.BaseEndpoint = aws.String(o.EndpointURL)
		}
	})
	ec2c := ec2.NewFromConfig(cfg, func(op *ec2.Options) {
		if o.EndpointURL != "" {
			op.BaseEndpoint = aws.String(o.EndpointURL)
		}
	})
	iamc := iam.NewFromConfig(cfg, func(op *iam.Options) {
		if o.EndpointURL != "" {
			op.BaseEndpoint = aws.String(o.EndpointURL)
		}
	})
	raw := &Raw{Failed: map[string]string{}}

	// 1. The cluster: its VPC, subnets and security group.
	dc, err := eksc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(o.Cluster)})
	if err != nil {
		return nil, deniedOr(err, "eks describe-cluster --name "+o.Cluster, "eks:DescribeCluster", "")
	}
	raw.Cluster = &ClusterOutput{Cluster: dc.Cluster}
	vpc := ""
	if dc.Cluster.ResourcesVpcConfig != nil {
		vpc = str(dc.Cluster.ResourcesVpcConfig.VpcId)
	}
	if vpc == "" {
		return nil, fmt.Errorf("eks describe-cluster --name %s: the cluster names no VPC", o.Cluster)
	}
	region := cfg.Region
	vpcFilter := []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpc}}}
	keep := func(file string, err error) bool {
		if err == nil {
			return true
		}
		raw.Failed[file] = apiError(err)
		return false
	}

	// 2. Nodegroups, then each one (one call per nodegroup, not per subnet).
	var ngs []string
	lp := eks.NewListNodegroupsPaginator(eksc, &eks.ListNodegroupsInput{ClusterName: aws.String(o.Cluster)})
	ngErr := error(nil)
	for lp.HasMorePages() {
		page, err := lp.NextPage(ctx)
		if err != nil {
			ngErr = err
			break
		}
		ngs = append(ngs, page.Nodegroups...)
	}
	if keep(FileNodegroups, ngErr) {
		raw.Nodegroups = &ListNodegroupsOutput{Nodegroups: ngs}
		sort.Strings(ngs)
		for _, n := range ngs {
			out, err := eksc.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(o.Cluster), NodegroupName: aws.String(n)})
			if keep(NodegroupFile(n), err) {
				raw.NodegroupDetails = append(raw.NodegroupDetails, &NodegroupOutput{Nodegroup: out.Nodegroup})
			}
		}
	}

	// 3. Instances of the cluster (managed, self-managed, Karpenter).
	{
		v := &InstancesOutput{}
		p := ec2.NewDescribeInstancesPaginator(ec2c, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(pageInstances),
			Filters: []ec2types.Filter{{Name: aws.String("tag:eks:cluster-name"), Values: []string{o.Cluster}}}})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.Reservations = append(v.Reservations, page.Reservations...)
			}
			return err
		})
		if keep(FileInstances, err) {
			raw.Instances = v
		}
	}
	// 4. The VPC's subnets, route tables, endpoints, groups, ACLs, NATs.
	{
		v := &SubnetsOutput{}
		p := ec2.NewDescribeSubnetsPaginator(ec2c, &ec2.DescribeSubnetsInput{Filters: vpcFilter, MaxResults: aws.Int32(pageEC2)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.Subnets = append(v.Subnets, page.Subnets...)
			}
			return err
		})
		if err != nil {
			return nil, deniedOr(err, "ec2 describe-subnets --filters Name=vpc-id,Values="+vpc, "ec2:DescribeSubnets", "")
		}
		raw.Subnets = v
	}
	{
		v := &RouteTablesOutput{}
		p := ec2.NewDescribeRouteTablesPaginator(ec2c, &ec2.DescribeRouteTablesInput{Filters: vpcFilter, MaxResults: aws.Int32(pageEC2Small)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.RouteTables = append(v.RouteTables, page.RouteTables...)
			}
			return err
		})
		if keep(FileRouteTables, err) {
			raw.RouteTables = v
		}
	}
	{
		v := &EndpointsOutput{}
		p := ec2.NewDescribeVpcEndpointsPaginator(ec2c, &ec2.DescribeVpcEndpointsInput{Filters: vpcFilter, MaxResults: aws.Int32(pageEC2)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.VpcEndpoints = append(v.VpcEndpoints, page.VpcEndpoints...)
			}
			return err
		})
		if keep(FileEndpoints, err) {
			raw.Endpoints = v
		}
	}
	{
		v := &SecurityGroupsOutput{}
		p := ec2.NewDescribeSecurityGroupsPaginator(ec2c, &ec2.DescribeSecurityGroupsInput{Filters: vpcFilter, MaxResults: aws.Int32(pageEC2)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.SecurityGroups = append(v.SecurityGroups, page.SecurityGroups...)
			}
			return err
		})
		if keep(FileSecurityGroups, err) {
			raw.SecurityGroups = v
		}
	}
	{
		v := &NetworkACLsOutput{}
		p := ec2.NewDescribeNetworkAclsPaginator(ec2c, &ec2.DescribeNetworkAclsInput{Filters: vpcFilter, MaxResults: aws.Int32(pageEC2Small)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.NetworkAcls = append(v.NetworkAcls, page.NetworkAcls...)
			}
			return err
		})
		if keep(FileNetworkACLs, err) {
			raw.NetworkACLs = v
		}
	}
	{
		v := &NATGatewaysOutput{}
		p := ec2.NewDescribeNatGatewaysPaginator(ec2c, &ec2.DescribeNatGatewaysInput{Filter: vpcFilter, MaxResults: aws.Int32(pageEC2)})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.NatGateways = append(v.NatGateways, page.NatGateways...)
			}
			return err
		})
		if keep(FileNATGateways, err) {
			raw.NATGateways = v
		}
	}
	{
		v := &PrefixListsOutput{}
		p := ec2.NewDescribePrefixListsPaginator(ec2c, &ec2.DescribePrefixListsInput{MaxResults: aws.Int32(pageEC2Small),
			Filters: []ec2types.Filter{{Name: aws.String("prefix-list-name"), Values: []string{"com.amazonaws." + region + ".s3"}}}})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.PrefixLists = append(v.PrefixLists, page.PrefixLists...)
			}
			return err
		})
		if keep(FilePrefixLists, err) {
			raw.PrefixLists = v
		}
	}
	// 5. VPC attributes, the VPC (its DHCP option set) and that set.
	if out, err := ec2c.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(vpc), Attribute: ec2types.VpcAttributeNameEnableDnsSupport}); keep(FileDNSSupport, err) {
		raw.DNSSupport = &VPCAttributeOutput{VpcId: out.VpcId, EnableDnsSupport: out.EnableDnsSupport}
	}
	if out, err := ec2c.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(vpc), Attribute: ec2types.VpcAttributeNameEnableDnsHostnames}); keep(FileDNSHostnames, err) {
		raw.DNSHostnames = &VPCAttributeOutput{VpcId: out.VpcId, EnableDnsHostnames: out.EnableDnsHostnames}
	}
	dopt := ""
	if out, err := ec2c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{vpc}}); keep(FileVPCs, err) {
		raw.VPCs = &VPCsOutput{Vpcs: out.Vpcs}
		for _, v := range out.Vpcs {
			dopt = str(v.DhcpOptionsId)
		}
	}
	{
		in := &ec2.DescribeDhcpOptionsInput{MaxResults: aws.Int32(pageEC2Small)}
		if dopt != "" && dopt != "default" {
			in.Filters = []ec2types.Filter{{Name: aws.String("dhcp-options-id"), Values: []string{dopt}}}
		}
		v := &DHCPOptionsOutput{}
		p := ec2.NewDescribeDhcpOptionsPaginator(ec2c, in)
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.DhcpOptions = append(v.DhcpOptions, page.DhcpOptions...)
			}
			return err
		})
		if keep(FileDHCPOptions, err) {
			raw.DHCPOptions = v
		}
	}
	// 6. The node role's four ECR actions (the first nodegroup's role).
	role := ""
	for _, ng := range raw.NodegroupDetails {
		if ng.Nodegroup != nil && str(ng.Nodegroup.NodeRole) != "" {
			role = str(ng.Nodegroup.NodeRole)
			break
		}
	}
	if role != "" {
		v := &SimulateOutput{}
		p := iam.NewSimulatePrincipalPolicyPaginator(iamc, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(role), ActionNames: ECRActions})
		err := pages(ctx, p.HasMorePages, func() error {
			page, err := p.NextPage(ctx)
			if err == nil {
				v.EvaluationResults = append(v.EvaluationResults, page.EvaluationResults...)
			}
			return err
		})
		if keep(FileSimulate, err) {
			raw.Simulate = v
		}
	}
	if len(raw.Failed) == 0 {
		raw.Failed = nil
	}
	return raw, nil
}

func pages(ctx context.Context, more func() bool, next func() error) error {
	for more() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := next(); err != nil {
			return err
		}
	}
	return nil
}

func loadConfig(ctx context.Context, o LiveOptions) (aws.Config, error) {
	var cfg aws.Config
	if o.Config != nil {
		cfg = o.Config.Copy()
		if o.Region != "" {
			cfg.Region = o.Region
		}
	} else {
		var opts []func(*config.LoadOptions) error
		if o.Region != "" {
			opts = append(opts, config.WithRegion(o.Region))
		}
		if o.Profile != "" {
			opts = append(opts, config.WithSharedConfigProfile(o.Profile))
		}
		var err error
		cfg, err = config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return aws.Config{}, fmt.Errorf("AWS configuration: %v", err)
		}
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: give --region, or set AWS_REGION or the profile's region")
	}
	if o.Calls != nil {
		inner := cfg.HTTPClient
		if inner == nil {
			inner = http.DefaultClient
		}
		cfg.HTTPClient = countingClient{inner: inner, n: o.Calls}
	}
	return cfg, nil
}

type countingClient struct {
	inner aws.HTTPClient
	n     *atomic.Int64
}

func (c countingClient) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.inner.Do(r)
}

// apiError is an SDK error on one line: the API's code and message.
func apiError(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return err.Error()
}
