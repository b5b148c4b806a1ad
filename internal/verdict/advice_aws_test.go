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
		{"myreg.azurecr.io", RoleRegistry, false},
	} {
		got := strings.Join(Advise(ConnectTimeout, tc.host, tc.role), "\n")
		if strings.Contains(got, "pullpath aws audit --cluster") != tc.want {
			t.Errorf("Advise(CONNECT_TIMEOUT, %s) names the aws audit = %v, want %v:\n%s", tc.host, !tc.want, tc.want, got)
		}
	}
}
