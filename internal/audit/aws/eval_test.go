package aws

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

func TestEvalPolicy(t *testing.T) {
	layer := request{action: "s3:GetObject", resource: "arn:aws:s3:::prod-us-east-1-starport-layer-bucket/layer", signedByAWS: true, account: "111122223333"}
	role := request{action: "ecr:BatchGetImage", resource: "arn:aws:ecr:us-east-1:111122223333:repository/app", principal: "arn:aws:iam::111122223333:role/node", account: "111122223333"}
	tests := []struct {
		name string
		doc  string
		req  request
		want decision
	}{
		{"no policy is full access", "", layer, allowed},
		{"one statement as an object", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}}`, layer, allowed},
		{"the documented ECR minimum", `{"Statement":[{"Sid":"Access-to-specific-bucket-only","Principal":"*","Action":["s3:GetObject"],"Effect":"Allow","Resource":["arn:aws:s3:::prod-us-east-1-starport-layer-bucket/*"]}]}`, layer, allowed},
		{"another bucket only", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::mine/*"}]}`, layer, implicitDeny},
		{"action wildcard s3:Get*", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:Get*","Resource":"arn:aws:s3:::prod-*-starport-layer-bucket/*"}]}`, layer, allowed},
		{"actions match without case", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"S3:getobject","Resource":"*"}]}`, layer, allowed},
		{"resources match with case", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::PROD-us-east-1-starport-layer-bucket/*"}]}`, layer, implicitDeny},
		{"deny wins over allow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"},{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"*"}]}`, layer, explicitDeny},
		{"NotAction deny leaves GetObject", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"},{"Effect":"Deny","Principal":"*","NotAction":"s3:GetObject","Resource":"*"}]}`, layer, allowed},
		{"NotResource allow", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","NotResource":"arn:aws:s3:::secret/*"}]}`, layer, allowed},
		{"our account's principal does not sign layer URLs", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"*","Resource":"*"}]}`, layer, implicitDeny},
		{"the node role matches for ECR calls", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111122223333:role/node"]},"Action":"ecr:*","Resource":"*"}]}`, role, allowed},
		{"the account matches for ECR calls", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"ecr:BatchGetImage","Resource":"*"}]}`, role, allowed},
		{"another role does not", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/other"},"Action":"ecr:*","Resource":"*"}]}`, role, implicitDeny},
		{"resource-account perimeter denies AWS's bucket", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"},{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"*","Condition":{"StringNotEquals":{"aws:ResourceAccount":["111122223333"]}}}]}`, layer, explicitDeny},
		{"resource-account allow never matches AWS's bucket", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:ResourceAccount":"111122223333"}}}]}`, layer, implicitDeny},
		{"a condition we cannot know", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`, layer, undecided},
		{"not JSON", `{"Statement":`, layer, undecided},
	}
	for _, tt := range tests {
		if got, why := evalPolicy(tt.doc, tt.req); got != tt.want {
			t.Errorf("%s: evalPolicy = %s (%s), want %s", tt.name, got, why, tt.want)
		}
	}
}

func TestWildcard(t *testing.T) {
	for _, tt := range []struct {
		p, s string
		want bool
	}{{"*", "", true}, {"a*c", "abbbc", true}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"*-bucket/*", "prod-x-bucket/k", true}, {"ab", "abc", false}, {"a**", "a", true}} {
		if got := wildcard(tt.p, tt.s, true); got != tt.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}

func entry(n int32, egress bool, action ec2types.RuleAction, cidr, proto string, from, to int32) ec2types.NetworkAclEntry {
	e := ec2types.NetworkAclEntry{RuleNumber: aws.Int32(n), Egress: aws.Bool(egress), RuleAction: action, CidrBlock: aws.String(cidr), Protocol: aws.String(proto)}
	if from != 0 || to != 0 {
		e.PortRange = &ec2types.PortRange{From: aws.Int32(from), To: aws.Int32(to)}
	}
	return e
}

func TestEvalACLRuleOrder(t *testing.T) {
	allow, deny := ec2types.RuleActionAllow, ec2types.RuleActionDeny
	far := netip.MustParsePrefix("10.0.3.0/24")
	tests := []struct {
		name     string
		entries  []ec2types.NetworkAclEntry
		lo, hi   int32
		allowed  bool
		denyRule int32
		denied   string
	}{
		{"lower number wins even listed later", []ec2types.NetworkAclEntry{entry(200, false, allow, "0.0.0.0/0", "-1", 0, 0), entry(100, false, deny, "10.0.3.0/24", "6", 443, 443)}, 443, 443, false, 100, "443"},
		{"deny after allow does not matter", []ec2types.NetworkAclEntry{entry(100, false, allow, "10.0.0.0/16", "6", 443, 443), entry(110, false, deny, "0.0.0.0/0", "-1", 0, 0)}, 443, 443, true, 0, ""},
		{"nothing matches: the * rule", []ec2types.NetworkAclEntry{entry(100, false, allow, "10.9.0.0/16", "-1", 0, 0), entry(32767, false, deny, "0.0.0.0/0", "-1", 0, 0)}, 443, 443, false, 32767, "443"},
		{"udp rules do not match tcp", []ec2types.NetworkAclEntry{entry(100, false, allow, "0.0.0.0/0", "17", 0, 65535)}, 443, 443, false, 32767, "443"},
		{"ephemeral ports split by rules", []ec2types.NetworkAclEntry{entry(100, false, allow, "0.0.0.0/0", "6", 1024, 32767), entry(110, false, deny, "0.0.0.0/0", "6", 40000, 41000), entry(120, false, allow, "0.0.0.0/0", "6", 32768, 65535)}, 1024, 65535, false, 110, "40000-41000"},
		{"a CIDR holding only part of the range decides nothing", []ec2types.NetworkAclEntry{entry(100, false, allow, "10.0.3.0/25", "-1", 0, 0), entry(32767, false, deny, "0.0.0.0/0", "-1", 0, 0)}, 443, 443, false, 32767, "443"},
		{"egress rules do not decide ingress", []ec2types.NetworkAclEntry{entry(100, true, allow, "0.0.0.0/0", "-1", 0, 0)}, 443, 443, false, 32767, "443"},
	}
	for _, tt := range tests {
		v := evalACL(&ec2types.NetworkAcl{Entries: tt.entries}, false, tt.lo, tt.hi, far)
		if v.Allowed != tt.allowed || v.DenyRule != tt.denyRule || portsString(v.Denied) != tt.denied {
			t.Errorf("%s: evalACL = allowed %v rule %d denied %q, want %v %d %q", tt.name, v.Allowed, v.DenyRule, portsString(v.Denied), tt.allowed, tt.denyRule, tt.denied)
		}
	}
}

func TestLookupRouteLongestPrefix(t *testing.T) {
	m := &Model{S3PL: &ec2types.PrefixList{PrefixListId: aws.String("pl-63a5400a")},
		S3PLCIDRs: []netip.Prefix{netip.MustParsePrefix("52.216.0.0/15"), netip.MustParsePrefix("3.5.0.0/19")}}
	rt := &ec2types.RouteTable{Routes: []ec2types.Route{
		{DestinationCidrBlock: aws.String("10.0.0.0/16"), GatewayId: aws.String("local")},
		{DestinationCidrBlock: aws.String("0.0.0.0/0"), NatGatewayId: aws.String("nat-1")},
		{DestinationPrefixListId: aws.String("pl-63a5400a"), GatewayId: aws.String("vpce-s3")},
		{DestinationCidrBlock: aws.String("3.5.0.0/16"), TransitGatewayId: aws.String("tgw-1")},
		{DestinationCidrBlock: aws.String("52.216.0.0/15"), TransitGatewayId: aws.String("tgw-2")},
	}}
	for _, tt := range []struct{ dst, want string }{
		{"10.0.3.0/24", "local"},
		{"8.8.8.8/32", "nat-1"},
		{"3.5.0.0/19", "vpce-s3"},   // the pl's /19 beats the static /16
		{"52.216.0.0/15", "tgw-2"},  // a tie: the static route wins
		{"0.0.0.0/0", "nat-1"},      // only a /0 holds all addresses
		{"52.216.10.0/24", "tgw-2"}, // inside the tie
		{"172.16.0.0/12", "nat-1"},  // nothing more specific
	} {
		got := m.lookupRoute(rt, netip.MustParsePrefix(tt.dst))
		if got == nil || routeTarget(got.Route) != tt.want {
			t.Errorf("lookupRoute(%s) = %v, want %s", tt.dst, got, tt.want)
		}
	}
}

// A more specific static route that takes part of S3's prefix list: the
// pl- route is there, yet the layers do not use the gateway endpoint.
func TestS3RouteOverriddenByMoreSpecificRoute(t *testing.T) {
	d := copyDir(t, "testdata/valid-healthy")
	p := filepath.Join(d, FileRouteTables)
	b, _ := os.ReadFile(p)
	s := strings.Replace(string(b), `"RouteTableId": "rtb-0c0c0c0c0c0c0c0c0",
            "Routes": [`, `"RouteTableId": "rtb-0c0c0c0c0c0c0c0c0",
            "Routes": [
                {
                    "DestinationCidrBlock": "52.216.0.0/16",
                    "TransitGatewayId": "tgw-0123456789abcdef0",
                    "Origin": "CreateRoute",
                    "State": "active"
                },`, 1)
	if s == string(b) {
		t.Fatal("fixture shape changed: could not add the route")
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	r := auditDir(t, d)
	c := checkOn(t, r, "subnet-0c3c3c3c3c3c3c3c3", CheckS3Route)
	if c.Status != report.StepFail || !strings.Contains(c.Summary, "more specific routes take S3's addresses: 52.216.0.0/15 by 52.216.0.0/16 -> tgw-0123456789abcdef0") {
		t.Errorf("s3-route = %s: %s, want the tgw route named as taking S3's CIDR", c.Status, c.Summary)
	}
}

func checkOn(t *testing.T, r *report.AuditReport, subnet, id string) report.CheckResult {
	t.Helper()
	for _, s := range r.Subnets {
		if s.ID != subnet {
			continue
		}
		for _, c := range s.Checks {
			if c.ID == id {
				return c
			}
		}
	}
	t.Fatalf("no check %s on %s", id, subnet)
	return report.CheckResult{}
}

// A probe report puts the probed node's subnet first, beside the others,
// with the checks about the failing host first and the one that explains
// the probe's code ahead of the verdict; a node is placed by its instance
// (name, providerID) or by the address in an EKS node name.
func TestProbeReportFocus(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "probe.json")
	doc := `{"apiVersion":"pullpath/v1","kind":"ProbeReport","image":"111122223333.dkr.ecr.us-east-1.amazonaws.com/app:1","node":"ip-10-0-3-17.ec2.internal",
"transfer":{"blobs":3,"layers":2,"bytes":734003200,"verified":false,"durationMs":1,"mbps":1},
"verdict":{"status":"fail","code":"CONNECT_TIMEOUT","endpoint":"prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com","condition":"endpoint-set"}}`
	if err := os.WriteFile(probe, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := audit.ReadProbeReport(probe)
	if err != nil {
		t.Fatal(err)
	}
	f.PullsPerDay = 100
	r, err := FromFolder("testdata/fail-s3-route", f)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Subnets) != 3 || r.Subnets[0].ID != "subnet-0c3c3c3c3c3c3c3c3" || r.Target.FocusSubnet != "subnet-0c3c3c3c3c3c3c3c3" {
		t.Fatalf("subnets = %v (focus %q), want the probed node's subnet-0c3c3c3c3c3c3c3c3 first of 3", r.Subnets, r.Target.FocusSubnet)
	}
	first := r.Subnets[0].Checks[0]
	if first.ID != CheckS3Route || first.Host != "prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com" || first.Status != report.StepFail {
		t.Errorf("first check = %s on %q (%s), want s3-route on the failing S3 host, fail", first.ID, first.Host, first.Status)
	}
	if want := "the probe's CONNECT_TIMEOUT on prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com from "; !strings.HasPrefix(r.Verdict.Summary, want) || !strings.Contains(r.Verdict.Summary, "("+CheckS3Route+"); ") {
		t.Errorf("verdict = %q, want it to start %q and name %s", r.Verdict.Summary, want, CheckS3Route)
	}
	if r.Cost == nil || r.Cost.ImageBytes != 734003200 || r.Cost.PullsPerDay != 100 {
		t.Errorf("cost = %+v, want the probe's 734003200 bytes, 100 pulls a day", r.Cost)
	}
	if _, err := audit.ReadProbeReport("testdata/fixtures.json"); err == nil || !strings.Contains(err.Error(), "ProbeReport") {
		t.Errorf("ReadProbeReport(not a probe) = %v, want an error naming ProbeReport", err)
	}

	raw, err := LoadDir("testdata/fail-s3-route")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(raw)
	if err != nil {
		t.Fatal(err)
	}
	in := m.NodeSubnets[1].Instances[0]
	for _, n := range []audit.Node{
		{Name: str(in.PrivateDnsName)},
		{Name: "node-x", ProviderID: "aws:///" + m.NodeSubnets[1].AZ + "/" + str(in.InstanceId)},
		{Name: "node-y", Addresses: []netip.Addr{netip.MustParseAddr(str(in.PrivateIpAddress))}},
	} {
		if got := m.placeNode(n); got.Subnet != m.NodeSubnets[1].ID {
			t.Errorf("placeNode(%+v) = %+v, want subnet %s", n, got, m.NodeSubnets[1].ID)
		}
	}
	if got := m.placeNode(audit.Node{Name: "ip-10-9-9-9.ec2.internal"}); got.Subnet != "" || len(got.Addresses) != 1 || got.Addresses[0].String() != "10.9.9.9" {
		t.Errorf("placeNode(ip-10-9-9-9) = %+v, want no subnet and the address from the name", got)
	}
}

func TestCostNote(t *testing.T) {
	raw, err := LoadDir("testdata/valid-healthy-nat")
	if err != nil {
		t.Fatal(err)
	}
	// valid-healthy-nat sends the layers through the S3 gateway: make
	// subnet c's go through its NAT by removing its pl- route.
	for i := range raw.RouteTables.RouteTables {
		rt := &raw.RouteTables.RouteTables[i]
		if str(rt.RouteTableId) == "rtb-0c0c0c0c0c0c0c0c0" {
			var keep []ec2types.Route
			for _, r := range rt.Routes {
				if r.DestinationPrefixListId == nil {
					keep = append(keep, r)
				}
			}
			rt.Routes = keep
		}
	}
	r, err := Audit(raw, "x", audit.Focus{ImageBytes: 1e9, PullsPerDay: 100})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Cost
	if c == nil || c.GBPerMonth != 3000 || c.Options[0].Path != "nat-gateway" || c.Options[0].MonthlyUSD != 135 || c.Options[1].MonthlyUSD != 0 {
		t.Fatalf("cost = %+v, want 3000 GB/month, NAT $135 (3000 x 0.045), S3 gateway $0", c)
	}
	// 3 endpoints x 3 AZ x 730 h x 0.01 + 3000 GB x 0.01 = 65.7 + 30.
	if c.Options[2].MonthlyUSD != 95.7 || !strings.Contains(c.Note, "1 of 3 subnets pull layers through a NAT gateway") || c.PriceAsOf == "" || c.PriceSource == "" {
		t.Errorf("cost = %+v", c)
	}
	if s3 := checkOn(t, r, "subnet-0c3c3c3c3c3c3c3c3", CheckS3Route); s3.Status != report.StepWarn || !strings.Contains(s3.Summary, "layers go out through nat-0c1b2c3d4e5f6a7b8") {
		t.Errorf("s3-route = %s: %s, want a warn saying the layers go through the NAT", s3.Status, s3.Summary)
	}
}

// A route replaced because its target is gone (a deleted or failed NAT
// gateway, a blackhole) names that target beside the table in the change,
// not only in the check's evidence.
func TestRouteChangeNamesTheDeadTarget(t *testing.T) {
	for _, dir := range []string{"fail-nat-blackhole", "fail-nat-unavailable"} {
		t.Run(dir, func(t *testing.T) {
			r, err := FromFolder("testdata/"+dir, audit.Focus{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Changes) != 1 {
				t.Fatalf("changes = %+v, want one", r.Changes)
			}
			ch := r.Changes[0]
			if ch.Resource != "rtb-0c0c0c0c0c0c0c0c0" || ch.Check != CheckInternet || len(ch.Touches) != 1 || ch.Touches[0] != "nat-0c1b2c3d4e5f6a7b8" {
				t.Errorf("change = %+v, want rtb-0c0c0c0c0c0c0c0c0's route, touching nat-0c1b2c3d4e5f6a7b8", ch)
			}
		})
	}
}
