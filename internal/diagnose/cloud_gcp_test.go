package diagnose

import (
	"context"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// A GKE node's gce:// providerID names the gcp audit, and the gcp folder's
// audit puts the failing node's subnet first.
func TestGCPProviderIDAndFolder(t *testing.T) {
	if got := cloudOf("gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-p005"); got != "gcp" {
		t.Fatalf("cloudOf(gce://...) = %q, want gcp", got)
	}
	if auditCommands["gcp"] == "" || cloudName("gcp") != "GCP" {
		t.Fatalf("no gcp audit command or name")
	}
	f := auditFocus([]NodeRef{{Name: "gke-prod-batch-1a2b3c4d-z999", ProviderID: "gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-z999", Pool: "batch"}},
		"us-central1-docker.pkg.dev:443", "registry", string(verdict.ConnectTimeout))
	f.Image = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"
	r, err := GCPFolder("../audit/gcp/testdata/invalid-pga-off").Audit(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Subnets[0].ID != "nodes-b" || r.Verdict.Status != "fail" || r.Changes[0].Check != "private-google-access" {
		t.Errorf("first subnet %s, verdict %s, changes %+v", r.Subnets[0].ID, r.Verdict.Status, r.Changes)
	}
}
