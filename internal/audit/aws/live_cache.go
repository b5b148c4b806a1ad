package aws

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
)

// cache reads the ECR pull-through cache (cache.go): the registry's rules
// and repository creation templates, and, for the image a rule serves,
// whether its repository exists, the registry policy and the rule's
// secret's metadata (describe-secret: never the value). An API's "not
// found" is an answer, kept as such; a refusal leaves the file out.
func (c *collector) cache(ctx context.Context) {
	if c.o.Image == "" || imageAccount(c.o.Image) != c.account() {
		return // no image, or another account's registry: its rules are not this account's
	}
	m := &Model{Have: map[string]bool{}}
	m.ImageRepository = imageRepository(c.o.Image)
	if m.ImageRepository == "" {
		return
	}
	rules, err := all(ctx, ecr.NewDescribePullThroughCacheRulesPaginator(c.ecr, &ecr.DescribePullThroughCacheRulesInput{}),
		func(o *ecr.DescribePullThroughCacheRulesOutput) []ecrtypes.PullThroughCacheRule {
			return o.PullThroughCacheRules
		})
	if !c.keep(FileCacheRules, err) {
		return
	}
	c.raw.CacheRules = &CacheRulesOutput{PullThroughCacheRules: rules}
	m.CacheRules = rules
	rule := m.cacheRule()
	if rule == nil {
		return // no rule serves the image: nothing more to read
	}
	tmpls, err := all(ctx, ecr.NewDescribeRepositoryCreationTemplatesPaginator(c.ecr, &ecr.DescribeRepositoryCreationTemplatesInput{}),
		func(o *ecr.DescribeRepositoryCreationTemplatesOutput) []ecrtypes.RepositoryCreationTemplate {
			return o.RepositoryCreationTemplates
		})
	if c.keep(FileTemplates, err) {
		c.raw.Templates = &TemplatesOutput{RegistryId: rule.RegistryId, RepositoryCreationTemplates: tmpls}
	}
	repos, err := c.ecr.DescribeRepositories(ctx, &ecr.DescribeRepositoriesInput{RepositoryNames: []string{m.ImageRepository}})
	if c.answered(FileRepositories, err) {
		c.raw.Repositories = &RepositoriesOutput{Repositories: repos.Repositories}
	}
	pol, err := c.ecr.GetRegistryPolicy(ctx, &ecr.GetRegistryPolicyInput{})
	if c.answered(FileRegistryPolicy, err) {
		c.raw.RegistryPolicy = &RegistryPolicyOutput{RegistryId: pol.RegistryId, PolicyText: pol.PolicyText}
	}
	if rule.CredentialArn == nil {
		return
	}
	sec, err := c.sm.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: rule.CredentialArn})
	if c.answered(FileSecret, err) {
		c.raw.Secret = &SecretOutput{ARN: sec.ARN, Name: sec.Name, Description: sec.Description, KmsKeyId: sec.KmsKeyId,
			CreatedDate: sec.CreatedDate, LastChangedDate: sec.LastChangedDate, LastAccessedDate: sec.LastAccessedDate,
			DeletedDate: sec.DeletedDate, PrimaryRegion: sec.PrimaryRegion, OwningService: sec.OwningService, Tags: sec.Tags}
	}
}

// answered is keep, with the API's "not found" kept as the file's answer.
func (c *collector) answered(file string, err error) bool {
	var ae smithy.APIError
	if err != nil && errors.As(err, &ae) && notFound(ae.ErrorCode()) {
		if c.raw.Errors == nil {
			c.raw.Errors = map[string]*RecordedError{}
		}
		c.raw.Errors[file] = &RecordedError{Code: ae.ErrorCode(), Message: ae.ErrorMessage()}
		return false
	}
	return c.keep(file, err)
}

// account is the cluster's account, from its ARN.
func (c *collector) account() string {
	if c.raw.Cluster == nil || c.raw.Cluster.Cluster == nil {
		return ""
	}
	if parts := strings.Split(aws.ToString(c.raw.Cluster.Cluster.Arn), ":"); len(parts) >= 5 {
		return parts[4]
	}
	return ""
}
