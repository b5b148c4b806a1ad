#!/usr/bin/env python3
"""Assembles two accounts from Cloud Custodian's placebo recordings (boto3's
real answers, saved as {"status_code": 200, "data": {...}} with
ResponseMetadata and datetimes as {"__class__": "datetime", ...}), at
cloud-custodian/cloud-custodian df800e9e94d0860e0d8fbfebd9bc5b9b2d50367d,
tests/data/placebo/. The EC2 files are copied byte for byte; the EKS files
are real recordings of the same account (644160558196) with the cluster's
VPC, subnets, name and region edited to place the cluster in the recorded
VPC (the edits are listed in README.md). Run from this folder with the
repository's path: python3 assemble.py /path/to/cloud-custodian. CI reads
the folders; nothing runs this there."""
import json, os, shutil, subprocess, sys

REPO = sys.argv[1]
COMMIT = "df800e9e94d0860e0d8fbfebd9bc5b9b2d50367d"

def show(path):
    return subprocess.check_output(["git", "-C", REPO, "show", f"{COMMIT}:tests/data/placebo/{path}"])

def copy(folder, src, name):
    with open(os.path.join(folder, name), "wb") as fh:
        fh.write(show(src))

def adapted(folder, src, name, edit):
    rec = json.loads(show(src))
    edit(rec["data"])
    with open(os.path.join(folder, name), "w") as fh:
        json.dump(rec, fh, indent=4)
        fh.write("\n")

def cluster(name, region, vpc, subnets):
    def edit(d):
        c = d["cluster"]
        c["name"] = name
        c["arn"] = f"arn:aws:eks:{region}:644160558196:cluster/{name}"
        c["endpoint"] = c["endpoint"].replace("us-east-1", region)
        c["identity"]["oidc"]["issuer"] = c["identity"]["oidc"]["issuer"].replace("us-east-1", region)
        c["resourcesVpcConfig"]["vpcId"] = vpc
        c["resourcesVpcConfig"]["subnetIds"] = subnets
    return edit

def nodegroup(cluster_name, region, ng, subnets):
    def edit(d):
        n = d["nodegroup"]
        n["nodegroupName"] = ng
        n["clusterName"] = cluster_name
        n["nodegroupArn"] = f"arn:aws:eks:{region}:644160558196:nodegroup/{cluster_name}/{ng}/b4bcf913-32c7-2459-26d9-66ee6025e572"
        n["subnets"] = subnets
        n["tags"] = {"ClusterName": cluster_name, "Name": ng}
    return edit

def nodegroups(names):
    def edit(d):
        d["nodegroups"] = names
    return edit

def account(folder, ec2, name, region, vpc, subnets):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for src, dst in ec2:
        copy(folder, src, dst)
    adapted(folder, "test_eks_addon_health/eks.DescribeCluster_1.json", "eks-describe-cluster.json", cluster(name, region, vpc, subnets))
    adapted(folder, "test_eks_nodegroup_delete/eks.ListNodegroups_1.json", "eks-list-nodegroups.json", nodegroups(["workers"]))
    adapted(folder, "test_eks_nodegroup_delete/eks.DescribeNodegroup_1.json", "eks-describe-nodegroup-workers.json", nodegroup(name, region, "workers", subnets))

# A VPC whose private subnets in us-west-2b and us-west-2c route 0.0.0.0/0 to a NAT
# gateway in us-west-2a (Custodian's cross-az-nat-gateway-route recording), with the
# S3 and DynamoDB gateway endpoints' pl- routes; the cluster's nodes in the three
# private subnets that route to that NAT gateway.
X = "test_cross_az_nat_gateway_route_filter/"
account("cross-az-nat", [(X + "ec2.DescribeSubnets_1.json", "ec2-describe-subnets.json"),
                         (X + "ec2.DescribeRouteTables_1.json", "ec2-describe-route-tables.json"),
                         (X + "ec2.DescribeNatGateways_1.json", "ec2-describe-nat-gateways.json")],
        "cross-az", "us-west-2", "vpc-012347c909f1f1896",
        ["subnet-0a57b9d3da96e4364", "subnet-06b85e2b5aac87c58", "subnet-01989283067fcc12f"])

# Three VPCs in one listing (Custodian's route-table subnet filter recording: the
# default VPC, a kops cluster's VPC with instance routes for pod CIDRs, and a VPC with
# an S3 gateway endpoint route), unfiltered: each VPC's main route table is there.
# The cluster's nodes in the default VPC's three subnets, which have no explicit
# association: their table is their own VPC's main one.
R = "test_rt_subnet_filter/"
account("multi-vpc", [(R + "ec2.DescribeSubnets_1.json", "ec2-describe-subnets.json"),
                      (R + "ec2.DescribeRouteTables_1.json", "ec2-describe-route-tables.json")],
        "default-vpc", "us-west-2", "vpc-399e3d52",
        ["subnet-3f9e3d54", "subnet-389e3d53", "subnet-3e9e3d55"])
