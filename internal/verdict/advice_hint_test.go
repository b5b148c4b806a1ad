package verdict

import (
	"testing"

	"github.com/pullpath/pullpath/internal/nodeplace"
)

// Every advice line that names a cloud's audit is one IsAuditHint knows,
// so a caller that ran the audit can drop it by identity.
func TestAuditHintsAreKnown(t *testing.T) {
	for _, tc := range []struct {
		code  Code
		host  string
		cloud nodeplace.Cloud
	}{
		{ConnectTimeout, "123456789012.dkr.ecr.us-east-1.amazonaws.com", nodeplace.AWS},
		{DNSNXDomain, "myacr.azurecr.io", nodeplace.Azure},
		{ConnectTimeout, "us-docker.pkg.dev", nodeplace.GCP},
	} {
		var found bool
		for _, l := range Advise(tc.code, tc.host, RoleRegistry) {
			if IsAuditHint(tc.cloud, l) {
				found = true
			}
			for _, other := range nodeplace.Clouds {
				if other != tc.cloud && IsAuditHint(other, l) {
					t.Errorf("%s: line %q is taken for %s's audit hint", tc.host, l, other)
				}
			}
		}
		if !found {
			t.Errorf("Advise(%s, %s) has no line IsAuditHint(%q) knows: %q", tc.code, tc.host, tc.cloud, Advise(tc.code, tc.host, RoleRegistry))
		}
	}
	if IsAuditHint("aws", "Next: `pullpath aws audit` with other words") {
		t.Errorf("a line that only looks like the hint is taken for it")
	}
}
