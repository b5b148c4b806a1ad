package aws

import (
	"fmt"
	"strings"

	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// servedByCache is the cache rule that serves the image, or the result
// that says why there is none to check: no image, another account's, the
// rules file not given, no rule matching.
func (m *Model) servedByCache() (*ecrtypes.PullThroughCacheRule, *report.CheckResult) {
	skip := func(s string) (*ecrtypes.PullThroughCacheRule, *report.CheckResult) {
		r := audit.Skip(s)
		return nil, &r
	}
	switch {
	case m.ImageRepository == "" && m.RegistryAccount != "" && m.RegistryAccount != m.Account:
		return skip(fmt.Sprintf("the image is in account %s's registry: its cache rules are not in this folder", m.RegistryAccount))
	case m.ImageRepository == "":
		return skip("no image named: the pull-through cache rules are checked for the image's repository (pullpath aws audit IMAGE)")
	}
	if !m.given(FileCacheRules) {
		r := m.missing(FileCacheRules)
		return nil, &r
	}
	rule := m.cacheRule()
	if rule == nil {
		var prefixes []string
		for _, r := range m.CacheRules {
			prefixes = append(prefixes, str(r.EcrRepositoryPrefix))
		}
		what := "the registry has no pull-through cache rule"
		if len(prefixes) > 0 {
			what = "no pull-through cache rule's prefix covers it (" + strings.Join(prefixes, ", ") + ")"
		}
		return skip(fmt.Sprintf("%s is not served by a cache: %s", m.ImageRepository, what))
	}
	return rule, nil
}

// checkCacheMiss: the image is served by a cache rule; on a miss ECR fetches
// it from the upstream, and the layers of a miss may be served by redirect
// from the upstream's own storage (aws/containers-roadmap #2304, #1614,
// #2053; bottlerocket-os/bottlerocket #3631): a node with no internet path
// then fails only on the first pull of each image.
func checkCacheMiss(m *Model, ns *NodeSubnet) report.CheckResult {
	rule, r := m.servedByCache()
	if r != nil {
		return *r
	}
	ev := []string{fmt.Sprintf("cache rule %s (upstream %s): %s is pulled from the upstream on a cache miss", ruleString(rule), upstreamOf(rule), m.ImageRepository),
		"a miss's layers may be redirected to the upstream's own storage: the probe's walk names the host (pullpath probe IMAGE on a node)"}
	if ok, via := m.internetOK(ns); ok {
		return audit.WithResources(audit.Pass(fmt.Sprintf("%s is served by cache rule %s; a cache miss's redirect to the upstream's storage goes out by %s", m.ImageRepository, str(rule.EcrRepositoryPrefix), via), ev...), str(rule.EcrRepositoryPrefix))
	}
	c := audit.Warn(verdict.ConditionRoute, fmt.Sprintf("%s is served by cache rule %s, and %s has no internet path: an image not yet cached may fail on its first pull when the layers are redirected to %s's storage; warm the cache from a network with that path, or give the nodes that path",
		m.ImageRepository, str(rule.EcrRepositoryPrefix), ns.ID, upstreamOf(rule)), ev...)
	c = audit.WithResources(c, str(rule.EcrRepositoryPrefix), ns.ID)
	return audit.WithChange(c, report.Change{Resource: str(rule.EcrRepositoryPrefix), Kind: "ecr-pull-through-cache-rule",
		Action:  "warm the cache: pull each image not cached yet once from a host with an internet path (or give the node subnets a way out: a NAT gateway in each subnet's AZ)",
		Command: fmt.Sprintf("docker pull %s   # on a host with an internet path, before the nodes pull it", m.ImageRef)})
}

func upstreamOf(r *ecrtypes.PullThroughCacheRule) string {
	if u := str(r.UpstreamRegistryUrl); u != "" {
		return u
	}
	return string(r.UpstreamRegistry)
}

// repoARN is the ARN of a repository of this registry.
func (m *Model) repoARN(repo string) string {
	return fmt.Sprintf("arn:%s:ecr:%s:%s:repository/%s", m.Partition, m.Region, m.Account, repo)
}

// cacheDecision is one action's decision for the node role: the
// simulation's (identity policies) and the registry policy's.
type cacheDecision struct {
	action   string
	allowed  bool
	denyBy   string // the policy whose explicit Deny decides
	evidence []string
	unknown  bool // no simulation result for the action
}

func (m *Model) decideCacheAction(action, resource string) cacheDecision {
	d := cacheDecision{action: action}
	var sim *iamtypes.EvaluationResult
	for i := range m.Simulate {
		if strings.EqualFold(str(m.Simulate[i].EvalActionName), action) {
			sim = &m.Simulate[i]
			break
		}
	}
	if sim == nil {
		d.unknown = true
		d.evidence = append(d.evidence, fmt.Sprintf("%s: %s holds no result for it (%s)", action, FileSimulate, m.command(FileSimulate)))
	} else {
		d.evidence = append(d.evidence, fmt.Sprintf("%s: %s by the role's policies", action, sim.EvalDecision))
		switch sim.EvalDecision {
		case iamtypes.PolicyEvaluationDecisionTypeAllowed:
			d.allowed = true
		case iamtypes.PolicyEvaluationDecisionTypeExplicitDeny:
			d.denyBy = "the role's policies"
			for _, s := range sim.MatchedStatements {
				d.denyBy = str(s.SourcePolicyId)
				break
			}
			return d
		}
	}
	// the registry's permissions policy grants these actions too (the
	// pull-through cache IAM page)
	if !m.registryPolicyKnown {
		m.given(FileRegistryPolicy)
		if !d.allowed {
			d.evidence = append(d.evidence, fmt.Sprintf("%s: the registry policy is unknown (%s not given)", action, FileRegistryPolicy))
		}
		return d
	}
	if m.RegistryPolicy == "" {
		d.evidence = append(d.evidence, fmt.Sprintf("%s: the registry has no permissions policy", action))
		return d
	}
	dec, why := evalPolicy(m.RegistryPolicy, request{action: action, resource: resource, principal: m.NodeRoleARN, account: m.Account})
	d.evidence = append(d.evidence, fmt.Sprintf("%s: registry policy: %s", action, why))
	switch dec {
	case allowed:
		d.allowed = true
	case explicitDeny:
		d.allowed, d.denyBy = false, "the registry policy"
	}
	return d
}

// checkCacheIdentity: a cache miss imports the image as the node role
// (ecr:BatchImportUpstreamImage), and creates the repository first when
// it does not exist yet (ecr:CreateRepository); either is granted by the
// role's policies or the registry's permissions policy (ECR's "IAM
// permissions required to sync an upstream registry"). A repository
// creation template's role does not stand in for the node role's
// ecr:CreateRepository: ECR assumes it only to apply the template's tags
// and KMS key (checkCacheTemplate).
func checkCacheIdentity(m *Model, ns *NodeSubnet) report.CheckResult {
	rule, r := m.servedByCache()
	if r != nil {
		return *r
	}
	if m.Simulate == nil && !m.given(FileSimulate) {
		return m.missing(FileSimulate)
	}
	prefix := str(rule.EcrRepositoryPrefix)
	role := m.NodeRoleARN
	if role == "" {
		role = "the node role"
	}
	resource := m.repoARN(m.ImageRepository)
	actions := []string{"ecr:BatchImportUpstreamImage"}
	var ev []string
	switch {
	case m.RepoExists == nil:
		m.given(FileRepositories)
		actions = append(actions, "ecr:CreateRepository")
		ev = append(ev, fmt.Sprintf("whether %s exists is unknown (%s not given): ecr:CreateRepository is needed if it does not", m.ImageRepository, FileRepositories))
	case !*m.RepoExists:
		actions = append(actions, "ecr:CreateRepository")
		ev = append(ev, fmt.Sprintf("%s does not exist yet: the first pull creates it", m.ImageRepository))
	default:
		ev = append(ev, fmt.Sprintf("%s exists: ecr:CreateRepository is not needed", m.ImageRepository))
	}
	var denied, undecided []string
	explicit := ""
	for _, a := range actions {
		d := m.decideCacheAction(a, resource)
		ev = append(ev, d.evidence...)
		switch {
		case d.allowed:
		case d.unknown:
			undecided = append(undecided, fmt.Sprintf("%s has no result for %s", FileSimulate, a))
		case d.denyBy == "" && m.RepoExists != nil && *m.RepoExists:
			// an existing repository's own policy may grant the import
			undecided = append(undecided, fmt.Sprintf("%s is not allowed %s by its policies or the registry's; %s's repository policy may still grant it (aws ecr get-repository-policy --repository-name %s%s)", role, a, m.ImageRepository, m.ImageRepository, m.regionFlag()))
		case d.denyBy != "":
			explicit = d.denyBy
			denied = append(denied, a+" (explicit Deny in "+d.denyBy+")")
		default:
			denied = append(denied, a)
		}
	}
	if len(denied) > 0 {
		c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("%s may not pull %s through cache rule %s: %s not allowed (a cache miss imports the image as the node role)", role, m.ImageRepository, ruleString(rule), strings.Join(denied, ", ")), ev...)
		c = audit.WithResources(c, role, prefix)
		return audit.WithChange(c, m.cacheRoleChange(role, prefix, actions, explicit))
	}
	if len(undecided) > 0 {
		return audit.WithResources(audit.Warn(verdict.ConditionTLSIdentity, fmt.Sprintf("cache rule %s: %s", ruleString(rule), strings.Join(undecided, "; ")), ev...), role, prefix)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s may import %s through cache rule %s (%s)", role, m.ImageRepository, ruleString(rule), strings.Join(actions, ", ")), ev...), role, prefix)
}

// checkCacheTemplate: the repository creation template that applies to
// the cache's new repository (PULL_THROUGH_CACHE, longest prefix, ROOT
// last). A template with resource tags or a KMS key needs a customRoleArn
// that ECR assumes to apply them (ECR's "Creating a repository creation
// template"); without one the cache cannot create the repository and the
// first pull of every new image fails (aws/containers-roadmap #2398). Only
// a repository not created yet is concerned.
func checkCacheTemplate(m *Model, ns *NodeSubnet) report.CheckResult {
	rule, r := m.servedByCache()
	if r != nil {
		return *r
	}
	if m.RepoExists != nil && *m.RepoExists {
		return audit.Skip(fmt.Sprintf("%s exists: no repository is created, no template applies", m.ImageRepository))
	}
	if !m.given(FileTemplates) {
		return m.missing(FileTemplates)
	}
	t := m.template()
	if t == nil {
		return audit.Pass(fmt.Sprintf("no repository creation template applies to cache rule %s's new repositories: they take the registry's defaults", ruleString(rule)))
	}
	tp := str(t.Prefix)
	var needs []string
	if len(t.ResourceTags) > 0 {
		needs = append(needs, fmt.Sprintf("%d resource tag(s)", len(t.ResourceTags)))
	}
	if e := t.EncryptionConfiguration; e != nil && e.EncryptionType != ecrtypes.EncryptionTypeAes256 && e.EncryptionType != "" {
		key := str(e.KmsKey)
		if key == "" {
			key = "the AWS managed key"
		}
		needs = append(needs, fmt.Sprintf("%s encryption (key %s)", e.EncryptionType, key))
	}
	ev := []string{fmt.Sprintf("template %s applies to %s (appliedFor PULL_THROUGH_CACHE)", tp, m.ImageRepository)}
	switch {
	case len(needs) == 0:
		return audit.WithResources(audit.Pass(fmt.Sprintf("template %s sets no tags or KMS key on the cache's new repositories: no role needed", tp), ev...), "template "+tp)
	case t.CustomRoleArn != nil:
		ev = append(ev, "customRoleArn "+*t.CustomRoleArn)
		return audit.WithResources(audit.Pass(fmt.Sprintf("template %s applies %s as %s", tp, strings.Join(needs, " and "), *t.CustomRoleArn), ev...), "template "+tp)
	}
	c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("repository creation template %s sets %s on the repositories cache rule %s creates, with no customRoleArn: ECR cannot create %s, and the first pull of each new image fails", tp, strings.Join(needs, " and "), ruleString(rule), m.ImageRepository), ev...)
	c = audit.WithResources(c, "template "+tp, str(rule.EcrRepositoryPrefix))
	return audit.WithChange(c, report.Change{Resource: "template " + tp, Kind: "ecr-repository-creation-template",
		Action:  "give the template a role that ecr.amazonaws.com may assume, allowed ecr:CreateRepository, ecr:ReplicateImage, ecr:TagResource (and kms:CreateGrant, kms:RetireGrant, kms:DescribeKey for a KMS key); or drop its tags and KMS key",
		Command: fmt.Sprintf("aws ecr update-repository-creation-template --prefix %s --custom-role-arn arn:%s:iam::%s:role/ROLE%s", tp, m.Partition, m.Account, m.regionFlag())})
}

// cacheRoleChange is the node role's policy for the cache rule's
// repositories, or the removal of the Deny that decides.
func (m *Model) cacheRoleChange(role, prefix string, actions []string, explicit string) report.Change {
	name := role
	if i := strings.LastIndexByte(role, '/'); i >= 0 {
		name = role[i+1:]
	}
	if explicit != "" {
		return report.Change{Resource: role, Kind: "iam-role", Action: "remove the Deny of " + strings.Join(actions, ", ") + " in " + explicit + " (an explicit Deny wins over every Allow)",
			Command: fmt.Sprintf("aws iam list-attached-role-policies --role-name %s && aws iam list-role-policies --role-name %s && aws ecr get-registry-policy%s", name, name, m.regionFlag())}
	}
	resource := m.repoARN(prefix + "/*")
	if prefix == "ROOT" {
		resource = m.repoARN("*")
	}
	doc := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["%s"],"Resource":"%s"}]}`, strings.Join(actions, `","`), resource)
	return report.Change{Resource: role, Kind: "iam-role",
		Action:  fmt.Sprintf("allow %s on cache rule %s's repositories (%s)", strings.Join(actions, " and "), prefix, resource),
		Command: fmt.Sprintf("aws iam put-role-policy --role-name %s --policy-name ecr-pull-through-cache-%s --policy-document '%s'", name, strings.ReplaceAll(prefix, "/", "-"), doc)}
}

// checkCacheSecret: the rule's upstream credentials are a Secrets Manager
// secret whose name starts with ecr-pullthroughcache/ (ECR reads no other)
// and that exists; describe-secret tells both, never the value.
func checkCacheSecret(m *Model, ns *NodeSubnet) report.CheckResult {
	rule, r := m.servedByCache()
	if r != nil {
		return *r
	}
	prefix := str(rule.EcrRepositoryPrefix)
	arn := str(rule.CredentialArn)
	if arn == "" {
		return audit.Skip(fmt.Sprintf("cache rule %s uses no credentials (its upstream %s is pulled anonymously)", ruleString(rule), upstreamOf(rule)))
	}
	name := secretName(arn)
	ev := []string{"credentialArn " + arn}
	if !strings.HasPrefix(name, SecretPrefix) {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s authenticates to %s with secret %s, whose name does not start with %s: ECR reads only secrets named so, and the cache cannot authenticate to the upstream", ruleString(rule), upstreamOf(rule), name, SecretPrefix), ev...)
		return audit.WithChange(audit.WithResources(c, prefix, arn), report.Change{Resource: prefix, Kind: "ecr-pull-through-cache-rule",
			Action:  fmt.Sprintf("store the upstream credentials in a secret named %s%s and point the rule at it", SecretPrefix, prefix),
			Command: fmt.Sprintf("aws secretsmanager create-secret --name %s%s --secret-string file://creds.json%s && aws ecr update-pull-through-cache-rule --ecr-repository-prefix %s --credential-arn NEW_SECRET_ARN%s", SecretPrefix, prefix, m.regionFlag(), prefix, m.regionFlag())})
	}
	if m.secretAnswer != nil {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s's secret %s does not exist (%s): the cache cannot authenticate to %s", ruleString(rule), name, m.secretAnswer.Code, upstreamOf(rule)), ev...)
		return audit.WithChange(audit.WithResources(c, prefix, arn), report.Change{Resource: arn, Kind: "secretsmanager-secret",
			Action:  fmt.Sprintf("create the secret %s with the upstream's user name and access token, then point the rule at its ARN", name),
			Command: fmt.Sprintf("aws secretsmanager create-secret --name %s --secret-string file://creds.json%s && aws ecr update-pull-through-cache-rule --ecr-repository-prefix %s --credential-arn NEW_SECRET_ARN%s", name, m.regionFlag(), prefix, m.regionFlag())})
	}
	if m.Secret == nil && !m.given(FileSecret) {
		return m.missing(FileSecret)
	}
	if m.Secret == nil {
		return m.missing(FileSecret)
	}
	if m.Secret.DeletedDate != nil {
		c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("cache rule %s's secret %s is scheduled for deletion (%s): Secrets Manager refuses to read it, and the cache cannot authenticate to %s", ruleString(rule), name, m.Secret.DeletedDate.UTC().Format("2006-01-02"), upstreamOf(rule)), ev...)
		return audit.WithChange(audit.WithResources(c, prefix, arn), report.Change{Resource: arn, Kind: "secretsmanager-secret", Action: "restore the secret",
			Command: fmt.Sprintf("aws secretsmanager restore-secret --secret-id %s%s", arn, m.regionFlag())})
	}
	ev = append(ev, fmt.Sprintf("describe-secret: %s exists (its value is never read)", str(m.Secret.Name)))
	return audit.WithResources(audit.Pass(fmt.Sprintf("cache rule %s authenticates to %s with secret %s", ruleString(rule), upstreamOf(rule), name), ev...), prefix, arn)
}
