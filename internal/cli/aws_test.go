package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
	"github.com/pullpath/pullpath/internal/report"
)

const awsFixtures = "../audit/aws/testdata/"

func TestAWSAuditExitCodes(t *testing.T) {
	tests := []struct {
		fixture string
		code    int
		want    string
	}{
		{"valid-healthy", 0, "VERDICT PASS"},
		{"warn-nat-other-az", 0, "VERDICT WARN"},
		{"fail-s3-route", 3, "FAILING BESIDE HEALTHY: subnet-0c3c3c3c3c3c3c3c3"},
		{"fail-private-dns", 4, "VERDICT FAIL (dns, every-subnet)"},
		{"fail-identity", 6, "one cause for every subnet: identity, not network"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "aws", "audit", "--from", awsFixtures+tt.fixture)
			if code != tt.code {
				t.Errorf("aws audit --from %s exit = %d, want %d (stderr %q)", tt.fixture, code, tt.code, errOut)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("aws audit --from %s output lacks %q:\n%s", tt.fixture, tt.want, out)
			}
		})
	}
}

func TestAWSAuditJSON(t *testing.T) {
	code, out, _ := runCLI(t, "", "aws", "audit", "--from", awsFixtures+"fail-endpoint-ecr-dkr-placement", "-o", "json")
	if code != 3 {
		t.Fatalf("exit = %d, want 3", code)
	}
	var r report.AuditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("-o json is not an AuditReport: %v", err)
	}
	if r.APIVersion != "pullpath/v1" || r.Kind != "AWSAuditReport" || len(r.Subnets) != 3 || r.Subnets[0].ID != "subnet-0c3c3c3c3c3c3c3c3" {
		t.Errorf("report = %s %s with %d subnets, first %s", r.APIVersion, r.Kind, len(r.Subnets), r.Subnets[0].ID)
	}
	if len(r.Changes) != 1 || r.Changes[0].Resource != "vpce-0d22d22d22d22d22d" || !strings.Contains(r.Changes[0].Command, "--add-subnet-ids subnet-0c3c3c3c3c3c3c3c3") {
		t.Errorf("changes = %+v, want the ecr.dkr endpoint to take subnet-0c3c3c3c3c3c3c3c3", r.Changes)
	}
}

func TestAWSUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"aws", "audit"}, "want --cluster NAME (live) or --from DIR (offline)"},
		{[]string{"aws", "audit", "--from", "x", "--cluster", "c"}, "--from audits a saved folder"},
		{[]string{"aws", "audit", "--from", awsFixtures + "valid-healthy", "--image-size", "big"}, "--image-size \"big\""},
		{[]string{"aws", "audit", "--from", awsFixtures + "valid-healthy", "-o", "xml"}, "unknown output format"},
		{[]string{"aws", "audit", "--from", t.TempDir()}, "no AWS CLI outputs"},
		{[]string{"aws", "collect", "--cluster", "c"}, "want --out DIR"},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code != 1 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v = exit %d, stderr %q; want exit 1 saying %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "700MiB": 700 << 20, "1.5GiB": 3 << 29, "2GB": 2e9} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
}

func TestAWSAuditImageAndSubnet(t *testing.T) {
	code, out, _ := runCLI(t, "", "aws", "audit", "444455556666.dkr.ecr.eu-west-1.amazonaws.com/shop/api:1", "--from", awsFixtures+"fail-s3-route",
		"--subnet", "subnet-0a1a1a1a1a1a1a1a1", "-o", "json")
	var r report.AuditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if code != 0 || len(r.Subnets) != 1 || r.Subnets[0].ID != "subnet-0a1a1a1a1a1a1a1a1" || r.Target.Registry != "444455556666.dkr.ecr.us-east-1.amazonaws.com" {
		t.Errorf("exit %d, subnets %d, registry %q: want 0, the healthy subnet alone, the image's account", code, len(r.Subnets), r.Target.Registry)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w.Message, "the registry is in eu-west-1, the cluster in us-east-1")
	}
	if !found {
		t.Errorf("warnings %+v: want the cross-region registry named", r.Warnings)
	}
}

// The live commands end to end: the SDK's default credential chain (from
// the environment here), --endpoint-url at the loopback AWS server,
// collect's folder audited offline, and the live audit, agree.
func TestAWSCollectThenAuditFrom(t *testing.T) {
	srv := fakeaws.New(awsFixtures + "fail-s3-route")
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_PROFILE", "")
	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := runCLI(t, "", "aws", "collect", "--cluster", "prod", "--region", "us-east-1", "--endpoint-url", srv.URL, "--out", out)
	if code != 0 || !strings.Contains(stdout, "wrote 17 files to "+out) {
		t.Fatalf("collect = exit %d, %q, %q; want 17 files written", code, stdout, stderr)
	}
	code, offline, _ := runCLI(t, "", "aws", "audit", "--from", out, "-o", "json")
	if code != 3 {
		t.Errorf("audit --from collect's folder = exit %d, want 3", code)
	}
	code, live, _ := runCLI(t, "", "aws", "audit", "--cluster", "prod", "--region", "us-east-1", "--endpoint-url", srv.URL, "-o", "json")
	if code != 3 {
		t.Errorf("audit --cluster = exit %d, want 3", code)
	}
	var a, b report.AuditReport
	if json.Unmarshal([]byte(offline), &a) != nil || json.Unmarshal([]byte(live), &b) != nil {
		t.Fatal("audit output is not JSON")
	}
	if a.Verdict.Summary != b.Verdict.Summary || len(a.Changes) != 1 || len(b.Changes) != 1 || a.Changes[0].Command != b.Changes[0].Command {
		t.Errorf("offline %q %+v, live %q %+v: want the same verdict and change", a.Verdict.Summary, a.Changes, b.Verdict.Summary, b.Changes)
	}
}

// Issue 39's done-when: `pullpath aws audit` on an image behind a
// pull-through cache rule with a node role lacking
// ecr:BatchImportUpstreamImage names the role, the action and the rule,
// and gives the `aws iam put-role-policy` change (exit 6, identity).
func TestAWSAuditPullThroughCacheRole(t *testing.T) {
	const image = "111122223333.dkr.ecr.us-east-1.amazonaws.com/docker-hub/library/nginx:1.27"
	code, out, errOut := runCLI(t, "", "aws", "audit", image, "--from", "../audit/aws/testdata/fail-ptc-batch-import")
	if code != 6 {
		t.Fatalf("exit = %d (%s), want 6", code, errOut)
	}
	for _, want := range []string{
		"arn:aws:iam::111122223333:role/prod-node-role may not pull docker-hub/library/nginx through cache rule docker-hub -> registry-1.docker.io: ecr:BatchImportUpstreamImage not allowed",
		`$ aws iam put-role-policy --role-name prod-node-role --policy-name ecr-pull-through-cache-docker-hub --policy-document '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:BatchImportUpstreamImage","ecr:CreateRepository"],"Resource":"arn:aws:ecr:us-east-1:111122223333:repository/docker-hub/*"}]}'`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("aws audit output lacks %q:\n%s", want, out)
		}
	}
	// the same account and image with the role allowed passes
	if code, out, _ := runCLI(t, "", "aws", "audit", image, "--from", "../audit/aws/testdata/valid-pull-through-cache"); code != 0 {
		t.Errorf("the healthy cache account = exit %d:\n%s", code, out)
	}
}
