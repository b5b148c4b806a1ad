// Package synth builds large EKS accounts for the audit's benchmark and
// its call-count test: N subnets over three AZs, route tables shared by
// subnets, interface endpoints (ecr.api, ecr.dkr and others), many security
// groups and instances, in the SDK's types, written as the offline folder.
// Subnet i%7==3 has no S3 route, so the audit has failures to report.
package synth

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
)

// Size of an account.
type Size struct {
	Subnets, RouteTables, Endpoints, SecurityGroups, Instances, Nodegroups int
}

// Benchmark is the benchmark's account (BENCHMARKS.md): 300 subnets, 150 route tables, 50
// endpoints, 400 security groups, 5,000 instances.
var Benchmark = Size{Subnets: 300, RouteTables: 150, Endpoints: 50, SecurityGroups: 400, Instances: 5000, Nodegroups: 10}

const (
	region  = "us-east-1"
	account = "111122223333"
	vpc     = "vpc-0aaaabbbbccccdddd"
	pl      = "pl-63a5400a"
)

var azs = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

func id(prefix string, n int) string { return fmt.Sprintf("%s-0%016x", prefix, n+1) }

func cidr(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 16+i/256, i%256) }

// Account builds the account.
func Account(sz Size) *awsaudit.Raw {
	if sz.Nodegroups == 0 {
		sz.Nodegroups = 1
	}
	if sz.RouteTables == 0 {
		sz.RouteTables = 1
	}
	now := time.Date(2026, 11, 2, 9, 14, 27, 0, time.UTC)
	clusterSG := id("sg", 0)
	epSG := id("sg", 1)
	raw := &awsaudit.Raw{}
	raw.Cluster = &awsaudit.ClusterOutput{Cluster: &ekstypes.Cluster{
		Name: aws.String("big"), Arn: aws.String("arn:aws:eks:" + region + ":" + account + ":cluster/big"), CreatedAt: &now,
		Status: ekstypes.ClusterStatusActive, Version: aws.String("1.33"),
		ResourcesVpcConfig: &ekstypes.VpcConfigResponse{VpcId: aws.String(vpc), ClusterSecurityGroupId: aws.String(clusterSG)},
	}}
	var subnets []ec2types.Subnet
	for i := 0; i < sz.Subnets; i++ {
		subnets = append(subnets, ec2types.Subnet{SubnetId: aws.String(subnetID(i)), VpcId: aws.String(vpc), CidrBlock: aws.String(cidr(i)),
			AvailabilityZone: aws.String(azs[i%3]), State: ec2types.SubnetStateAvailable, MapPublicIpOnLaunch: aws.Bool(false)})
	}
	raw.Subnets = &awsaudit.SubnetsOutput{Subnets: subnets}
	ngNames := nodegroups(raw, sz, now)
	gwTables := routeTables(raw, sz)
	endpoints(raw, sz, gwTables, epSG)
	securityGroups(raw, sz, clusterSG, epSG)
	dnsACLsAndIdentity(raw, sz)
	instances(raw, sz, ngNames, clusterSG, now)
	return raw
}

func subnetID(i int) string { return id("subnet", i) }

func nodegroups(raw *awsaudit.Raw, sz Size, now time.Time) []string {
	// Nodegroups share the subnets round-robin.
	var ngNames []string
	for g := 0; g < sz.Nodegroups; g++ {
		name := fmt.Sprintf("ng-%02d", g)
		ngNames = append(ngNames, name)
		var sn []string
		for i := g; i < sz.Subnets; i += sz.Nodegroups {
			sn = append(sn, subnetID(i))
		}
		raw.NodegroupDetails = append(raw.NodegroupDetails, &awsaudit.NodegroupOutput{Nodegroup: &ekstypes.Nodegroup{
			NodegroupName: aws.String(name), ClusterName: aws.String("big"), Subnets: sn, Status: ekstypes.NodegroupStatusActive,
			NodeRole: aws.String("arn:aws:iam::" + account + ":role/big-node"), CreatedAt: &now}})
	}
	raw.Nodegroups = &awsaudit.ListNodegroupsOutput{Nodegroups: ngNames}
	return ngNames
}

func routeTables(raw *awsaudit.Raw, sz Size) (gwTables []string) {
	// Route tables, each shared by the subnets i%RouteTables; the gateway
	// endpoint serves all but the tables of subnets i%7==3.
	var rts []ec2types.RouteTable
	for t := 0; t < sz.RouteTables; t++ {
		rt := ec2types.RouteTable{RouteTableId: aws.String(id("rtb", t)), VpcId: aws.String(vpc),
			Routes: []ec2types.Route{{DestinationCidrBlock: aws.String("10.0.0.0/8"), GatewayId: aws.String("local"), State: ec2types.RouteStateActive}}}
		if t%7 != 3 {
			rt.Routes = append(rt.Routes, ec2types.Route{DestinationPrefixListId: aws.String(pl), GatewayId: aws.String(id("vpce", 0)), State: ec2types.RouteStateActive})
			gwTables = append(gwTables, id("rtb", t))
		}
		for i := t; i < sz.Subnets; i += sz.RouteTables {
			rt.Associations = append(rt.Associations, ec2types.RouteTableAssociation{RouteTableId: rt.RouteTableId, SubnetId: aws.String(subnetID(i)), Main: aws.Bool(false),
				AssociationState: &ec2types.RouteTableAssociationState{State: ec2types.RouteTableAssociationStateCodeAssociated}})
		}
		if t == 0 {
			rt.Associations = append(rt.Associations, ec2types.RouteTableAssociation{RouteTableId: rt.RouteTableId, Main: aws.Bool(true)})
		}
		rts = append(rts, rt)
	}
	raw.RouteTables = &awsaudit.RouteTablesOutput{RouteTables: rts}
	return gwTables
}

func endpoints(raw *awsaudit.Raw, sz Size, gwTables []string, epSG string) {
	// Endpoints: the S3 gateway, ecr.api and ecr.dkr with a subnet per AZ,
	// and other services to make up the count.
	firstPerAZ := []string{subnetID(0), subnetID(1), subnetID(2)}
	eps := []ec2types.VpcEndpoint{{VpcEndpointId: aws.String(id("vpce", 0)), VpcEndpointType: ec2types.VpcEndpointTypeGateway, VpcId: aws.String(vpc),
		ServiceName: aws.String("com.amazonaws." + region + ".s3"), State: "available", RouteTableIds: gwTables}}
	services := []string{"ecr.api", "ecr.dkr", "sts", "logs", "ec2", "elasticloadbalancing", "kms", "ssm", "secretsmanager", "sqs"}
	for e := 1; e < sz.Endpoints; e++ {
		svc := services[(e-1)%len(services)]
		if e > len(services) {
			svc = fmt.Sprintf("custom-%d", e)
		}
		eps = append(eps, ec2types.VpcEndpoint{VpcEndpointId: aws.String(id("vpce", e)), VpcEndpointType: ec2types.VpcEndpointTypeInterface, VpcId: aws.String(vpc),
			ServiceName: aws.String("com.amazonaws." + region + "." + svc), State: "available", SubnetIds: firstPerAZ, PrivateDnsEnabled: aws.Bool(true),
			Groups: []ec2types.SecurityGroupIdentifier{{GroupId: aws.String(epSG)}}})
	}
	raw.Endpoints = &awsaudit.EndpointsOutput{VpcEndpoints: eps}
}

func securityGroups(raw *awsaudit.Raw, sz Size, clusterSG, epSG string) {
	// Security groups: the cluster's, the endpoints', and many others.
	allOut := []ec2types.IpPermission{{IpProtocol: aws.String("-1"), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}
	sgs := []ec2types.SecurityGroup{
		{GroupId: aws.String(clusterSG), VpcId: aws.String(vpc), IpPermissionsEgress: allOut,
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(clusterSG)}}}}},
		{GroupId: aws.String(epSG), VpcId: aws.String(vpc), IpPermissionsEgress: allOut,
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(443), ToPort: aws.Int32(443),
				UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: aws.String(clusterSG)}}}}},
	}
	for g := 2; g < sz.SecurityGroups; g++ {
		sgs = append(sgs, ec2types.SecurityGroup{GroupId: aws.String(id("sg", g)), VpcId: aws.String(vpc), IpPermissionsEgress: allOut,
			IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(8080), ToPort: aws.Int32(8080),
				IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}}})
	}
	raw.SecurityGroups = &awsaudit.SecurityGroupsOutput{SecurityGroups: sgs}
}

// dnsACLsAndIdentity: one default ACL for every subnet, no NAT, the S3
// prefix list, the VPC's DNS attributes and DHCP options, and a node role
// allowed every ECR action.
func dnsACLsAndIdentity(raw *awsaudit.Raw, sz Size) {
	acl := ec2types.NetworkAcl{NetworkAclId: aws.String(id("acl", 0)), VpcId: aws.String(vpc), IsDefault: aws.Bool(true)}
	for _, eg := range []bool{true, false} {
		acl.Entries = append(acl.Entries,
			ec2types.NetworkAclEntry{RuleNumber: aws.Int32(100), Egress: aws.Bool(eg), Protocol: aws.String("-1"), RuleAction: ec2types.RuleActionAllow, CidrBlock: aws.String("0.0.0.0/0")},
			ec2types.NetworkAclEntry{RuleNumber: aws.Int32(32767), Egress: aws.Bool(eg), Protocol: aws.String("-1"), RuleAction: ec2types.RuleActionDeny, CidrBlock: aws.String("0.0.0.0/0")})
	}
	for i := 0; i < sz.Subnets; i++ {
		acl.Associations = append(acl.Associations, ec2types.NetworkAclAssociation{NetworkAclId: acl.NetworkAclId, SubnetId: aws.String(subnetID(i))})
	}
	raw.NetworkACLs = &awsaudit.NetworkACLsOutput{NetworkAcls: []ec2types.NetworkAcl{acl}}
	raw.NATGateways = &awsaudit.NATGatewaysOutput{NatGateways: []ec2types.NatGateway{}}
	raw.PrefixLists = &awsaudit.PrefixListsOutput{PrefixLists: []ec2types.PrefixList{{PrefixListId: aws.String(pl), PrefixListName: aws.String("com.amazonaws." + region + ".s3"),
		Cidrs: []string{"3.5.0.0/19", "16.15.176.0/20", "16.182.0.0/16", "18.34.0.0/19", "52.216.0.0/15", "54.231.0.0/16"}}}}
	raw.DNSSupport = &awsaudit.VPCAttributeOutput{VpcId: aws.String(vpc), EnableDnsSupport: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}
	raw.DNSHostnames = &awsaudit.VPCAttributeOutput{VpcId: aws.String(vpc), EnableDnsHostnames: &ec2types.AttributeBooleanValue{Value: aws.Bool(true)}}
	raw.DHCPOptions = &awsaudit.DHCPOptionsOutput{DhcpOptions: []ec2types.DhcpOptions{{DhcpOptionsId: aws.String("dopt-0123456789abcdef0"),
		DhcpConfigurations: []ec2types.DhcpConfiguration{{Key: aws.String("domain-name-servers"), Values: []ec2types.AttributeValue{{Value: aws.String("AmazonProvidedDNS")}}}}}}}
	raw.VPCs = &awsaudit.VPCsOutput{Vpcs: []ec2types.Vpc{{VpcId: aws.String(vpc), CidrBlock: aws.String("10.0.0.0/8"), DhcpOptionsId: aws.String("dopt-0123456789abcdef0")}}}
	var evals []iamtypes.EvaluationResult
	for _, a := range awsaudit.ECRActions {
		evals = append(evals, iamtypes.EvaluationResult{EvalActionName: aws.String(a), EvalResourceName: aws.String("*"), EvalDecision: iamtypes.PolicyEvaluationDecisionTypeAllowed})
	}
	raw.Simulate = &awsaudit.SimulateOutput{EvaluationResults: evals}
}

func instances(raw *awsaudit.Raw, sz Size, ngNames []string, clusterSG string, now time.Time) {
	// Instances over the subnets, 25 per reservation.
	var res []ec2types.Reservation
	for i := 0; i < sz.Instances; i++ {
		s := i % sz.Subnets
		ng := ngNames[s%sz.Nodegroups]
		in := ec2types.Instance{InstanceId: aws.String(id("i", i)), SubnetId: aws.String(subnetID(s)), VpcId: aws.String(vpc),
			PrivateIpAddress: aws.String(fmt.Sprintf("10.%d.%d.%d", 16+s/256, s%256, 4+i/sz.Subnets%250)),
			PrivateDnsName:   aws.String(fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", 16+s/256, s%256, 4+i/sz.Subnets%250)),
			State:            &ec2types.InstanceState{Code: aws.Int32(16), Name: ec2types.InstanceStateNameRunning}, LaunchTime: &now,
			SecurityGroups: []ec2types.GroupIdentifier{{GroupId: aws.String(clusterSG)}, {GroupId: aws.String(id("sg", 2+i%max(1, sz.SecurityGroups-2)))}},
			Tags:           []ec2types.Tag{{Key: aws.String("eks:cluster-name"), Value: aws.String("big")}, {Key: aws.String("eks:nodegroup-name"), Value: aws.String(ng)}}}
		if i%25 == 0 {
			res = append(res, ec2types.Reservation{ReservationId: aws.String(id("r", i/25)), OwnerId: aws.String(account)})
		}
		res[len(res)-1].Instances = append(res[len(res)-1].Instances, in)
	}
	raw.Instances = &awsaudit.InstancesOutput{Reservations: res}
}
