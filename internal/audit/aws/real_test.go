package aws

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// realCLI lists the outputs in testdata/real-cli (copied from the AWS CLI's
// own documentation, see its README): each is decoded alone, then put in
// place of its contract file inside a healthy folder and audited. It must
// load (these are what the real CLI prints) and the audit must run; check
// asserts fields read from the example so a silent misread fails.
var realCLI = []struct {
	file, contract string
	check          func(t *testing.T, raw *Raw)
	// notPass: in place of the healthy file, the example describes
	// none of the cluster's objects, so the audit must not pass.
	notPass bool
	// notFail: the example leaves objects undescribed, which is a warn,
	// never a fail naming them.
	notFail bool
}{
	{"ec2-describe-route-tables.1.json", FileRouteTables, func(t *testing.T, raw *Raw) {
		rt := raw.RouteTables.RouteTables
		if len(rt) != 3 || str(rt[0].RouteTableId) != "rtb-09ba434c1bEXAMPLE" || string(rt[0].Routes[1].State) != "blackhole" || str(rt[0].Routes[1].NatGatewayId) != "nat-06c018cbd8EXAMPLE" {
			t.Errorf("route tables misread: %+v", rt)
		}
		if rt[0].Associations[0].Main == nil || !*rt[0].Associations[0].Main {
			t.Errorf("main association misread")
		}
	}, true, false},
	{"ec2-describe-vpc-endpoints.1.json", FileEndpoints, func(t *testing.T, raw *Raw) {
		ep := raw.Endpoints.VpcEndpoints
		if len(ep) != 3 || string(ep[1].VpcEndpointType) != "Interface" || len(ep[1].DnsEntries) != 3 || str(ep[1].Groups[0].GroupId) != "sg-54e8bf31" || ep[1].CreationTimestamp == nil || ep[1].CreationTimestamp.Year() != 2017 {
			t.Errorf("endpoints misread: %+v", ep)
		}
	}, false, false},
	{"ec2-describe-network-acls.1.json", FileNetworkACLs, func(t *testing.T, raw *Raw) {
		a := raw.NetworkACLs.NetworkAcls
		if len(a) != 2 || len(a[0].Entries) != 4 || *a[0].Entries[1].RuleNumber != 32767 || string(a[0].Entries[1].RuleAction) != "deny" {
			t.Errorf("nacls misread: %+v", a)
		}
		six := false
		for _, e := range a[1].Entries {
			if str(e.Ipv6CidrBlock) == "::/0" {
				six = true
			}
		}
		if !six {
			t.Errorf("Ipv6CidrBlock entry not read")
		}
	}, true, false},
	{"ec2-describe-security-groups.0.json", FileSecurityGroups, func(t *testing.T, raw *Raw) {
		sg := raw.SecurityGroups.SecurityGroups
		if len(sg) != 1 || str(sg[0].GroupId) != "sg-903004f8" || len(sg[0].IpPermissions) != 2 || str(sg[0].IpPermissions[0].UserIdGroupPairs[0].GroupId) != "sg-903004f8" || *sg[0].IpPermissions[1].FromPort != 22 {
			t.Errorf("security groups misread: %+v", sg)
		}
	}, true, true},
	{"ec2-describe-subnets.1.json", FileSubnets, func(t *testing.T, raw *Raw) {
		s := raw.Subnets.Subnets
		if len(s) == 0 || s[0].SubnetId == nil || s[0].CidrBlock == nil {
			t.Errorf("subnets misread: %+v", s)
		}
	}, false, false},
	{"ec2-describe-instances.1.json", FileInstances, func(t *testing.T, raw *Raw) {
		r := raw.Instances.Reservations
		if len(r) == 0 || len(r[0].Instances) == 0 || r[0].Instances[0].InstanceId == nil || r[0].Instances[0].SubnetId == nil {
			t.Errorf("instances misread: %+v", r)
		}
	}, false, false},
	{"ec2-describe-nat-gateways.1.json", FileNATGateways, func(t *testing.T, raw *Raw) {
		n := raw.NATGateways.NatGateways
		if len(n) == 0 || n[0].NatGatewayId == nil || n[0].State == "" || n[0].SubnetId == nil {
			t.Errorf("nat gateways misread: %+v", n)
		}
	}, false, false},
	{"ec2-describe-nat-gateways.2.json", FileNATGateways, func(t *testing.T, raw *Raw) {
		if n := raw.NATGateways.NatGateways; len(n) == 0 || n[0].NatGatewayId == nil {
			t.Errorf("nat gateways misread: %+v", n)
		}
	}, false, false},
	{"ec2-describe-prefix-lists.1.json", FilePrefixLists, func(t *testing.T, raw *Raw) {
		p := raw.PrefixLists.PrefixLists
		if len(p) == 0 || p[0].PrefixListId == nil || len(p[0].Cidrs) == 0 {
			t.Errorf("prefix lists misread: %+v", p)
		}
	}, false, false},
	{"ec2-describe-dhcp-options.1.json", FileDHCPOptions, func(t *testing.T, raw *Raw) {
		d := raw.DHCPOptions.DhcpOptions
		if len(d) == 0 || d[0].DhcpOptionsId == nil || len(d[0].DhcpConfigurations) == 0 {
			t.Errorf("dhcp options misread: %+v", d)
		}
	}, false, false},
	{"ec2-describe-vpc-attribute.1.json", FileDNSSupport, func(t *testing.T, raw *Raw) {
		if a := raw.DNSSupport; a.EnableDnsSupport == nil || a.EnableDnsSupport.Value == nil || str(a.VpcId) == "" {
			t.Errorf("enableDnsSupport misread: %+v", a)
		}
	}, false, false},
	{"ec2-describe-vpc-attribute.2.json", FileDNSHostnames, func(t *testing.T, raw *Raw) {
		if a := raw.DNSHostnames; a.EnableDnsHostnames == nil || a.EnableDnsHostnames.Value == nil {
			t.Errorf("enableDnsHostnames misread: %+v", a)
		}
	}, false, false},
	{"ec2-describe-vpcs.1.json", FileVPCs, func(t *testing.T, raw *Raw) {
		if v := raw.VPCs.Vpcs; len(v) == 0 || v[0].VpcId == nil || v[0].DhcpOptionsId == nil {
			t.Errorf("vpcs misread: %+v", v)
		}
	}, false, false},
	{"eks-describe-cluster.1.json", FileCluster, func(t *testing.T, raw *Raw) {
		c := raw.Cluster.Cluster
		if c == nil || c.Name == nil || c.ResourcesVpcConfig == nil || c.ResourcesVpcConfig.VpcId == nil || len(c.ResourcesVpcConfig.SubnetIds) == 0 || c.CreatedAt == nil || c.Endpoint == nil {
			t.Errorf("cluster misread: %+v", c)
		}
	}, false, false},
	{"eks-describe-nodegroup.1.json", "eks-describe-nodegroup-real.json", func(t *testing.T, raw *Raw) {
		var n *NodegroupOutput
		for _, d := range raw.NodegroupDetails {
			if d.Nodegroup != nil && d.Nodegroup.NodeRole != nil && strings.Contains(*d.Nodegroup.NodeRole, "arn:") && len(d.Nodegroup.Subnets) > 0 {
				n = d
			}
		}
		if n == nil || n.Nodegroup.NodegroupName == nil || n.Nodegroup.CreatedAt == nil {
			t.Errorf("nodegroup misread")
		}
	}, false, false},
	{"eks-list-nodegroups.1.json", FileNodegroups, func(t *testing.T, raw *Raw) {
		if len(raw.Nodegroups.Nodegroups) == 0 {
			t.Errorf("nodegroups misread")
		}
	}, false, false},
	{"iam-simulate-principal-policy.1.json", FileSimulate, func(t *testing.T, raw *Raw) {
		e := raw.Simulate.EvaluationResults
		if len(e) == 0 || e[0].EvalActionName == nil || e[0].EvalDecision == "" {
			t.Errorf("simulate misread: %+v", e)
		}
	}, false, false},
	{"iam-simulate-principal-policy.2.json", FileSimulate, func(t *testing.T, raw *Raw) {
		if e := raw.Simulate.EvaluationResults; len(e) == 0 || e[0].EvalDecision == "" {
			t.Errorf("simulate misread: %+v", e)
		}
	}, false, false},
}

func TestRealCLIOutputs(t *testing.T) {
	for _, tc := range realCLI {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/real-cli", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// Alone: a folder with only the cluster (required) and subnets
			// of the healthy fixture, plus this one file.
			dir := copyDir(t, "testdata/valid-healthy")
			if err := os.WriteFile(filepath.Join(dir, tc.contract), data, 0o644); err != nil {
				t.Fatal(err)
			}
			raw, err := LoadDir(dir)
			if err != nil {
				t.Fatalf("real %s does not load: %v", tc.file, err)
			}
			tc.check(t, raw)
			r, err := Audit(raw, dir, audit.Focus{})
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("audit error is not one line: %q", err)
				}
				t.Logf("audit: %v", err)
				return
			}
			if r.Verdict.Status == "" {
				t.Errorf("no verdict")
			}
			if tc.notPass && r.Verdict.Status == report.StepPass {
				t.Errorf("verdict pass on a file that describes none of the cluster's objects: %s", r.Verdict.Summary)
			}
			// The example's tables and ACLs are of other VPCs: no check
			// may take one for the cluster's (main-table / default-ACL
			// fallback).
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					for _, foreign := range []string{"rtb-a1eec7de", "rtb-09ba434c1bEXAMPLE", "acl-0ea1f54ca7EXAMPLE"} {
						if strings.Contains(c.Summary, foreign) {
							t.Errorf("%s %s takes %s of another VPC for the cluster's: %s", s.ID, c.ID, foreign, c.Summary)
						}
					}
				}
			}
			if tc.notFail && r.Verdict.Status == report.StepFail {
				t.Errorf("verdict fail on objects the file does not describe: %s", r.Verdict.Summary)
			}
			t.Logf("verdict %s: %s (%d warnings)", r.Verdict.Status, r.Verdict.Summary, len(r.Warnings))
		})
	}
}

// Shapes the real EC2 API prints beside what the audit reads (from the
// describe-* examples in testdata/real-cli): added to the healthy account,
// they change nothing on the nodes' IPv4 path, so it must still pass with
// no warning.
func TestRealShapesBesideTheIPv4Path(t *testing.T) {
	type obj = map[string]any
	tests := []struct {
		name, file string
		edit       func(v obj)
	}{
		{"IPv6 deny-all NACL entries before every rule", FileNetworkACLs, func(v obj) {
			for _, a := range v["NetworkAcls"].([]any) {
				a := a.(obj)
				for _, eg := range []bool{true, false} {
					a["Entries"] = append(a["Entries"].([]any), obj{"Egress": eg, "Ipv6CidrBlock": "::/0", "Protocol": "-1", "RuleAction": "deny", "RuleNumber": 1})
				}
			}
		}},
		{"propagated VGW route and IPv6 default route", FileRouteTables, func(v obj) {
			for _, rt := range v["RouteTables"].([]any) {
				rt := rt.(obj)
				rt["PropagatingVgws"] = []any{obj{"GatewayId": "vgw-0123456789abcdef0"}}
				rt["Routes"] = append(rt["Routes"].([]any),
					obj{"DestinationCidrBlock": "192.168.0.0/16", "GatewayId": "vgw-0123456789abcdef0", "Origin": "EnableVgwRoutePropagation", "State": "active"},
					obj{"DestinationIpv6CidrBlock": "::/0", "EgressOnlyInternetGatewayId": "eigw-0123456789abcdef0", "Origin": "CreateRoute", "State": "active"})
			}
		}},
		{"SG rules with only UserIdGroupPairs or PrefixListIds, IPv6 ranges", FileSecurityGroups, func(v obj) {
			for _, g := range v["SecurityGroups"].([]any) {
				g := g.(obj)
				g["IpPermissions"] = append(g["IpPermissions"].([]any),
					obj{"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "IpRanges": []any{}, "Ipv6Ranges": []any{obj{"CidrIpv6": "::/0"}}, "PrefixListIds": []any{}, "UserIdGroupPairs": []any{obj{"GroupId": "sg-0aaaaaaaaaaaaaaa0", "UserId": "111122223333"}}})
				g["IpPermissionsEgress"] = append(g["IpPermissionsEgress"].([]any),
					obj{"IpProtocol": "tcp", "FromPort": 5432, "ToPort": 5432, "IpRanges": []any{}, "Ipv6Ranges": []any{}, "PrefixListIds": []any{obj{"PrefixListId": "pl-0bbbbbbbbbbbbbbb0"}}, "UserIdGroupPairs": []any{}})
			}
		}},
		{"subnets with an IPv6 CIDR association", FileSubnets, func(v obj) {
			for _, s := range v["Subnets"].([]any) {
				s.(obj)["Ipv6CidrBlockAssociationSet"] = []any{obj{"AssociationId": "subnet-cidr-assoc-0", "Ipv6CidrBlock": "2600:1f18:1234:5600::/64", "Ipv6CidrBlockState": obj{"State": "associated"}}}
				s.(obj)["AssignIpv6AddressOnCreation"] = false
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/valid-healthy")
			p := filepath.Join(dir, tc.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var v obj
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			tc.edit(v)
			out, _ := json.MarshalIndent(v, "", "  ")
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			r := auditDir(t, dir)
			if r.Verdict.Status != report.StepPass || len(r.Warnings) != 0 {
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						if c.Status != report.StepPass && c.Status != report.StepSkip {
							t.Errorf("%s %s = %s: %s", s.ID, c.ID, c.Status, c.Summary)
						}
					}
				}
				t.Fatalf("verdict %s (%s), warnings %v: want pass", r.Verdict.Status, r.Verdict.Summary, r.Warnings)
			}
		})
	}
}
