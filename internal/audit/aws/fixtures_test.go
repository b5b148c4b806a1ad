package aws

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

func auditDir(t *testing.T, dir string) *report.AuditReport {
	t.Helper()
	r, err := FromFolder(dir, audit.Focus{})
	if err != nil {
		t.Fatalf("FromFolder(%s) = %v", dir, err)
	}
	return r
}

func TestHealthyAccountsPass(t *testing.T) {
	for _, dir := range []string{"testdata/valid-healthy", "testdata/valid-healthy-nat", "testdata/valid-healthy-ipv6"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := auditDir(t, dir)
			if r.Verdict.Status != report.StepPass {
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						if c.Status != report.StepPass && c.Status != report.StepSkip {
							t.Errorf("%s %s = %s: %s", s.ID, c.ID, c.Status, c.Summary)
						}
					}
				}
				t.Fatalf("verdict = %s (%s), want pass", r.Verdict.Status, r.Verdict.Summary)
			}
			if len(r.Subnets) != 3 || len(r.Changes) != 0 || len(r.Warnings) != 0 {
				t.Errorf("subnets %d, changes %v, warnings %v: want 3 subnets, no change, no warning", len(r.Subnets), r.Changes, r.Warnings)
			}
			for _, s := range r.Subnets {
				if len(s.Checks) != len(Checks) {
					t.Errorf("%s has %d checks, want %d", s.ID, len(s.Checks), len(Checks))
				}
			}
		})
	}
}

// Every fail-* (and warn-*) fixture is a healthy account with one thing
// changed: its check, and only its check, must fail (warn), naming the
// object and the change.
func TestEachFixtureFailsItsCheckAlone(t *testing.T) {
	data, err := os.ReadFile("testdata/fixtures.json")
	if err != nil {
		t.Fatal(err)
	}
	var index map[string]string
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatal(err)
	}
	const b, c = "subnet-0b2b2b2b2b2b2b2b2", "subnet-0c3c3c3c3c3c3c3c3"
	const dualStackImage = "111122223333.dkr-ecr.us-east-1.on.aws/shop/checkout:1.4.2"
	all := []string{"subnet-0a1a1a1a1a1a1a1a1", b, c}
	tests := []struct {
		fixture   string
		subnets   []string // where the check fails
		cond      verdict.Condition
		resource  string // the change's resource
		command   string // a piece of the change's command
		inSummary string
		image     string // the audit's focus image, when the fixture needs one
	}{
		{"fail-dns-hostnames", all, verdict.ConditionDNS, "vpc-0f1e2d3c4b5a69788", "modify-vpc-attribute --vpc-id vpc-0f1e2d3c4b5a69788 --enable-dns-hostnames", "enableDnsHostnames off", ""},
		{"fail-dns-support", all, verdict.ConditionDNS, "vpc-0f1e2d3c4b5a69788", "--enable-dns-support", "enableDnsSupport off", ""},
		{"fail-dhcp-public-resolvers", all, verdict.ConditionDNS, "dopt-0a0b0c0d0e0f01234", "associate-dhcp-options --vpc-id vpc-0f1e2d3c4b5a69788", "8.8.8.8", ""},
		{"fail-private-dns", all, verdict.ConditionDNS, "vpce-0d22d22d22d22d22d", "modify-vpc-endpoint --vpc-endpoint-id vpce-0d22d22d22d22d22d --private-dns-enabled", "private DNS off", ""},
		{"fail-endpoint-ecr-api-missing", all, verdict.ConditionRoute, "vpc-0f1e2d3c4b5a69788", "--service-name com.amazonaws.us-east-1.ecr.api", "no com.amazonaws.us-east-1.ecr.api interface endpoint", ""},
		{"fail-endpoint-ecr-dkr-placement", []string{c}, verdict.ConditionRoute, "vpce-0d22d22d22d22d22d", "--add-subnet-ids " + c, "has no subnet in us-east-1c (" + c + ", nodegroup spot-workers)", ""},
		{"fail-endpoint-ecr-dkr-pending", all, verdict.ConditionRoute, "vpce-0d22d22d22d22d22d", "describe-vpc-endpoints --vpc-endpoint-ids vpce-0d22d22d22d22d22d", "is pending, not available", ""},
		{"fail-endpoint-ecr-policy", all, verdict.ConditionTLSIdentity, "vpce-0d22d22d22d22d22d", "vpce-0d22d22d22d22d22d", "NoImagePulls denies ecr:BatchGetImage", ""},
		{"fail-sg-endpoint-ingress", []string{c}, verdict.ConditionRoute, "sg-0e9d0e9d0e9d0e9d0", "authorize-security-group-ingress --group-id sg-0e9d0e9d0e9d0e9d0 --protocol tcp --port 443 --source-group sg-0c1a55e7c1a55e7c1", "admits no TCP 443", ""},
		{"fail-sg-node-egress", all, verdict.ConditionRoute, "sg-0c1a55e7c1a55e7c1", "authorize-security-group-egress --group-id sg-0c1a55e7c1a55e7c1", "may not send TCP 443", ""},
		{"fail-s3-route", []string{c}, verdict.ConditionRoute, "vpce-05335335335335335", "--add-route-table-ids rtb-0c0c0c0c0c0c0c0c0", "rtb-0c0c0c0c0c0c0c0c0 has no route to pl-63a5400a (S3 gateway endpoint vpce-05335335335335335", ""},
		{"fail-s3-route-listed-no-route", []string{c}, verdict.ConditionRoute, "vpce-05335335335335335", "--add-route-table-ids rtb-0c0c0c0c0c0c0c0c0", "lists rtb-0c0c0c0c0c0c0c0c0 but the table has no route to pl-63a5400a", ""},
		{"fail-s3-route-blackhole", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "--remove-route-table-ids rtb-0c0c0c0c0c0c0c0c0", "blackhole", ""},
		{"fail-main-route-table", []string{c}, verdict.ConditionRoute, "vpce-05335335335335335", "--add-route-table-ids rtb-0f0f0f0f0f0f0f0f0", "the subnet uses the main table", ""},
		{"fail-s3-endpoint-policy", all, verdict.ConditionTLSIdentity, "vpce-05335335335335335", "modify-vpc-endpoint --vpc-endpoint-id vpce-05335335335335335 --policy-document", "refuses s3:GetObject on arn:aws:s3:::prod-us-east-1-starport-layer-bucket/*", ""},
		{"fail-route-table", []string{c}, verdict.ConditionRoute, c, "associate-route-table --subnet-id " + c, "has no route table", ""},
		{"fail-nat-blackhole", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "replace-route --route-table-id rtb-0c0c0c0c0c0c0c0c0 --destination-cidr-block 0.0.0.0/0", "nat-0c1b2c3d4e5f6a7b8, a blackhole", ""},
		{"fail-nat-unavailable", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "replace-route --route-table-id rtb-0c0c0c0c0c0c0c0c0", "nat-0c1b2c3d4e5f6a7b8, which is failed", ""},
		{"warn-nat-other-az", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "--nat-gateway-id nat-0c1b2c3d4e5f6a7b8", "not in the subnet's AZ us-east-1c", ""},
		{"fail-igw-no-public-ip", []string{c}, verdict.ConditionRoute, c, "modify-subnet-attribute --subnet-id " + c + " --map-public-ip-on-launch", "no public IPv4 address", ""},
		{"fail-nacl-node", []string{c}, verdict.ConditionRoute, "acl-0c3c3c3c3c3c3c3c3", "create-network-acl-entry --network-acl-id acl-0c3c3c3c3c3c3c3c3 --ingress", "inbound rule * (deny all) denies TCP 1024-65535", ""},
		{"fail-nacl-endpoint-subnet", []string{c}, verdict.ConditionRoute, "acl-0a1a1a1a1a1a1a1a1", "create-network-acl-entry --network-acl-id acl-0a1a1a1a1a1a1a1a1 --ingress --rule-number 80 --protocol tcp --port-range From=443,To=443 --cidr-block 10.0.3.0/24", "inbound rule 90 denies TCP 443 from 10.0.3.0/24", ""},
		{"fail-identity", all, verdict.ConditionTLSIdentity, "arn:aws:iam::111122223333:role/prod-node-role", "attach-role-policy --role-name prod-node-role --policy-arn arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly", "ecr:BatchGetImage is implicitDeny", ""},
		{"fail-identity-explicit-deny", all, verdict.ConditionTLSIdentity, "arn:aws:iam::111122223333:role/prod-node-role", "list-attached-role-policies --role-name prod-node-role", "ecr:GetAuthorizationToken is explicitDeny", ""},
		// address families: subnet b dual-stack, c IPv6-only (valid-healthy-ipv6)
		{"fail-ipv6-dns64-off", []string{c}, verdict.ConditionRoute, c, "modify-subnet-attribute --subnet-id " + c + " --enable-dns64", "is IPv6-only and DNS64 is off", ""},
		{"fail-ipv6-nat64-route", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "create-route --route-table-id rtb-0c0c0c0c0c0c0c0c0 --destination-ipv6-cidr-block 64:ff9b::/96 --nat-gateway-id nat-0c1b2c3d4e5f6a7b8", "sends 64:ff9b::/96 to eigw-0123456789abcdef0", ""},
		{"warn-dualstack-dns64-no-nat64", []string{b}, verdict.ConditionRoute, "rtb-0b0b0b0b0b0b0b0b0", "--destination-ipv6-cidr-block 64:ff9b::/96 --nat-gateway-id nat-0b1b2c3d4e5f6a7b8", "dual-stack with DNS64 on", ""},
		{"fail-ipv6-nacl", []string{c}, verdict.ConditionRoute, "acl-0c3c3c3c3c3c3c3c3", "create-network-acl-entry --network-acl-id acl-0c3c3c3c3c3c3c3c3 --egress --rule-number 110 --protocol tcp --port-range From=443,To=443 --ipv6-cidr-block ::/0", "outbound rule * (deny all) denies TCP 443 to 64:ff9b::/96", ""},
		{"fail-ipv6-sg-egress", []string{c}, verdict.ConditionRoute, "sg-0a6a6a6a6a6a6a6a6", "authorize-security-group-egress --group-id sg-0a6a6a6a6a6a6a6a6 --ip-permissions IpProtocol=tcp,FromPort=443,ToPort=443,Ipv6Ranges=[{CidrIpv6=::/0}]", "may not send TCP 443 over IPv6", ""},
		{"fail-ipv6-route-dualstack-name", []string{c}, verdict.ConditionRoute, "rtb-0c0c0c0c0c0c0c0c0", "create-route --route-table-id rtb-0c0c0c0c0c0c0c0c0 --destination-ipv6-cidr-block ::/0 --egress-only-internet-gateway-id", "111122223333.dkr-ecr.us-east-1.on.aws (AAAA) unreachable over IPv6", dualStackImage},
		{"warn-dualstack-route-dualstack-name", []string{b}, verdict.ConditionRoute, "rtb-0b0b0b0b0b0b0b0b0", "--destination-ipv6-cidr-block ::/0", "fall back to IPv4 after 300 ms", dualStackImage},
		{"warn-dualstack-nacl-dualstack-name", []string{b}, verdict.ConditionRoute, "acl-0b2b2b2b2b2b2b2b2", "--ipv6-cidr-block ::/0", "denies TCP 443 to ::/0", dualStackImage},
		{"fail-privatelink-dualstack-name", all, verdict.ConditionRoute, "vpce-0d22d22d22d22d22d", "", "which AWS PrivateLink does not serve", dualStackImage},
		// the pull-through cache (issue 39): the image docker-hub/library/nginx behind cache rule docker-hub
		{"fail-ptc-batch-import", all, verdict.ConditionTLSIdentity, "arn:aws:iam::111122223333:role/prod-node-role",
			`aws iam put-role-policy --role-name prod-node-role --policy-name ecr-pull-through-cache-docker-hub --policy-document '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:BatchImportUpstreamImage","ecr:CreateRepository"],"Resource":"arn:aws:ecr:us-east-1:111122223333:repository/docker-hub/*"}]}'`,
			"through cache rule docker-hub -> registry-1.docker.io: ecr:BatchImportUpstreamImage not allowed", ptcImage},
		{"fail-ptc-create-repository", all, verdict.ConditionTLSIdentity, "arn:aws:iam::111122223333:role/prod-node-role", "put-role-policy --role-name prod-node-role", "ecr:CreateRepository not allowed", ptcImage},
		{"fail-ptc-template-no-role", all, verdict.ConditionRegistry, "template ROOT", "update-repository-creation-template --prefix ROOT --custom-role-arn", "sets 1 resource tag(s) on the repositories cache rule docker-hub -> registry-1.docker.io creates, with no customRoleArn", ptcImage},
		{"fail-ptc-secret-name", all, verdict.ConditionRegistry, "docker-hub", "create-secret --name ecr-pullthroughcache/docker-hub", "does not start with ecr-pullthroughcache/", ptcImage},
		{"fail-ptc-secret-missing", all, verdict.ConditionRegistry, "arn:aws:secretsmanager:us-east-1:111122223333:secret:ecr-pullthroughcache/docker-hub-Xy12Ab", "create-secret --name ecr-pullthroughcache/docker-hub", "does not exist (ResourceNotFoundException)", ptcImage},
		{"warn-ptc-cache-miss-no-internet", all, verdict.ConditionRoute, "docker-hub", "docker pull " + ptcImage, "warm the cache from a network with that path", ptcImage},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.fixture] = true
		t.Run(tt.fixture, func(t *testing.T) {
			check, ok := index[tt.fixture]
			if !ok {
				t.Fatalf("%s is not in testdata/fixtures.json", tt.fixture)
			}
			want := report.StepFail
			if strings.HasPrefix(tt.fixture, "warn-") {
				want = report.StepWarn
			}
			r, err := FromFolder(filepath.Join("testdata", tt.fixture), audit.Focus{Image: tt.image})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Subnets {
				for _, ch := range s.Checks {
					bad := ch.Status == report.StepFail || ch.Status == report.StepWarn
					switch {
					case ch.ID == check && slices.Contains(tt.subnets, s.ID):
						if ch.Status != want {
							t.Errorf("%s %s = %s (%s), want %s", s.ID, ch.ID, ch.Status, ch.Summary, want)
						}
						if ch.Condition != tt.cond {
							t.Errorf("%s %s condition = %q, want %q", s.ID, ch.ID, ch.Condition, tt.cond)
						}
						if !strings.Contains(ch.Summary, tt.inSummary) {
							t.Errorf("%s %s summary = %q, want it to say %q", s.ID, ch.ID, ch.Summary, tt.inSummary)
						}
						if !slices.Contains(ch.Resources, tt.resource) {
							t.Errorf("%s %s resources = %v, want %s", s.ID, ch.ID, ch.Resources, tt.resource)
						}
					case bad:
						t.Errorf("%s %s = %s (%s): only %s on %v should fail", s.ID, ch.ID, ch.Status, ch.Summary, check, tt.subnets)
					}
				}
			}
			found := false
			for _, ch := range r.Changes {
				if ch.Check == check && ch.Resource == tt.resource && strings.Contains(ch.Command, tt.command) {
					found = true
					for _, s := range tt.subnets {
						if !slices.Contains(ch.Subnets, s) {
							t.Errorf("change %s names subnets %v, want %s among them", ch.Resource, ch.Subnets, s)
						}
					}
				}
			}
			if !found {
				t.Errorf("no change for %s on %s with a command holding %q; changes: %+v", check, tt.resource, tt.command, r.Changes)
			}
			if want == report.StepFail {
				if r.Verdict.Condition != tt.cond {
					t.Errorf("verdict condition = %q, want %q", r.Verdict.Condition, tt.cond)
				}
				scope := "some-subnets"
				if len(tt.subnets) == len(all) {
					scope = "every-subnet"
				}
				if r.Verdict.Scope != scope {
					t.Errorf("verdict scope = %q, want %q", r.Verdict.Scope, scope)
				}
				if scope == "some-subnets" && (r.Comparison == nil || r.Comparison.Failing != tt.subnets[0]) {
					t.Errorf("comparison = %+v, want %s beside a healthy subnet", r.Comparison, tt.subnets[0])
				}
				if tt.cond == verdict.ConditionTLSIdentity && !strings.Contains(r.Verdict.Summary, "identity, not network") {
					t.Errorf("summary = %q, want the identity-not-network sentence", r.Verdict.Summary)
				}
			}
		})
	}
	for f := range index {
		if !seen[f] {
			t.Errorf("fixture %s has no expectation in this test", f)
		}
	}
	// Every check of the audit has a fixture that fails (or warns) it.
	covered := map[string]bool{}
	for _, c := range index {
		covered[c] = true
	}
	for _, c := range Checks {
		if !covered[c.ID()] {
			t.Errorf("check %s has no fixture that fails it", c.ID())
		}
	}
}
