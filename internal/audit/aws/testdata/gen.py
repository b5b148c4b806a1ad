#!/usr/bin/env python3
"""Writes the audit's fixture accounts in the AWS CLI v2's own shapes.

The CLI prints json.dumps(..., indent=4) of the parsed response, members in
the order of the service's response; this writes the same. Run from this
folder: python3 gen.py (the Go tests read the folders it writes, never this
script). Every fail-* folder is valid-healthy (or valid-healthy-nat) with one
thing changed, named by the folder.
"""
import copy, json, os, shutil

ACCT = "111122223333"
REGION = "us-east-1"
CLUSTER = "prod"
VPC = "vpc-0f1e2d3c4b5a69788"
SUB = {"a": "subnet-0a1a1a1a1a1a1a1a1", "b": "subnet-0b2b2b2b2b2b2b2b2", "c": "subnet-0c3c3c3c3c3c3c3c3"}
PUB = {"a": "subnet-0d4d4d4d4d4d4d4d4", "b": "subnet-0e5e5e5e5e5e5e5e5", "c": "subnet-0f6f6f6f6f6f6f6f6"}
CIDR = {"a": "10.0.1.0/24", "b": "10.0.2.0/24", "c": "10.0.3.0/24"}
PCIDR = {"a": "10.0.101.0/24", "b": "10.0.102.0/24", "c": "10.0.103.0/24"}
RTB = {"a": "rtb-0a0a0a0a0a0a0a0a0", "b": "rtb-0b0b0b0b0b0b0b0b0", "c": "rtb-0c0c0c0c0c0c0c0c0"}
RTB_MAIN = "rtb-0f0f0f0f0f0f0f0f0"
RTB_PUB = "rtb-0e0e0e0e0e0e0e0e0"
IGW = "igw-0123456789abcdef0"
NAT = {"a": "nat-0a1b2c3d4e5f6a7b8", "b": "nat-0b1b2c3d4e5f6a7b8", "c": "nat-0c1b2c3d4e5f6a7b8"}
SG_CLUSTER = "sg-0c1a55e7c1a55e7c1"
SG_EP = "sg-0e9d0e9d0e9d0e9d0"
SG_DEFAULT = "sg-0defa017defa017de"
VPCE_API = "vpce-0a11a11a11a11a11a"
VPCE_DKR = "vpce-0d22d22d22d22d22d"
VPCE_S3 = "vpce-05335335335335335"
PL = "pl-63a5400a"
ACL = "acl-0d0d0d0d0d0d0d0d0"
DOPT = "dopt-0a0b0c0d0e0f01234"
ROLE = "arn:aws:iam::%s:role/prod-node-role" % ACCT
TS = "2026-11-02T09:14:27+00:00"
EKS_TS = "2026-10-20T08:01:15.913000+00:00"
AZ = {"a": "us-east-1a", "b": "us-east-1b", "c": "us-east-1c"}
AZID = {"a": "use1-az1", "b": "use1-az2", "c": "use1-az4"}
FULL_POLICY = "{\"Version\":\"2008-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"*\",\"Resource\":\"*\"}]}"


def cluster():
    return {"cluster": {
        "name": CLUSTER,
        "arn": "arn:aws:eks:%s:%s:cluster/%s" % (REGION, ACCT, CLUSTER),
        "createdAt": EKS_TS,
        "version": "1.33",
        "endpoint": "https://9A8B7C6D5E4F3A2B1C0D.gr7.us-east-1.eks.amazonaws.com",
        "roleArn": "arn:aws:iam::%s:role/prod-cluster-role" % ACCT,
        "resourcesVpcConfig": {
            "subnetIds": [SUB["a"], SUB["b"], SUB["c"]],
            "securityGroupIds": [],
            "clusterSecurityGroupId": SG_CLUSTER,
            "vpcId": VPC,
            "endpointPublicAccess": True,
            "endpointPrivateAccess": True,
            "publicAccessCidrs": ["0.0.0.0/0"],
        },
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "172.20.0.0/16", "ipFamily": "ipv4"},
        "status": "ACTIVE",
        "certificateAuthority": {"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
        "platformVersion": "eks.9",
        "tags": {},
    }}


def nodegroup(name, subnets, capacity="ON_DEMAND"):
    return {"nodegroup": {
        "nodegroupName": name,
        "nodegroupArn": "arn:aws:eks:%s:%s:nodegroup/%s/%s/5ac9b2f1-0000-4f7e-9c1a-1d2e3f4a5b6c" % (REGION, ACCT, CLUSTER, name),
        "clusterName": CLUSTER,
        "version": "1.33",
        "releaseVersion": "1.33.5-20261015",
        "createdAt": EKS_TS,
        "modifiedAt": EKS_TS,
        "status": "ACTIVE",
        "capacityType": capacity,
        "scalingConfig": {"minSize": 1, "maxSize": 10, "desiredSize": 2},
        "instanceTypes": ["m6i.large"],
        "subnets": subnets,
        "amiType": "AL2023_x86_64_STANDARD",
        "nodeRole": ROLE,
        "labels": {},
        "resources": {"autoScalingGroups": [{"name": "eks-%s-5ac9b2f1" % name}]},
        "diskSize": 20,
        "health": {"issues": []},
        "updateConfig": {"maxUnavailable": 1},
        "tags": {},
    }}


def instance(iid, az, subnet, ip, ng, public_ip=None):
    i = {
        "AmiLaunchIndex": 0,
        "ImageId": "ami-0123456789abcdef0",
        "InstanceId": iid,
        "InstanceType": "m6i.large",
        "LaunchTime": TS,
        "Monitoring": {"State": "disabled"},
        "Placement": {"AvailabilityZone": AZ[az], "GroupName": "", "Tenancy": "default"},
        "PrivateDnsName": "ip-%s.ec2.internal" % ip.replace(".", "-"),
        "PrivateIpAddress": ip,
        "ProductCodes": [],
        "PublicDnsName": "",
        "State": {"Code": 16, "Name": "running"},
        "StateTransitionReason": "",
        "SubnetId": subnet,
        "VpcId": VPC,
        "Architecture": "x86_64",
        "IamInstanceProfile": {"Arn": "arn:aws:iam::%s:instance-profile/eks-5ac9b2f1" % ACCT, "Id": "AIPAEXAMPLEPROFILE01"},
        "SecurityGroups": [{"GroupName": "eks-cluster-sg-prod-1234567890", "GroupId": SG_CLUSTER}],
        "Tags": [
            {"Key": "eks:cluster-name", "Value": CLUSTER},
            {"Key": "eks:nodegroup-name", "Value": ng},
            {"Key": "kubernetes.io/cluster/prod", "Value": "owned"},
        ],
    }
    if public_ip:
        i["PublicIpAddress"] = public_ip
    return i


def instances():
    rs = []
    for n, (iid, az, ip, ng) in enumerate([
        ("i-0a00000000000a001", "a", "10.0.1.17", "general"),
        ("i-0a00000000000a002", "a", "10.0.1.54", "general"),
        ("i-0b00000000000b001", "b", "10.0.2.33", "general"),
        ("i-0c00000000000c001", "c", "10.0.3.17", "spot-workers"),
    ]):
        rs.append({"ReservationId": "r-0%016x" % (n + 1), "OwnerId": ACCT, "Groups": [],
                   "Instances": [instance(iid, az, SUB[az], ip, ng)]})
    return {"Reservations": rs}


def subnet(sid, az, cidr, name, public=False):
    return {
        "AvailabilityZone": AZ[az],
        "AvailabilityZoneId": AZID[az],
        "AvailableIpAddressCount": 240,
        "CidrBlock": cidr,
        "DefaultForAz": False,
        "MapPublicIpOnLaunch": public,
        "State": "available",
        "SubnetId": sid,
        "VpcId": VPC,
        "OwnerId": ACCT,
        "AssignIpv6AddressOnCreation": False,
        "Ipv6CidrBlockAssociationSet": [],
        "Tags": [{"Key": "Name", "Value": name}],
        "SubnetArn": "arn:aws:ec2:%s:%s:subnet/%s" % (REGION, ACCT, sid),
        "EnableDns64": False,
        "Ipv6Native": False,
        "PrivateDnsNameOptionsOnLaunch": {"HostnameType": "ip-name", "EnableResourceNameDnsARecord": False, "EnableResourceNameDnsAAAARecord": False},
    }


def subnets():
    out = [subnet(SUB[z], z, CIDR[z], "prod-private-" + AZ[z]) for z in "abc"]
    out += [subnet(PUB[z], z, PCIDR[z], "prod-public-" + AZ[z], True) for z in "abc"]
    return {"Subnets": out}


def local_route():
    return {"DestinationCidrBlock": "10.0.0.0/16", "GatewayId": "local", "Origin": "CreateRouteTable", "State": "active"}


def assoc(rtb, sid=None, main=False, n=1):
    a = {"Main": main, "RouteTableAssociationId": "rtbassoc-0%016x" % n, "RouteTableId": rtb}
    if sid:
        a["SubnetId"] = sid
    a["AssociationState"] = {"State": "associated"}
    return a


def route_tables(nat=False):
    tables = []
    n = 1
    tables.append({"Associations": [assoc(RTB_MAIN, main=True, n=n)], "PropagatingVgws": [], "RouteTableId": RTB_MAIN,
                   "Routes": [local_route()], "Tags": [{"Key": "Name", "Value": "prod-main"}], "VpcId": VPC, "OwnerId": ACCT})
    for z in "abc":
        n += 1
        routes = [local_route(), {"DestinationPrefixListId": PL, "GatewayId": VPCE_S3, "Origin": "CreateRoute", "State": "active"}]
        if nat:
            routes.append({"DestinationCidrBlock": "0.0.0.0/0", "NatGatewayId": NAT[z], "Origin": "CreateRoute", "State": "active"})
        tables.append({"Associations": [assoc(RTB[z], SUB[z], n=n)], "PropagatingVgws": [], "RouteTableId": RTB[z],
                       "Routes": routes, "Tags": [{"Key": "Name", "Value": "prod-private-" + AZ[z]}], "VpcId": VPC, "OwnerId": ACCT})
    pub_assocs = []
    for z in "abc":
        n += 1
        pub_assocs.append(assoc(RTB_PUB, PUB[z], n=n))
    tables.append({"Associations": pub_assocs, "PropagatingVgws": [], "RouteTableId": RTB_PUB,
                   "Routes": [local_route(), {"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": IGW, "Origin": "CreateRoute", "State": "active"}],
                   "Tags": [{"Key": "Name", "Value": "prod-public"}], "VpcId": VPC, "OwnerId": ACCT})
    return {"RouteTables": tables}


def iface_endpoint(vid, svc, subnets=None, private_dns=True):
    subnets = subnets or [SUB["a"], SUB["b"], SUB["c"]]
    name = "com.amazonaws.%s.%s" % (REGION, svc)
    host = {"ecr.api": "api.ecr.%s.amazonaws.com" % REGION, "ecr.dkr": "*.dkr.ecr.%s.amazonaws.com" % REGION}[svc]
    return {
        "VpcEndpointId": vid,
        "VpcEndpointType": "Interface",
        "VpcId": VPC,
        "ServiceName": name,
        "State": "available",
        "PolicyDocument": FULL_POLICY,
        "RouteTableIds": [],
        "SubnetIds": subnets,
        "Groups": [{"GroupId": SG_EP, "GroupName": "prod-vpce"}],
        "IpAddressType": "ipv4",
        "DnsOptions": {"DnsRecordIpType": "ipv4"},
        "PrivateDnsEnabled": private_dns,
        "RequesterManaged": False,
        "NetworkInterfaceIds": ["eni-0%s%s" % (vid[5:9], "%012x" % i) for i in range(len(subnets))],
        "DnsEntries": [
            {"DnsName": "%s-1a2b3c4d.%s.vpce.amazonaws.com" % (vid, svc.replace(".", "-") if False else svc.split(".")[1] + "." + "ecr." + REGION), "HostedZoneId": "Z7HUB22UULQXV"},
            {"DnsName": host, "HostedZoneId": "ZONEIDPENDING"},
        ],
        "CreationTimestamp": TS,
        "Tags": [],
        "OwnerId": ACCT,
    }


def s3_gateway(route_tables=None, policy=FULL_POLICY):
    return {
        "VpcEndpointId": VPCE_S3,
        "VpcEndpointType": "Gateway",
        "VpcId": VPC,
        "ServiceName": "com.amazonaws.%s.s3" % REGION,
        "State": "available",
        "PolicyDocument": policy,
        "RouteTableIds": route_tables if route_tables is not None else [RTB["a"], RTB["b"], RTB["c"]],
        "SubnetIds": [],
        "Groups": [],
        "IpAddressType": "ipv4",
        "PrivateDnsEnabled": False,
        "RequesterManaged": False,
        "NetworkInterfaceIds": [],
        "DnsEntries": [],
        "CreationTimestamp": TS,
        "Tags": [],
        "OwnerId": ACCT,
    }


def endpoints(ecr=True):
    eps = []
    if ecr:
        eps += [iface_endpoint(VPCE_API, "ecr.api"), iface_endpoint(VPCE_DKR, "ecr.dkr")]
    eps.append(s3_gateway())
    return {"VpcEndpoints": eps}


def perm(proto="-1", from_port=None, to_port=None, cidrs=(), groups=(), pls=()):
    p = {}
    if from_port is not None:
        p["FromPort"] = from_port
    p["IpProtocol"] = proto
    p["IpRanges"] = [{"CidrIp": c} for c in cidrs]
    p["Ipv6Ranges"] = []
    p["PrefixListIds"] = [{"PrefixListId": x} for x in pls]
    if to_port is not None:
        p["ToPort"] = to_port
    p["UserIdGroupPairs"] = [{"GroupId": g, "UserId": ACCT} for g in groups]
    return p


def security_groups():
    return {"SecurityGroups": [
        {"Description": "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
         "GroupName": "eks-cluster-sg-prod-1234567890",
         "IpPermissions": [perm(groups=[SG_CLUSTER])],
         "OwnerId": ACCT, "GroupId": SG_CLUSTER,
         "IpPermissionsEgress": [perm(cidrs=["0.0.0.0/0"])],
         "Tags": [{"Key": "aws:eks:cluster-name", "Value": CLUSTER}], "VpcId": VPC},
        {"Description": "VPC endpoints for ECR", "GroupName": "prod-vpce",
         "IpPermissions": [perm("tcp", 443, 443, groups=[SG_CLUSTER])],
         "OwnerId": ACCT, "GroupId": SG_EP,
         "IpPermissionsEgress": [perm(cidrs=["0.0.0.0/0"])],
         "Tags": [], "VpcId": VPC},
        {"Description": "default VPC security group", "GroupName": "default",
         "IpPermissions": [perm(groups=[SG_DEFAULT])],
         "OwnerId": ACCT, "GroupId": SG_DEFAULT,
         "IpPermissionsEgress": [perm(cidrs=["0.0.0.0/0"])],
         "Tags": [], "VpcId": VPC},
    ]}


def entry(n, egress, action, cidr="0.0.0.0/0", proto="-1", ports=None):
    e = {"CidrBlock": cidr, "Egress": egress}
    if ports:
        e["PortRange"] = {"From": ports[0], "To": ports[1]}
    e.update({"Protocol": proto, "RuleAction": action, "RuleNumber": n})
    return e


def default_entries():
    return [entry(100, True, "allow"), entry(32767, True, "deny"), entry(100, False, "allow"), entry(32767, False, "deny")]


def acl(aid, subnets, entries, default=False):
    return {
        "Associations": [{"NetworkAclAssociationId": "aclassoc-0%s%04x" % (aid[5:17], i), "NetworkAclId": aid, "SubnetId": s} for i, s in enumerate(subnets)],
        "Entries": entries,
        "IsDefault": default,
        "NetworkAclId": aid,
        "Tags": [],
        "VpcId": VPC,
        "OwnerId": ACCT,
    }


def network_acls():
    all_subnets = [SUB[z] for z in "abc"] + [PUB[z] for z in "abc"]
    return {"NetworkAcls": [acl(ACL, all_subnets, default_entries(), True)]}


def nat_gateways(nat=False):
    if not nat:
        return {"NatGateways": []}
    out = []
    for z in "abc":
        out.append({
            "CreateTime": TS,
            "NatGatewayAddresses": [{"AllocationId": "eipalloc-0%016x" % ord(z), "NetworkInterfaceId": "eni-0%016x" % (0x100 + ord(z)),
                                     "PrivateIp": "10.0.10%d.10" % ("abc".index(z) + 1), "PublicIp": "3.%d.12.34" % (200 + "abc".index(z)),
                                     "AssociationId": "eipassoc-0%016x" % ord(z), "IsPrimary": True, "Status": "succeeded"}],
            "NatGatewayId": NAT[z],
            "State": "available",
            "SubnetId": PUB[z],
            "VpcId": VPC,
            "Tags": [{"Key": "Name", "Value": "prod-nat-" + AZ[z]}],
            "ConnectivityType": "public",
        })
    return {"NatGateways": out}


def prefix_lists():
    return {"PrefixLists": [{"PrefixListId": PL, "PrefixListName": "com.amazonaws.%s.s3" % REGION,
                             "Cidrs": ["3.5.0.0/19", "16.15.176.0/20", "16.182.0.0/16", "18.34.0.0/19", "52.216.0.0/15", "54.231.0.0/16"]}]}


def dhcp(servers=("AmazonProvidedDNS",)):
    return {"DhcpOptions": [{
        "DhcpConfigurations": [
            {"Key": "domain-name", "Values": [{"Value": "ec2.internal"}]},
            {"Key": "domain-name-servers", "Values": [{"Value": s} for s in servers]},
        ],
        "DhcpOptionsId": DOPT, "OwnerId": ACCT, "Tags": []}]}


def vpcs():
    return {"Vpcs": [{"OwnerId": ACCT, "InstanceTenancy": "default",
                      "CidrBlockAssociationSet": [{"AssociationId": "vpc-cidr-assoc-0123456789abcdef0", "CidrBlock": "10.0.0.0/16", "CidrBlockState": {"State": "associated"}}],
                      "IsDefault": False, "Tags": [{"Key": "Name", "Value": "prod"}], "VpcId": VPC, "State": "available",
                      "CidrBlock": "10.0.0.0/16", "DhcpOptionsId": DOPT}]}


CACHE_ACTIONS = ["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]


def simulate(decisions=None):
    decisions = decisions or {}
    out = []
    for a in ["ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"] + CACHE_ACTIONS:
        d = decisions.get(a, "allowed")
        r = {"EvalActionName": a, "EvalResourceName": "*", "EvalDecision": d}
        if d == "allowed":
            pol = "ecr-pull-through-cache" if a in CACHE_ACTIONS else "AmazonEC2ContainerRegistryReadOnly"
            r["MatchedStatements"] = [{"SourcePolicyId": pol, "SourcePolicyType": "IAM Policy",
                                       "StartPosition": {"Line": 3, "Column": 17}, "EndPosition": {"Line": 16, "Column": 6}}]
        elif d == "explicitDeny":
            r["MatchedStatements"] = [{"SourcePolicyId": "deny-ecr-pull", "SourcePolicyType": "IAM Policy",
                                       "StartPosition": {"Line": 3, "Column": 17}, "EndPosition": {"Line": 9, "Column": 6}}]
        else:
            r["MatchedStatements"] = []
        r["MissingContextValues"] = []
        out.append(r)
    return {"EvaluationResults": out, "IsTruncated": False}


def account(nat=False):
    files = {
        "eks-describe-cluster.json": cluster(),
        "eks-list-nodegroups.json": {"nodegroups": ["general", "spot-workers"]},
        "eks-describe-nodegroup-general.json": nodegroup("general", [SUB["a"], SUB["b"]]),
        "eks-describe-nodegroup-spot-workers.json": nodegroup("spot-workers", [SUB["c"]], "SPOT"),
        "ec2-describe-instances.json": instances(),
        "ec2-describe-subnets.json": subnets(),
        "ec2-describe-route-tables.json": route_tables(nat),
        "ec2-describe-vpc-endpoints.json": endpoints(ecr=not nat),
        "ec2-describe-security-groups.json": security_groups(),
        "ec2-describe-network-acls.json": network_acls(),
        "ec2-describe-nat-gateways.json": nat_gateways(nat),
        "ec2-describe-prefix-lists.json": prefix_lists(),
        "ec2-describe-vpc-attribute-enableDnsSupport.json": {"VpcId": VPC, "EnableDnsSupport": {"Value": True}},
        "ec2-describe-vpc-attribute-enableDnsHostnames.json": {"VpcId": VPC, "EnableDnsHostnames": {"Value": True}},
        "ec2-describe-dhcp-options.json": dhcp(),
        "ec2-describe-vpcs.json": vpcs(),
        "iam-simulate-principal-policy.json": simulate(),
    }
    return files


def ep(files, vid):
    for e in files["ec2-describe-vpc-endpoints.json"]["VpcEndpoints"]:
        if e["VpcEndpointId"] == vid:
            return e
    raise KeyError(vid)


def rtb(files, rid):
    for t in files["ec2-describe-route-tables.json"]["RouteTables"]:
        if t["RouteTableId"] == rid:
            return t
    raise KeyError(rid)


def sg(files, gid):
    for g in files["ec2-describe-security-groups.json"]["SecurityGroups"]:
        if g["GroupId"] == gid:
            return g
    raise KeyError(gid)


def write(name, files):
    if os.path.isdir(name):
        shutil.rmtree(name)
    os.makedirs(name)
    for fn, doc in files.items():
        with open(os.path.join(name, fn), "w") as f:
            f.write(json.dumps(doc, indent=4, ensure_ascii=False) + "\n")


EIGW = "eigw-0123456789abcdef0"
SG_V6 = "sg-0a6a6a6a6a6a6a6a6"
V6 = "2600:1f18:1234:5600::/56"
V6SUB = {"a": "2600:1f18:1234:5601::/64", "b": "2600:1f18:1234:5602::/64", "c": "2600:1f18:1234:5603::/64"}
DUALSTACK_IMAGE = "%s.dkr-ecr.%s.on.aws/shop/checkout:1.4.2" % (ACCT, REGION)


def v6_assoc(z):
    return [{"AssociationId": "subnet-cidr-assoc-0%016x" % ord(z), "Ipv6CidrBlock": V6SUB[z],
             "Ipv6CidrBlockState": {"State": "associated"}, "Ipv6AddressAttribute": "public", "IpSource": "amazon"}]


def healthy_ipv6():
    """The NAT account with subnet b dual-stack and subnet c IPv6-only (the
    VPC guide's IPv6-only subnet: no IPv4 CIDR, DNS64 on, 64:ff9b::/96 to
    the NAT gateway, ::/0 to the egress-only internet gateway); its nodes
    in an IPv6 security group."""
    f = account(nat=True)
    f["eks-describe-cluster.json"]["cluster"]["kubernetesNetworkConfig"] = {"serviceIpv6Cidr": "fd30:1c53:5f8a::/108", "ipFamily": "ipv6"}
    v = f["ec2-describe-vpcs.json"]["Vpcs"][0]
    v["Ipv6CidrBlockAssociationSet"] = [{"AssociationId": "vpc-cidr-assoc-0fedcba9876543210", "Ipv6CidrBlock": V6,
                                         "Ipv6CidrBlockState": {"State": "associated"}, "NetworkBorderGroup": REGION, "Ipv6Pool": "Amazon"}]
    for s in f["ec2-describe-subnets.json"]["Subnets"]:
        if s["SubnetId"] == SUB["b"]:
            s["Ipv6CidrBlockAssociationSet"] = v6_assoc("b")
            s["AssignIpv6AddressOnCreation"] = True
        if s["SubnetId"] == SUB["c"]:
            del s["CidrBlock"]
            s["AvailableIpAddressCount"] = 0
            s["Ipv6CidrBlockAssociationSet"] = v6_assoc("c")
            s["AssignIpv6AddressOnCreation"] = True
            s["EnableDns64"] = True
            s["Ipv6Native"] = True
            s["PrivateDnsNameOptionsOnLaunch"] = {"HostnameType": "resource-name", "EnableResourceNameDnsARecord": False, "EnableResourceNameDnsAAAARecord": True}
    v6local = {"DestinationIpv6CidrBlock": V6, "GatewayId": "local", "Origin": "CreateRouteTable", "State": "active"}
    eigw = {"DestinationIpv6CidrBlock": "::/0", "EgressOnlyInternetGatewayId": EIGW, "Origin": "CreateRoute", "State": "active"}
    t = rtb(f, RTB["b"])
    t["Routes"] += [dict(v6local), dict(eigw)]
    t = rtb(f, RTB["c"])
    t["Routes"] = [r for r in t["Routes"] if "DestinationPrefixListId" not in r and r.get("DestinationCidrBlock") != "0.0.0.0/0"]
    t["Routes"] += [dict(v6local), dict(eigw),
                    {"DestinationIpv6CidrBlock": "64:ff9b::/96", "NatGatewayId": NAT["c"], "Origin": "CreateRoute", "State": "active"}]
    ep(f, VPCE_S3)["RouteTableIds"] = [RTB["a"], RTB["b"]]
    # AWS's default ACL of a VPC with IPv6: rules 101 allow ::/0, * deny.
    for a in f["ec2-describe-network-acls.json"]["NetworkAcls"]:
        a["Entries"] = v6_entries(a["Entries"])
    for g in f["ec2-describe-security-groups.json"]["SecurityGroups"]:
        if g["GroupId"] == SG_CLUSTER:
            g["IpPermissionsEgress"][0]["Ipv6Ranges"] = [{"CidrIpv6": "::/0"}]
    f["ec2-describe-security-groups.json"]["SecurityGroups"].append(
        {"Description": "IPv6-only nodes", "GroupName": "prod-ipv6-nodes",
         "IpPermissions": [perm(groups=[SG_V6])],
         "OwnerId": ACCT, "GroupId": SG_V6,
         "IpPermissionsEgress": [dict(perm(cidrs=["0.0.0.0/0"]), Ipv6Ranges=[{"CidrIpv6": "::/0"}])],
         "Tags": [], "VpcId": VPC})
    for r in f["ec2-describe-instances.json"]["Reservations"]:
        for i in r["Instances"]:
            if i["SubnetId"] == SUB["b"]:
                i["Ipv6Address"] = "2600:1f18:1234:5602::33"
            if i["SubnetId"] == SUB["c"]:
                del i["PrivateIpAddress"]
                i["PrivateDnsName"] = "%s.ec2.internal" % i["InstanceId"]
                i["Ipv6Address"] = "2600:1f18:1234:5603::17"
                i["SecurityGroups"] = [{"GroupName": "prod-ipv6-nodes", "GroupId": SG_V6}]
    return f


def v6_entries(entries):
    out = []
    for e in entries:
        out.append(e)
        if e["RuleNumber"] == 100:
            out.append({"Egress": e["Egress"], "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "allow", "RuleNumber": 101})
        if e["RuleNumber"] == 32767:
            out.append({"Egress": e["Egress"], "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 32768})
    return out


def subnet_of(files, sid):
    for s in files["ec2-describe-subnets.json"]["Subnets"]:
        if s["SubnetId"] == sid:
            return s
    raise KeyError(sid)


def ipv6_fixtures():
    yield "valid-healthy-ipv6", healthy_ipv6(), None

    f = healthy_ipv6()
    subnet_of(f, SUB["c"])["EnableDns64"] = False
    yield "fail-ipv6-dns64-off", f, "dns64-nat64"

    f = healthy_ipv6()
    t = rtb(f, RTB["c"])
    t["Routes"] = [r for r in t["Routes"] if r.get("DestinationIpv6CidrBlock") != "64:ff9b::/96"]
    yield "fail-ipv6-nat64-route", f, "dns64-nat64"

    f = healthy_ipv6()
    subnet_of(f, SUB["b"])["EnableDns64"] = True
    yield "warn-dualstack-dns64-no-nat64", f, "dns64-nat64"

    f = healthy_ipv6()
    acls = f["ec2-describe-network-acls.json"]["NetworkAcls"]
    acls[0]["Associations"] = [a for a in acls[0]["Associations"] if a["SubnetId"] != SUB["c"]]
    # An ACL written for IPv4 only: IPv6 meets its * deny.
    acls.append(acl("acl-0c3c3c3c3c3c3c3c3", [SUB["c"]], [
        entry(100, True, "allow"), entry(32767, True, "deny"), entry(100, False, "allow"), entry(32767, False, "deny"),
        {"Egress": True, "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 32768},
        {"Egress": False, "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 32768}]))
    yield "fail-ipv6-nacl", f, "nacl-node-ipv6"

    f = healthy_ipv6()
    sg(f, SG_V6)["IpPermissionsEgress"] = [perm(cidrs=["0.0.0.0/0"])]
    yield "fail-ipv6-sg-egress", f, "sg-node-egress-443-ipv6"

    # With the dual-stack registry name (the test focuses these on
    # DUALSTACK_IMAGE): the registry has AAAA records.
    f = healthy_ipv6()
    t = rtb(f, RTB["c"])
    t["Routes"] = [r for r in t["Routes"] if r.get("DestinationIpv6CidrBlock") != "::/0"]
    yield "fail-ipv6-route-dualstack-name", f, "route-ipv6"

    f = healthy_ipv6()
    t = rtb(f, RTB["b"])
    t["Routes"] = [r for r in t["Routes"] if r.get("DestinationIpv6CidrBlock") != "::/0"]
    yield "warn-dualstack-route-dualstack-name", f, "route-ipv6"

    f = healthy_ipv6()
    acls = f["ec2-describe-network-acls.json"]["NetworkAcls"]
    acls[0]["Associations"] = [a for a in acls[0]["Associations"] if a["SubnetId"] != SUB["b"]]
    acls.append(acl("acl-0b2b2b2b2b2b2b2b2", [SUB["b"]], [
        entry(100, True, "allow"), entry(32767, True, "deny"), entry(100, False, "allow"), entry(32767, False, "deny"),
        {"Egress": True, "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 32768},
        {"Egress": False, "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 32768}]))
    yield "warn-dualstack-nacl-dualstack-name", f, "nacl-node-ipv6"

    # The dual-stack name in a private VPC: PrivateLink serves only the
    # IPv4 name.
    yield "fail-privatelink-dualstack-name", account(), "endpoint-ecr-dkr"


# The ECR pull-through cache (issue 39): a rule caching Docker Hub under docker-hub/
# with its credentials in Secrets Manager, and one caching ECR Public anonymously;
# the image docker-hub/library/nginx not cached yet (its repository does not exist),
# a ROOT repository creation template for the cache's repositories, no registry
# policy. Not-found answers are written as boto3's error dict.
PTC_IMAGE = "%s.dkr.ecr.%s.amazonaws.com/docker-hub/library/nginx:1.27" % (ACCT, REGION)
SECRET_NAME = "ecr-pullthroughcache/docker-hub"
SECRET_ARN = "arn:aws:secretsmanager:%s:%s:secret:%s-Xy12Ab" % (REGION, ACCT, SECRET_NAME)
TEMPLATE_ROLE = "arn:aws:iam::%s:role/ecr-repository-creation" % ACCT


def cache_rules(cred=SECRET_ARN):
    hub = {"ecrRepositoryPrefix": "docker-hub", "upstreamRegistryUrl": "registry-1.docker.io", "createdAt": TS,
           "registryId": ACCT, "credentialArn": cred, "upstreamRegistry": "docker-hub", "updatedAt": TS,
           "upstreamRepositoryPrefix": "ROOT"}
    public = {"ecrRepositoryPrefix": "ecr-public", "upstreamRegistryUrl": "public.ecr.aws", "createdAt": TS,
              "registryId": ACCT, "upstreamRegistry": "ecr-public", "updatedAt": TS, "upstreamRepositoryPrefix": "ROOT"}
    return {"pullThroughCacheRules": [public, hub]}


def templates(role=TEMPLATE_ROLE):
    # resource tags on the cache's new repositories: ECR applies them as the
    # template's customRoleArn (without one, creating the repository fails:
    # aws/containers-roadmap #2398)
    t = {"prefix": "ROOT", "description": "repositories the pull-through cache creates",
         "encryptionConfiguration": {"encryptionType": "AES256"}, "resourceTags": [{"Key": "team", "Value": "platform"}],
         "imageTagMutability": "MUTABLE", "repositoryPolicy": "", "lifecyclePolicy": "", "appliedFor": ["PULL_THROUGH_CACHE"],
         "createdAt": TS, "updatedAt": TS}
    if role:
        t["customRoleArn"] = role
    return {"registryId": ACCT, "repositoryCreationTemplates": [t]}


def api_error(code, message):
    return {"Error": {"Code": code, "Message": message}}


def secret(name=SECRET_NAME, arn=SECRET_ARN):
    return {"ARN": arn, "Name": name, "LastChangedDate": TS, "LastAccessedDate": "2026-11-02T00:00:00+00:00",
            "VersionIdsToStages": {"3f1c9a2e-7b4d-4e8a-9c1f-0a2b3c4d5e6f": ["AWSCURRENT"]}, "CreatedDate": TS}


def cached(f):
    f["ecr-describe-pull-through-cache-rules.json"] = cache_rules()
    f["ecr-describe-repository-creation-templates.json"] = templates()
    f["ecr-describe-repositories.json"] = api_error("RepositoryNotFoundException",
        "The repository with name 'docker-hub/library/nginx' does not exist in the registry with id '%s'" % ACCT)
    f["ecr-get-registry-policy.json"] = api_error("RegistryPolicyNotFoundException",
        "Registry policy does not exist in the registry with id '%s'" % ACCT)
    f["secretsmanager-describe-secret.json"] = secret()
    return f


def cache_fixtures():
    yield "valid-pull-through-cache", cached(account(nat=True)), None

    f = cached(account(nat=True))
    f["iam-simulate-principal-policy.json"] = simulate({"ecr:BatchImportUpstreamImage": "implicitDeny"})
    yield "fail-ptc-batch-import", f, "pull-through-cache-identity"

    f = cached(account(nat=True))
    f["iam-simulate-principal-policy.json"] = simulate({"ecr:CreateRepository": "implicitDeny"})
    yield "fail-ptc-create-repository", f, "pull-through-cache-identity"

    f = cached(account(nat=True))
    f["ecr-describe-repository-creation-templates.json"] = templates(role=None)
    yield "fail-ptc-template-no-role", f, "pull-through-cache-template"

    f = cached(account(nat=True))
    arn = "arn:aws:secretsmanager:%s:%s:secret:dockerhub-creds-Q1w2E3" % (REGION, ACCT)
    f["ecr-describe-pull-through-cache-rules.json"] = cache_rules(arn)
    f["secretsmanager-describe-secret.json"] = secret("dockerhub-creds", arn)
    yield "fail-ptc-secret-name", f, "pull-through-cache-secret"

    f = cached(account(nat=True))
    f["secretsmanager-describe-secret.json"] = api_error("ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
    yield "fail-ptc-secret-missing", f, "pull-through-cache-secret"

    yield "warn-ptc-cache-miss-no-internet", cached(account()), "pull-through-cache-miss"


def fixtures():
    yield "valid-healthy", account(), None
    yield "valid-healthy-nat", account(nat=True), None

    f = account()
    f["ec2-describe-vpc-attribute-enableDnsHostnames.json"]["EnableDnsHostnames"]["Value"] = False
    yield "fail-dns-hostnames", f, "dns-vpc-attributes"

    f = account()
    f["ec2-describe-vpc-attribute-enableDnsSupport.json"]["EnableDnsSupport"]["Value"] = False
    yield "fail-dns-support", f, "dns-vpc-attributes"

    f = account()
    f["ec2-describe-dhcp-options.json"] = dhcp(("8.8.8.8", "8.8.4.4"))
    yield "fail-dhcp-public-resolvers", f, "dns-dhcp-options"

    f = account()
    ep(f, VPCE_DKR)["PrivateDnsEnabled"] = False
    yield "fail-private-dns", f, "dns-private-dns"

    f = account()
    f["ec2-describe-vpc-endpoints.json"]["VpcEndpoints"] = [e for e in f["ec2-describe-vpc-endpoints.json"]["VpcEndpoints"] if e["VpcEndpointId"] != VPCE_API]
    yield "fail-endpoint-ecr-api-missing", f, "endpoint-ecr-api"

    f = account()
    e = ep(f, VPCE_DKR)
    e["SubnetIds"] = [SUB["a"], SUB["b"]]
    e["NetworkInterfaceIds"] = e["NetworkInterfaceIds"][:2]
    yield "fail-endpoint-ecr-dkr-placement", f, "endpoint-ecr-dkr"

    f = account()
    ep(f, VPCE_DKR)["State"] = "pending"
    yield "fail-endpoint-ecr-dkr-pending", f, "endpoint-ecr-dkr"

    f = account()
    ep(f, VPCE_DKR)["PolicyDocument"] = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*"},
        {"Sid": "NoImagePulls", "Effect": "Deny", "Principal": "*", "Action": ["ecr:BatchGetImage"], "Resource": "*"}]}, indent=2)
    yield "fail-endpoint-ecr-policy", f, "endpoint-ecr-policy"

    f = account()
    sg(f, SG_EP)["IpPermissions"] = [perm("tcp", 443, 443, cidrs=[CIDR["a"], CIDR["b"]])]
    yield "fail-sg-endpoint-ingress", f, "sg-endpoint-ingress-443"

    f = account()
    sg(f, SG_CLUSTER)["IpPermissionsEgress"] = [perm("tcp", 443, 443, cidrs=["10.0.0.0/16"]), perm(cidrs=["10.0.0.0/16"])]
    yield "fail-sg-node-egress", f, "sg-node-egress-443"

    f = account()
    t = rtb(f, RTB["c"])
    t["Routes"] = [r for r in t["Routes"] if "DestinationPrefixListId" not in r]
    ep(f, VPCE_S3)["RouteTableIds"] = [RTB["a"], RTB["b"]]
    yield "fail-s3-route", f, "s3-route"

    f = account()
    t = rtb(f, RTB["c"])
    t["Routes"] = [r for r in t["Routes"] if "DestinationPrefixListId" not in r]
    yield "fail-s3-route-listed-no-route", f, "s3-route"

    f = account()
    for r in rtb(f, RTB["c"])["Routes"]:
        if "DestinationPrefixListId" in r:
            r["State"] = "blackhole"
    yield "fail-s3-route-blackhole", f, "s3-route"

    f = account()
    t = rtb(f, RTB["c"])
    t["Associations"] = []
    yield "fail-main-route-table", f, "s3-route"

    f = account()
    ep(f, VPCE_S3)["PolicyDocument"] = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "OnlyOurBuckets", "Effect": "Allow", "Principal": "*", "Action": "s3:*", "Resource": ["arn:aws:s3:::prod-artifacts", "arn:aws:s3:::prod-artifacts/*"]}]}, indent=2)
    yield "fail-s3-endpoint-policy", f, "s3-endpoint-policy"

    f = account()
    f["ec2-describe-route-tables.json"]["RouteTables"] = [t for t in f["ec2-describe-route-tables.json"]["RouteTables"] if t["RouteTableId"] not in (RTB_MAIN, RTB["c"])]
    yield "fail-route-table", f, "route-table"

    f = account(nat=True)
    for r in rtb(f, RTB["c"])["Routes"]:
        if r.get("DestinationCidrBlock") == "0.0.0.0/0":
            r["State"] = "blackhole"
    f["ec2-describe-nat-gateways.json"]["NatGateways"][2]["State"] = "deleted"
    f["ec2-describe-nat-gateways.json"]["NatGateways"][2]["DeleteTime"] = TS
    yield "fail-nat-blackhole", f, "route-internet"

    f = account(nat=True)
    f["ec2-describe-nat-gateways.json"]["NatGateways"][2]["State"] = "failed"
    f["ec2-describe-nat-gateways.json"]["NatGateways"][2]["FailureCode"] = "Gateway.NotAttached"
    f["ec2-describe-nat-gateways.json"]["NatGateways"][2]["FailureMessage"] = "Network vpc-0f1e2d3c4b5a69788 has no Internet gateway attached"
    yield "fail-nat-unavailable", f, "route-internet"

    f = account(nat=True)
    for r in rtb(f, RTB["c"])["Routes"]:
        if r.get("DestinationCidrBlock") == "0.0.0.0/0":
            r["NatGatewayId"] = NAT["a"]
    yield "warn-nat-other-az", f, "route-internet"

    f = account(nat=True)
    for r in rtb(f, RTB["c"])["Routes"]:
        if r.get("DestinationCidrBlock") == "0.0.0.0/0":
            del r["NatGatewayId"]
            r["GatewayId"] = IGW
    yield "fail-igw-no-public-ip", f, "route-internet"

    f = account()
    acls = f["ec2-describe-network-acls.json"]["NetworkAcls"]
    acls[0]["Associations"] = [a for a in acls[0]["Associations"] if a["SubnetId"] != SUB["c"]]
    # Replies from S3's public addresses are not let in: only the VPC is.
    acls.append(acl("acl-0c3c3c3c3c3c3c3c3", [SUB["c"]], [
        entry(100, True, "allow", "0.0.0.0/0", "6", (443, 443)),
        entry(110, True, "allow", "10.0.0.0/16", "6", (1024, 65535)),
        entry(32767, True, "deny"),
        entry(100, False, "allow", "10.0.0.0/16"),
        entry(32767, False, "deny")]))
    yield "fail-nacl-node", f, "nacl-node-subnet"

    f = account()
    acls = f["ec2-describe-network-acls.json"]["NetworkAcls"]
    acls[0]["Associations"] = [a for a in acls[0]["Associations"] if a["SubnetId"] != SUB["a"]]
    acls.append(acl("acl-0a1a1a1a1a1a1a1a1", [SUB["a"]], [
        entry(100, True, "allow"), entry(32767, True, "deny"),
        entry(90, False, "deny", CIDR["c"], "6", (443, 443)),
        entry(100, False, "allow"), entry(32767, False, "deny")]))
    yield "fail-nacl-endpoint-subnet", f, "nacl-path-subnets"

    f = account()
    f["iam-simulate-principal-policy.json"] = simulate({"ecr:BatchGetImage": "implicitDeny", "ecr:GetDownloadUrlForLayer": "implicitDeny"})
    yield "fail-identity", f, "identity-ecr-actions"

    f = account()
    f["iam-simulate-principal-policy.json"] = simulate({"ecr:GetAuthorizationToken": "explicitDeny"})
    yield "fail-identity-explicit-deny", f, "identity-ecr-actions"

    yield from ipv6_fixtures()
    yield from cache_fixtures()


if __name__ == "__main__":
    index = {}
    for name, files, check in fixtures():
        write(name, files)
        if check:
            index[name] = check
    with open("fixtures.json", "w") as f:
        f.write(json.dumps(index, indent=4) + "\n")
