package diagnose

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Issue 39, item 5: the failing image is served by a cache rule. The
// answer's first change is the audit's cache change (the credential set,
// the node role's import permission) and the proof pulls an image the
// cache does not hold yet; an answer about the node's own path keeps its
// proof.
func TestAnswerCacheRule(t *testing.T) {
	const acrImage = "contosoacr.azurecr.io/library/nginx:1.27"
	const ptcImage = "111122223333.dkr.ecr.us-east-1.amazonaws.com/docker-hub/library/nginx:1.27"
	for _, tc := range []struct {
		name, dir, image string
		from             func(string, audit.Focus) (*report.AuditReport, error)
		code             verdict.Code
		cond             verdict.Condition
		change           string // in the first change's command
	}{
		{"acr unhealthy credential set", "../audit/azure/testdata/invalid-cache-credentials-unhealthy", acrImage, azaudit.FromFolder,
			verdict.CacheUpstreamUnauthorized, verdict.ConditionRegistry, "az acr credential-set update -r contosoacr -n dockerhub"},
		{"acr rate limited, anonymous Docker Hub", "../audit/azure/testdata/warn-cache-docker-hub-anonymous", acrImage, azaudit.FromFolder,
			verdict.CacheUpstreamRateLimited, verdict.ConditionRegistry, "az acr credential-set create -r contosoacr -n dockerhub -l docker.io"},
		{"ecr node role without the import", "../audit/aws/testdata/fail-ptc-batch-import", ptcImage, awsaudit.FromFolder,
			verdict.RegistryForbidden, verdict.ConditionTLSIdentity, "aws iam put-role-policy --role-name prod-node-role --policy-name ecr-pull-through-cache-docker-hub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ar, err := tc.from(tc.dir, audit.Focus{Image: tc.image})
			if err != nil {
				t.Fatal(err)
			}
			r := &report.DiagnoseReport{Image: tc.image, Audit: ar, Explain: &report.ExplainReport{Groups: []report.ExplainGroup{{
				Image: tc.image, Code: tc.code, Condition: tc.cond, Findings: 2, Nodes: []report.ExplainNode{{Name: "node-a", Status: report.NodeStatusFailed}},
			}}}}
			a := Answer(r, nil)
			if a.Status != report.AnswerBroken || len(a.Changes) == 0 || !audit.IsCacheCheck(a.Changes[0].Check) || !strings.Contains(a.Changes[0].Command, tc.change) {
				t.Fatalf("Answer = %s, changes %+v: want the cache change first with %q", a.Status, a.Changes, tc.change)
			}
			if a.Prove[len(a.Prove)-1] != cacheProof {
				t.Errorf("Prove = %q, want the pull of an image not yet cached last", a.Prove)
			}
		})
	}
	// the node's own path: no cache proof
	r := &report.DiagnoseReport{Image: ecrImage, Explain: explainScaleUp(), Sweep: sweepScaleUp()}
	if a := Answer(r, nil); strings.Contains(strings.Join(a.Prove, "\n"), "not hold yet") {
		t.Errorf("a connect timeout's proof = %q: no cache step", a.Prove)
	}
}
