#!/usr/bin/env python3
"""Writes ec2names.json: for each EC2 type the fake serves, its members'
XML names (EC2 Query protocol), read from the AWS SDK for Go v2's EC2
deserializer (generated from the EC2 API model). Usage:
python3 gen_names.py $(go list -m -f '{{.Dir}}' github.com/aws/aws-sdk-go-v2/service/ec2)/deserializers.go
"""
import json, re, sys
src = open(sys.argv[1]).read()
out = {}
for m in re.finditer(r'func awsEc2query_deserializeDocument(\w+)\(v \*\*types\.\w+, decoder smithyxml\.NodeDecoder\) error \{(.*?)\n\}\n', src, re.S):
    typ, body = m.group(1), m.group(2)
    fields = {}
    for c in re.finditer(r'case strings\.EqualFold\("(\w+)", t\.Name\.Local\):(.*?)(?=\n\t\tcase |\n\t\tdefault:)', body, re.S):
        xml, rest = c.group(1), c.group(2)
        f = re.search(r'sv\.(\w+)', rest)
        if f:
            fields[f.group(1)] = xml
    if fields:
        out[typ] = fields
for m in re.finditer(r'func awsEc2query_deserializeOpDocument(\w+)Output\(v \*\*(\w+)Output, decoder smithyxml.NodeDecoder\) error \{(.*?)\n\}\n', src, re.S):
    typ, body = m.group(1) + "Output", m.group(3)
    fields = {}
    for c in re.finditer(r'case strings\.EqualFold\("(\w+)", t\.Name\.Local\):(.*?)(?=\n\t\tcase |\n\t\tdefault:)', body, re.S):
        f = re.search(r'sv\.(\w+)', c.group(2))
        if f:
            fields[f.group(1)] = c.group(1)
    out[typ] = fields
keep = ["Subnet", "RouteTable", "Route", "RouteTableAssociation", "RouteTableAssociationState", "PropagatingVgw", "Tag",
        "VpcEndpoint", "SecurityGroupIdentifier", "DnsEntry", "DnsOptions", "LastError", "SecurityGroup", "IpPermission", "IpRange",
        "Ipv6Range", "PrefixListId", "UserIdGroupPair", "NetworkAcl", "NetworkAclEntry", "NetworkAclAssociation", "PortRange",
        "IcmpTypeCode", "NatGateway", "NatGatewayAddress", "PrefixList", "DhcpOptions", "DhcpConfiguration", "AttributeValue",
        "AttributeBooleanValue", "Vpc", "VpcCidrBlockAssociation", "VpcCidrBlockState", "Reservation", "GroupIdentifier", "Instance",
        "InstanceState", "Placement", "Monitoring", "IamInstanceProfile", "PrivateDnsNameOptionsOnLaunch", "SubnetIpv6CidrBlockAssociation",
        "DescribeSubnetsOutput", "DescribeRouteTablesOutput", "DescribeVpcEndpointsOutput", "DescribeSecurityGroupsOutput",
        "DescribeNetworkAclsOutput", "DescribeNatGatewaysOutput", "DescribePrefixListsOutput", "DescribeDhcpOptionsOutput",
        "DescribeVpcsOutput", "DescribeInstancesOutput", "DescribeVpcAttributeOutput"]
sel = {k: out[k] for k in keep if k in out}
missing = [k for k in keep if k not in out]
if missing:
    print("missing:", missing, file=sys.stderr)
json.dump(sel, open("ec2names.json", "w"), indent=1, sort_keys=True)
