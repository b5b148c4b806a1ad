package diagnose

import (
	"context"
	"testing"

	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/verdict"
)

// A GKE node's gce:// providerID names the gcp audit, and the gcp folder's
// audit puts the failing node's subnet first.
func TestGCPProviderIDAndFolder(t *testing.T) {
	if got := nodeplace.CloudOf("gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-p005"); got != nodeplace.GCP {
		t.Fatalf("CloudOf(gce://...) = %q, want gcp", got)
	}
	if want := "pullpath gcp collect IMAGE --project PROJECT --location LOCATION --cluster CLUSTER --out DIR, then pullpath diagnose ... --from-gcp DIR (or pullpath gcp audit IMAGE --from DIR)"; byHand(nodeplace.GCP) != want {
		t.Fatalf("byHand(gcp) = %q, want %q", byHand(nodeplace.GCP), want)
	}
	f := auditFocus([]NodeRef{{Name: "gke-prod-batch-1a2b3c4d-z999", ProviderID: "gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-z999", Pool: "batch"}},
		"us-central1-docker.pkg.dev:443", "registry", string(verdict.ConnectTimeout))
	f.Image = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"
	r, err := gcpaudit.Provider.Folder("../audit/gcp/testdata/invalid-pga-off").Audit(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Subnets[0].ID != "nodes-b" || r.Verdict.Status != "fail" || r.Changes[0].Check != "private-google-access" {
		t.Errorf("first subnet %s, verdict %s, changes %+v", r.Subnets[0].ID, r.Verdict.Status, r.Changes)
	}
}
