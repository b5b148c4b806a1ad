package sweep

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// A failing GKE node (gce:// providerID) names the gcp audit of the image
// in the node's project, with its failing subnet.
func TestNextStepsGKE(t *testing.T) {
	r := &report.SweepReport{Image: "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"}
	n := &report.SweepNode{PlannedNode: report.PlannedNode{Name: "gke-prod-batch-1a2b3c4d-k005", Cloud: "gce",
		ProviderID: "gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-k005", Subnet: "nodes-b", SubnetSource: "label pullpath.io/subnet"}}
	next := nextSteps(r, []*report.SweepNode{n})
	want := "pullpath gcp audit us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --project shop-prod --location LOCATION --cluster CLUSTER   # the cloud's configuration: subnet nodes-b (failing) against the healthy subnets"
	if len(next) == 0 || next[0] != want {
		t.Errorf("next = %q, want first %q", next, want)
	}
	n.ProviderID = "gce:///z/i"
	if next := nextSteps(r, []*report.SweepNode{n}); len(next) == 0 || !strings.Contains(next[0], "--project PROJECT ") {
		t.Errorf("a providerID without a project: next = %q, want the PROJECT placeholder", next)
	}
}
