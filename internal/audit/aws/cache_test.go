package aws

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	"github.com/pullpath/pullpath/internal/report"
)

const ptcImage = "111122223333.dkr.ecr.us-east-1.amazonaws.com/docker-hub/library/nginx:1.27"

// Issue 39: the healthy account with a working cache rule passes every
// cache check for an image the rule serves, with no warning; another
// image, or none, skips them saying why.
func TestPullThroughCacheHealthy(t *testing.T) {
	for _, tc := range []struct {
		image, skip string
	}{
		{ptcImage, ""},
		{"111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/checkout:1.4.2", "shop/checkout is not served by a cache: no pull-through cache rule's prefix covers it (ecr-public, docker-hub)"},
		{"", "no image named"},
		{"444455556666.dkr.ecr.us-east-1.amazonaws.com/docker-hub/library/nginx:1.27", "account 444455556666's registry"},
	} {
		r, err := FromFolder("testdata/valid-pull-through-cache", audit.Focus{Image: tc.image})
		if err != nil {
			t.Fatal(err)
		}
		if tc.image == ptcImage && (r.Verdict.Status != report.StepPass || len(r.Warnings) != 0) {
			t.Errorf("%s: verdict %+v, warnings %+v: want pass, none", tc.image, r.Verdict, r.Warnings)
		}
		for _, s := range r.Subnets {
			for _, id := range []string{CheckCacheMiss, CheckCacheIdentity, CheckCacheSecret, CheckCacheTemplate} {
				c := checkByID(t, s, id)
				want := report.StepPass
				if tc.skip != "" {
					want = report.StepSkip
				}
				if c.Status != want || !strings.Contains(c.Summary, tc.skip) {
					t.Errorf("%q %s %s = %s %q, want %s %q", tc.image, s.ID, id, c.Status, c.Summary, want, tc.skip)
				}
			}
		}
	}
	// the ECR Public rule needs no credentials
	r, _ := FromFolder("testdata/valid-pull-through-cache", audit.Focus{Image: "111122223333.dkr.ecr.us-east-1.amazonaws.com/ecr-public/eks-distro/kubernetes/pause:3.9"})
	if c := checkByID(t, r.Subnets[0], CheckCacheSecret); c.Status != report.StepSkip || !strings.Contains(c.Summary, "uses no credentials") {
		t.Errorf("ecr-public image: %s %q, want skip, no credentials", c.Status, c.Summary)
	}
}

// Issue 42 for the cache's files: each removed from the healthy cache
// account, audited for the image the rule serves, fails no subnet and a
// warning names it with its command.
func TestPullThroughCacheMissingFiles(t *testing.T) {
	audittest.MissingFileNeverFails(t, audittest.Account{Dir: "testdata/valid-pull-through-cache", From: FromFolder,
		Focus: audit.Focus{Image: ptcImage}, Required: []string{FileCluster, FileSubnets}})
}

// An existing repository's own policy may grant ecr:BatchImportUpstreamImage
// (ECR's pull-through cache IAM page): with the repository there, a role
// lacking it by its policies and the registry's is a warn naming
// get-repository-policy, not a fail; an explicit Deny still fails.
func TestPullThroughCacheExistingRepositoryPolicy(t *testing.T) {
	dir := copyDir(t, "testdata/fail-ptc-batch-import")
	repo := `{"repositories": [{"repositoryArn": "arn:aws:ecr:us-east-1:111122223333:repository/docker-hub/library/nginx", "registryId": "111122223333", "repositoryName": "docker-hub/library/nginx"}]}`
	if err := os.WriteFile(filepath.Join(dir, FileRepositories), []byte(repo), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := FromFolder(dir, audit.Focus{Image: ptcImage})
	if err != nil {
		t.Fatal(err)
	}
	c := checkByID(t, r.Subnets[0], CheckCacheIdentity)
	if c.Status != report.StepWarn || !strings.Contains(c.Summary, "aws ecr get-repository-policy --repository-name docker-hub/library/nginx") {
		t.Errorf("existing repository: %s %q, want warn naming get-repository-policy", c.Status, c.Summary)
	}
	if c := checkByID(t, r.Subnets[0], CheckCacheTemplate); c.Status != report.StepSkip {
		t.Errorf("existing repository: template check %s %q, want skip", c.Status, c.Summary)
	}
	sim := `{"EvaluationResults": [{"EvalActionName": "ecr:BatchImportUpstreamImage", "EvalResourceName": "*", "EvalDecision": "explicitDeny", "MatchedStatements": [{"SourcePolicyId": "deny-imports"}]}]}`
	if err := os.WriteFile(filepath.Join(dir, FileSimulate), []byte(sim), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = FromFolder(dir, audit.Focus{Image: ptcImage})
	if err != nil {
		t.Fatal(err)
	}
	if c := checkByID(t, r.Subnets[0], CheckCacheIdentity); c.Status != report.StepFail || !strings.Contains(c.Summary, "explicit Deny in deny-imports") {
		t.Errorf("explicit Deny: %s %q, want fail naming deny-imports", c.Status, c.Summary)
	}
}
