package diagnose

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Issue 39: an Artifact Registry remote repository whose service agent
// cannot read the upstream credentials (the runtime's "failed to fetch
// bearer token ... upstream credentials are invalid") puts the secret's
// grant first and proves with an image the cache does not hold yet; so does
// a perimeter whose VPC-SC config keeps the cache from its upstream.
func TestAnswerGCPRemoteRepository(t *testing.T) {
	const image = "us-central1-docker.pkg.dev/shop-prod/dockerhub/library/nginx:1.27"
	for _, tc := range []struct{ dir, change string }{
		{"invalid-remote-secret-no-accessor", "gcloud secrets add-iam-policy-binding dockerhub-token --project shop-prod"},
		{"invalid-remote-vpcsc-deny", "gcloud artifacts vpcsc-config allow --project shop-prod --location us-central1"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			ar, err := gcpaudit.FromFolder("../audit/gcp/testdata/"+tc.dir, audit.Focus{Image: image})
			if err != nil {
				t.Fatal(err)
			}
			r := &report.DiagnoseReport{Image: image, Audit: ar, Explain: &report.ExplainReport{Groups: []report.ExplainGroup{{
				Image: image, Code: verdict.CacheUpstreamUnauthorized, Condition: verdict.ConditionRegistry, Findings: 2,
				Nodes: []report.ExplainNode{{Name: "gke-prod-default-pool-1a2b3c4d-x001", Status: report.NodeStatusFailed}},
			}}}}
			a := Answer(r, nil)
			if a.Status != report.AnswerBroken || len(a.Changes) == 0 || !audit.IsCacheCheck(a.Changes[0].Check) || !strings.Contains(a.Changes[0].Command, tc.change) {
				t.Fatalf("Answer = %s, changes %+v: want the remote repository's change first with %q", a.Status, a.Changes, tc.change)
			}
			if a.Prove[len(a.Prove)-1] != cacheProof {
				t.Errorf("Prove = %q, want the pull of an image not yet cached last", a.Prove)
			}
		})
	}
}
