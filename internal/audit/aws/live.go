package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
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
	// Image is the image the audit is for: its repository's pull-through
	// cache rule, when one serves it, is read too.
	Image string
}

// Page sizes: the APIs' maxima, so the number of calls grows with pages
// of results, never with subnets.
const (
	pageEC2       = 1000
	pageEC2Small  = 100 // describe-route-tables, -network-acls, -prefix-lists, -dhcp-options
	pageInstances = 1000
)

// Collect reads the account once (CollectRaw) and returns the folder's
// files, one per command as the AWS CLI v2 prints it (FilesOf), with the
// calls the caller may not make as warnings.
func Collect(ctx context.Context, o LiveOptions) (*audit.Collection, error) {
	raw, err := CollectRaw(ctx, o)
	if err != nil {
		return nil, err
	}
	files, err := FilesOf(raw)
	if err != nil {
		return nil, err
	}
	c := &audit.Collection{Files: files}
	for _, f := range sortedKeys(raw.Failed) {
		c.Warnings = append(c.Warnings, report.AuditWarning{Message: raw.Failed[f], File: f, Permission: raw.Denied[f]})
	}
	return c, nil
}

// CollectRaw calls the audit's read-only APIs once, with the default
// credential chain (environment, shared config and SSO, IMDS, IRSA / pod
// identity), every Describe through its paginator and every list filtered
// to the cluster's VPC, and returns what the CLI would print for each file
// of the contract. A call the caller may not make (AccessDenied) leaves its
// file out, with the error kept for the report's warnings; the cluster and
// its subnets are required.
func CollectRaw(ctx context.Context, o LiveOptions) (*Raw, error) {
	cfg, err := loadConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.EndpointURL != "" {
		cfg.BaseEndpoint = aws.String(o.EndpointURL) // every client's, as --endpoint-url
	}
	c := &collector{o: o, region: cfg.Region, raw: &Raw{Failed: map[string]string{}},
		eks: eks.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg),
		ecr: ecr.NewFromConfig(cfg), sm: secretsmanager.NewFromConfig(cfg)}
	// 1. The cluster: its VPC (required).
	if err := c.cluster(ctx); err != nil {
		return nil, err
	}
	// 2. Nodegroups, then each one (one call per nodegroup, not per subnet).
	c.nodegroups(ctx)
	// 3. Instances of the cluster (managed, self-managed, Karpenter).
	c.instances(ctx)
	// 4. The VPC's subnets (required), route tables, endpoints, groups,
	//    ACLs, NATs, and the S3 prefix list.
	if err := c.network(ctx); err != nil {
		return nil, err
	}
	// 5. VPC attributes, the VPC (its DHCP option set) and that set.
	c.dns(ctx)
	// 6. The node role's four ECR actions and the two a pull-through cache
	//    asks for (the first nodegroup's role).
	c.simulate(ctx)
	// 7. The image's pull-through cache rule, when one serves it.
	c.cache(ctx)
	if len(c.raw.Failed) == 0 {
		c.raw.Failed = nil
	}
	return c.raw, nil
}

// collector holds the SDK clients and what they read so far.
type collector struct {
	o      LiveOptions
	region string
	vpc    string
	eks    *eks.Client
	ec2    *ec2.Client
	iam    *iam.Client
	ecr    *ecr.Client
	sm     *secretsmanager.Client
	raw    *Raw
}

// keep records a call that failed (its file is left out) and reports
// whether it succeeded.
func (c *collector) keep(file string, err error) bool {
	if err == nil {
		return true
	}
	c.raw.Failed[file] = apiError(err)
	var de *audit.DeniedError
	if errors.As(deniedOr(err, file, iamAction(file), ""), &de) {
		if c.raw.Denied == nil {
			c.raw.Denied = map[string]string{}
		}
		c.raw.Denied[file] = de.Permission
	}
	return false
}

// iamAction is the IAM action of a contract file's call: the AWS CLI's
// service and operation (aws ec2 describe-route-tables) as IAM names it
// (ec2:DescribeRouteTables).
func iamAction(file string) string {
	f, ok := fileSpec(file)
	if !ok {
		return ""
	}
	words := strings.Fields(f.Command)
	if len(words) < 3 || words[0] != "aws" {
		return ""
	}
	var op strings.Builder
	for _, part := range strings.Split(words[2], "-") {
		if part != "" {
			op.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return words[1] + ":" + op.String()
}

// inVPC filters a Describe to the cluster's VPC.
func (c *collector) inVPC() []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{c.vpc}}}
}

func (c *collector) cluster(ctx context.Context) error {
	dc, err := c.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c.o.Cluster)})
	if err != nil {
		return deniedOr(err, "eks describe-cluster --name "+c.o.Cluster, "eks:DescribeCluster", "")
	}
	c.raw.Cluster = &ClusterOutput{Cluster: dc.Cluster}
	if dc.Cluster.ResourcesVpcConfig != nil {
		c.vpc = str(dc.Cluster.ResourcesVpcConfig.VpcId)
	}
	if c.vpc == "" {
		return fmt.Errorf("eks describe-cluster --name %s: the cluster names no VPC", c.o.Cluster)
	}
	return nil
}

func (c *collector) nodegroups(ctx context.Context) {
	ngs, err := all(ctx, eks.NewListNodegroupsPaginator(c.eks, &eks.ListNodegroupsInput{ClusterName: aws.String(c.o.Cluster)}),
		func(o *eks.ListNodegroupsOutput) []string { return o.Nodegroups })
	if !c.keep(FileNodegroups, err) {
		return
	}
	c.raw.Nodegroups = &ListNodegroupsOutput{Nodegroups: ngs}
	sort.Strings(ngs)
	for _, n := range ngs {
		out, err := c.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(c.o.Cluster), NodegroupName: aws.String(n)})
		if c.keep(NodegroupFile(n), err) {
			c.raw.NodegroupDetails = append(c.raw.NodegroupDetails, &NodegroupOutput{Nodegroup: out.Nodegroup})
		}
	}
}

func (c *collector) instances(ctx context.Context) {
	rs, err := all(ctx, ec2.NewDescribeInstancesPaginator(c.ec2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(pageInstances),
		Filters: []ec2types.Filter{{Name: aws.String("tag:eks:cluster-name"), Values: []string{c.o.Cluster}}}}),
		func(o *ec2.DescribeInstancesOutput) []ec2types.Reservation { return o.Reservations })
	if c.keep(FileInstances, err) {
		c.raw.Instances = &InstancesOutput{Reservations: rs}
	}
}

func (c *collector) network(ctx context.Context) error {
	subnets, err := all(ctx, ec2.NewDescribeSubnetsPaginator(c.ec2, &ec2.DescribeSubnetsInput{Filters: c.inVPC(), MaxResults: aws.Int32(pageEC2)}),
		func(o *ec2.DescribeSubnetsOutput) []ec2types.Subnet { return o.Subnets })
	if err != nil {
		return deniedOr(err, "ec2 describe-subnets --filters Name=vpc-id,Values="+c.vpc, "ec2:DescribeSubnets", "")
	}
	c.raw.Subnets = &SubnetsOutput{Subnets: subnets}

	rts, err := all(ctx, ec2.NewDescribeRouteTablesPaginator(c.ec2, &ec2.DescribeRouteTablesInput{Filters: c.inVPC(), MaxResults: aws.Int32(pageEC2Small)}),
		func(o *ec2.DescribeRouteTablesOutput) []ec2types.RouteTable { return o.RouteTables })
	if c.keep(FileRouteTables, err) {
		c.raw.RouteTables = &RouteTablesOutput{RouteTables: rts}
	}
	eps, err := all(ctx, ec2.NewDescribeVpcEndpointsPaginator(c.ec2, &ec2.DescribeVpcEndpointsInput{Filters: c.inVPC(), MaxResults: aws.Int32(pageEC2)}),
		func(o *ec2.DescribeVpcEndpointsOutput) []ec2types.VpcEndpoint { return o.VpcEndpoints })
	if c.keep(FileEndpoints, err) {
		c.raw.Endpoints = &EndpointsOutput{VpcEndpoints: eps}
	}
	sgs, err := all(ctx, ec2.NewDescribeSecurityGroupsPaginator(c.ec2, &ec2.DescribeSecurityGroupsInput{Filters: c.inVPC(), MaxResults: aws.Int32(pageEC2)}),
		func(o *ec2.DescribeSecurityGroupsOutput) []ec2types.SecurityGroup { return o.SecurityGroups })
	if c.keep(FileSecurityGroups, err) {
		c.raw.SecurityGroups = &SecurityGroupsOutput{SecurityGroups: sgs}
	}
	acls, err := all(ctx, ec2.NewDescribeNetworkAclsPaginator(c.ec2, &ec2.DescribeNetworkAclsInput{Filters: c.inVPC(), MaxResults: aws.Int32(pageEC2Small)}),
		func(o *ec2.DescribeNetworkAclsOutput) []ec2types.NetworkAcl { return o.NetworkAcls })
	if c.keep(FileNetworkACLs, err) {
		c.raw.NetworkACLs = &NetworkACLsOutput{NetworkAcls: acls}
	}
	nats, err := all(ctx, ec2.NewDescribeNatGatewaysPaginator(c.ec2, &ec2.DescribeNatGatewaysInput{Filter: c.inVPC(), MaxResults: aws.Int32(pageEC2)}),
		func(o *ec2.DescribeNatGatewaysOutput) []ec2types.NatGateway { return o.NatGateways })
	if c.keep(FileNATGateways, err) {
		c.raw.NATGateways = &NATGatewaysOutput{NatGateways: nats}
	}
	pls, err := all(ctx, ec2.NewDescribePrefixListsPaginator(c.ec2, &ec2.DescribePrefixListsInput{MaxResults: aws.Int32(pageEC2Small),
		Filters: []ec2types.Filter{{Name: aws.String("prefix-list-name"), Values: []string{"com.amazonaws." + c.region + ".s3"}}}}),
		func(o *ec2.DescribePrefixListsOutput) []ec2types.PrefixList { return o.PrefixLists })
	if c.keep(FilePrefixLists, err) {
		c.raw.PrefixLists = &PrefixListsOutput{PrefixLists: pls}
	}
	return nil
}

func (c *collector) dns(ctx context.Context) {
	if out, err := c.ec2.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(c.vpc), Attribute: ec2types.VpcAttributeNameEnableDnsSupport}); c.keep(FileDNSSupport, err) {
		c.raw.DNSSupport = &VPCAttributeOutput{VpcId: out.VpcId, EnableDnsSupport: out.EnableDnsSupport}
	}
	if out, err := c.ec2.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(c.vpc), Attribute: ec2types.VpcAttributeNameEnableDnsHostnames}); c.keep(FileDNSHostnames, err) {
		c.raw.DNSHostnames = &VPCAttributeOutput{VpcId: out.VpcId, EnableDnsHostnames: out.EnableDnsHostnames}
	}
	dopt := ""
	if out, err := c.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{c.vpc}}); c.keep(FileVPCs, err) {
		c.raw.VPCs = &VPCsOutput{Vpcs: out.Vpcs}
		for _, v := range out.Vpcs {
			dopt = str(v.DhcpOptionsId)
		}
	}
	in := &ec2.DescribeDhcpOptionsInput{MaxResults: aws.Int32(pageEC2Small)}
	if dopt != "" && dopt != "default" {
		in.Filters = []ec2types.Filter{{Name: aws.String("dhcp-options-id"), Values: []string{dopt}}}
	}
	sets, err := all(ctx, ec2.NewDescribeDhcpOptionsPaginator(c.ec2, in),
		func(o *ec2.DescribeDhcpOptionsOutput) []ec2types.DhcpOptions { return o.DhcpOptions })
	if c.keep(FileDHCPOptions, err) {
		c.raw.DHCPOptions = &DHCPOptionsOutput{DhcpOptions: sets}
	}
}

func (c *collector) simulate(ctx context.Context) {
	role := ""
	for _, ng := range c.raw.NodegroupDetails {
		if ng.Nodegroup != nil && str(ng.Nodegroup.NodeRole) != "" {
			role = str(ng.Nodegroup.NodeRole)
			break
		}
	}
	if role == "" {
		return
	}
	rs, err := all(ctx, iam.NewSimulatePrincipalPolicyPaginator(c.iam, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(role), ActionNames: append(ECRActions[:len(ECRActions):len(ECRActions)], CacheActions...)}),
		func(o *iam.SimulatePrincipalPolicyOutput) []iamtypes.EvaluationResult { return o.EvaluationResults })
	if c.keep(FileSimulate, err) {
		c.raw.Simulate = &SimulateOutput{EvaluationResults: rs}
	}
}

// pager is the shape of every AWS SDK for Go v2 paginator (F is its
// service's option function).
type pager[O, F any] interface {
	HasMorePages() bool
	NextPage(context.Context, ...F) (O, error)
}

// all reads every page of p and returns the items of each, in order; the
// first error ends it (nothing is retried past the SDK's own policy).
func all[O, F, T any](ctx context.Context, p pager[O, F], items func(O) []T) ([]T, error) {
	var out []T
	for p.HasMorePages() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, items(page)...)
	}
	return out, nil
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
			inner = awshttp.NewBuildableClient() // the SDK's own default, not http.DefaultClient's shared transport
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
