package verdict

import (
	"strings"
	"testing"
)

// ECR and S3 hosts point to the audit that names the AWS object to change;
// other registries do not.
func TestAdviseNamesTheAWSAudit(t *testing.T) {
	for _, tc := range []struct {
		host string
		role Role
		want bool
	}{
		{"111122223333.dkr.ecr.us-east-1.amazonaws.com", RoleRegistry, true},
		{"prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com", RoleBlob, true},
		{"111122223333.dkr-ecr.us-east-1.on.aws", RoleRegistry, true},
		{"myreg.azurecr.io", RoleRegistry, false},
	} {
		got := strings.Join(Advise(ConnectTimeout, tc.host, tc.role), "\n")
		if strings.Contains(got, "pullpath aws audit --cluster") != tc.want {
			t.Errorf("Advise(CONNECT_TIMEOUT, %s) names the aws audit = %v, want %v:\n%s", tc.host, !tc.want, tc.want, got)
		}
	}
}

// ECR's dual-stack names are ECR, and their IPv4-only twins are what
// PrivateLink serves (AWS's "Making requests to Amazon ECR registries").
func TestECRDualStackName(t *testing.T) {
	for _, tc := range []struct {
		host, v4 string
	}{
		{"111122223333.dkr-ecr.us-east-1.on.aws", "111122223333.dkr.ecr.us-east-1.amazonaws.com"},
		{"111122223333.dkr-ecr.us-east-1.on.aws:443", "111122223333.dkr.ecr.us-east-1.amazonaws.com"},
		{"111122223333.dkr-ecr-fips.us-gov-west-1.on.aws", "111122223333.dkr.ecr-fips.us-gov-west-1.amazonaws.com"},
		{"111122223333.dkr-ecr.cn-north-1.on.amazonwebservices.com.cn", "111122223333.dkr.ecr.cn-north-1.amazonaws.com.cn"},
		{"ecr.eu-west-1.api.aws", "api.ecr.eu-west-1.amazonaws.com"},
		{"111122223333.dkr.ecr.us-east-1.amazonaws.com", ""},
		{"111122223333.dkr.ecr.us-east-1.on.aws", ""}, // the wrong pattern some configs shipped
		{"registry.example.on.aws", ""},
	} {
		if got := ECRIPv4Name(tc.host); got != tc.v4 {
			t.Errorf("ECRIPv4Name(%q) = %q, want %q", tc.host, got, tc.v4)
		}
		if tc.v4 != "" && DetectPlatform(tc.host) != PlatformECR {
			t.Errorf("DetectPlatform(%q) = %s, want ecr", tc.host, DetectPlatform(tc.host))
		}
	}
	got := strings.Join(Advise(ConnectUnreachable, "111122223333.dkr-ecr.us-east-1.on.aws", RoleRegistry), "\n")
	if !strings.Contains(got, "PrivateLink does not serve") || !strings.Contains(got, "111122223333.dkr.ecr.us-east-1.amazonaws.com") {
		t.Errorf("Advise(CONNECT_UNREACHABLE, dual-stack ECR) does not name PrivateLink and the IPv4 name:\n%s", got)
	}
}
