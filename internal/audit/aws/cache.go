package aws

import (
	"fmt"
	"strings"
	"time"

	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/report"
)

// The ECR pull-through cache (issue 39): a pull of REGISTRY/PREFIX/REPO
// that a cache rule serves is, on a cache miss, ECR fetching the image from
// the rule's upstream with the rule's credentials (a Secrets Manager
// secret named ecr-pullthroughcache/...), importing it as the node role
// (ecr:BatchImportUpstreamImage) into a repository it creates when there
// is none yet (ecr:CreateRepository, with a repository creation template's
// settings).

// The cache's files: asked for only when an image is named, and beyond the
// rules only when a rule serves it.
const (
	FileCacheRules     = "ecr-describe-pull-through-cache-rules.json"
	FileTemplates      = "ecr-describe-repository-creation-templates.json"
	FileRepositories   = "ecr-describe-repositories.json"
	FileRegistryPolicy = "ecr-get-registry-policy.json"
	FileSecret         = "secretsmanager-describe-secret.json"
)

// CacheFiles are the cache's contract files. A call whose answer is the
// API's "not found" (RepositoryNotFoundException: no repository yet;
// RegistryPolicyNotFoundException: no registry policy;
// ResourceNotFoundException: no such secret) is written as that answer,
// boto3's {"Error": {"Code": ..., "Message": ...}}: it is what the audit
// decides from.
var CacheFiles = []File{
	{FileCacheRules, "aws ecr describe-pull-through-cache-rules", "pullThroughCacheRules", false},
	{FileTemplates, "aws ecr describe-repository-creation-templates", "repositoryCreationTemplates", false},
	{FileRepositories, "aws ecr describe-repositories --repository-names REPOSITORY", "repositories", false},
	{FileRegistryPolicy, "aws ecr get-registry-policy", "registryId", false},
	{FileSecret, "aws secretsmanager describe-secret --secret-id CREDENTIAL_ARN", "ARN", false},
}

// CacheActions are what a pull through a cache rule asks of the node role
// beyond ECRActions: the import on a miss, and the repository's creation
// when it does not exist yet.
var CacheActions = []string{"ecr:BatchImportUpstreamImage", "ecr:CreateRepository"}

// The cache's output shapes (members as the CLI prints them: camelCase for
// ECR, PascalCase for Secrets Manager).
type (
	CacheRulesOutput struct {
		PullThroughCacheRules []ecrtypes.PullThroughCacheRule `json:"pullThroughCacheRules"`
	}
	TemplatesOutput struct {
		RegistryId                  *string                               `json:"registryId"`
		RepositoryCreationTemplates []ecrtypes.RepositoryCreationTemplate `json:"repositoryCreationTemplates"`
	}
	RepositoriesOutput struct {
		Repositories []ecrtypes.Repository `json:"repositories"`
	}
	RegistryPolicyOutput struct {
		RegistryId *string `json:"registryId"`
		PolicyText *string `json:"policyText"`
	}
	// SecretOutput is describe-secret's output: the secret's metadata,
	// never its value (the audit never calls get-secret-value).
	SecretOutput struct {
		ARN              *string
		Name             *string
		Description      *string
		KmsKeyId         *string
		CreatedDate      *time.Time
		LastChangedDate  *time.Time
		LastAccessedDate *time.Time
		DeletedDate      *time.Time
		PrimaryRegion    *string
		OwningService    *string
		Tags             []smtypes.Tag
	}
)

// SecretPrefix is the name every pull-through cache secret must start with.
const SecretPrefix = "ecr-pullthroughcache/"

// notFound is whether a recorded answer is the API's "there is none".
func notFound(code string) bool { return strings.HasSuffix(code, "NotFoundException") }

// cacheModel is what the model holds of the cache.
type cacheModel struct {
	// ImageRepository is the repository the image names in this account's
	// registry (empty: no image, or another account's).
	ImageRepository string
	ImageRef        string // the image as named
	CacheRules      []ecrtypes.PullThroughCacheRule
	Templates       []ecrtypes.RepositoryCreationTemplate
	// RepoExists: the image's repository exists (nil: unknown).
	RepoExists *bool
	// RegistryPolicy is the registry's permissions policy ("" none);
	// registryPolicyKnown says whether the file was given.
	RegistryPolicy      string
	registryPolicyKnown bool
	Secret              *SecretOutput
	// secretAnswer is describe-secret's "not found" answer, when that was
	// the answer.
	secretAnswer *RecordedError
}

func (m *Model) indexCache(raw *Raw) {
	if raw.CacheRules != nil {
		m.CacheRules = raw.CacheRules.PullThroughCacheRules
	}
	if raw.Templates != nil {
		m.Templates = raw.Templates.RepositoryCreationTemplates
	}
	if raw.Repositories != nil {
		exists := false
		for _, r := range raw.Repositories.Repositories {
			exists = exists || r.RepositoryName != nil
		}
		m.RepoExists = &exists
	}
	if e, ok := raw.Errors[FileRepositories]; ok && notFound(e.Code) {
		no := false
		m.RepoExists = &no
		m.Have[FileRepositories] = true
	}
	if raw.RegistryPolicy != nil {
		m.RegistryPolicy, m.registryPolicyKnown = str(raw.RegistryPolicy.PolicyText), true
	}
	if e, ok := raw.Errors[FileRegistryPolicy]; ok && notFound(e.Code) {
		m.registryPolicyKnown = true
		m.Have[FileRegistryPolicy] = true
	}
	m.Secret = raw.Secret
	if e, ok := raw.Errors[FileSecret]; ok && notFound(e.Code) {
		m.secretAnswer = e
		m.Have[FileSecret] = true
	}
}

// imageRepository is the repository path of an image reference.
func imageRepository(image string) string {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(image))
	if err != nil {
		return ""
	}
	return reference.Path(named)
}

// imageAccount is the account of an ECR image's registry host
// (ACCOUNT.dkr.ecr.REGION.amazonaws.com[.cn]), "" for another registry.
func imageAccount(image string) string {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(image))
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.ToLower(reference.Domain(named)), ".")
	if len(parts) < 5 || parts[1] != "dkr" || parts[2] != "ecr" {
		return ""
	}
	return parts[0]
}

// prefixMatches: a rule's or template's prefix covers the repository
// (PREFIX/..., or ROOT for every repository).
func prefixMatches(prefix, repo string) bool {
	return prefix == "ROOT" || strings.HasPrefix(repo, prefix+"/")
}

// cacheRule is the rule that serves the image's repository: the longest
// matching prefix.
func (m *Model) cacheRule() *ecrtypes.PullThroughCacheRule {
	var best *ecrtypes.PullThroughCacheRule
	for i := range m.CacheRules {
		r := &m.CacheRules[i]
		p := str(r.EcrRepositoryPrefix)
		if prefixMatches(p, m.ImageRepository) && (best == nil || p != "ROOT" && len(p) > len(str(best.EcrRepositoryPrefix))) {
			best = r
		}
	}
	return best
}

// template is the repository creation template that applies to the
// cache's new repository: PULL_THROUGH_CACHE among its uses, the longest
// matching prefix (ROOT last).
func (m *Model) template() *ecrtypes.RepositoryCreationTemplate {
	var best *ecrtypes.RepositoryCreationTemplate
	for i := range m.Templates {
		t := &m.Templates[i]
		applies := false
		for _, a := range t.AppliedFor {
			applies = applies || a == ecrtypes.RCTAppliedForPullThroughCache
		}
		p := str(t.Prefix)
		if !applies || !prefixMatches(p, m.ImageRepository) {
			continue
		}
		if best == nil || str(best.Prefix) == "ROOT" || p != "ROOT" && len(p) > len(str(best.Prefix)) {
			best = t
		}
	}
	return best
}

// secretName is a Secrets Manager ARN's secret name (the ARN ends in the
// name and a dash with six random characters).
func secretName(arn string) string {
	_, name, ok := strings.Cut(arn, ":secret:")
	if !ok {
		return arn
	}
	if i := strings.LastIndexByte(name, '-'); i > 0 && len(name)-i == 7 {
		name = name[:i]
	}
	return name
}

// warnCacheFiles warns, when an image is named, for the cache's files
// that are not given and that its audit asks for: the rules, and when a
// rule serves the image the templates, the repository, the registry
// policy and the rule's secret.
func (m *Model) warnCacheFiles() []report.AuditWarning {
	if m.ImageRepository == "" {
		return nil
	}
	need := []string{FileCacheRules}
	if m.Have[FileCacheRules] {
		r := m.cacheRule()
		if r == nil {
			return nil
		}
		need = []string{FileTemplates, FileRepositories, FileRegistryPolicy}
		if r.CredentialArn != nil {
			need = append(need, FileSecret)
		}
	}
	var out []report.AuditWarning
	for _, f := range need {
		if e, ok := m.failed[f]; ok {
			out = append(out, report.AuditWarning{File: f, Message: "the call for " + f + " failed: " + e + "; the pull-through cache checks that read it warn instead of deciding", Command: m.command(f), Permission: m.denied[f]})
		} else if !m.Have[f] {
			out = append(out, report.AuditWarning{File: f, Message: f + " not given: the pull-through cache checks that read it warn instead of deciding", Command: m.Collect(f)})
		}
	}
	return out
}

// cacheCommand fills the cache files' placeholders.
func (m *Model) cacheCommand(c string) string {
	if m.ImageRepository != "" {
		c = strings.ReplaceAll(c, "REPOSITORY", m.ImageRepository)
	}
	if r := m.cacheRule(); r != nil && r.CredentialArn != nil {
		c = strings.ReplaceAll(c, "CREDENTIAL_ARN", *r.CredentialArn)
	}
	if strings.HasPrefix(c, "aws ecr ") || strings.HasPrefix(c, "aws secretsmanager ") {
		c += m.regionFlag()
	}
	return c
}

func ruleString(r *ecrtypes.PullThroughCacheRule) string {
	return fmt.Sprintf("%s -> %s", str(r.EcrRepositoryPrefix), str(r.UpstreamRegistryUrl))
}
