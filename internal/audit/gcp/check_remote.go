package gcp

import (
	"fmt"

	artifactregistry "google.golang.org/api/artifactregistry/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// An Artifact Registry remote repository (mode REMOTE_REPOSITORY) is the
// registry's own pull-through cache: the node pulls from its pkg.dev host,
// and on a miss Artifact Registry fetches the upstream (Docker Hub or a
// custom registry) with the repository's upstreamCredentials, a username
// and a Secret Manager secret version the Artifact Registry service agent
// (service-NUMBER@gcp-sa-artifactregistry.iam.gserviceaccount.com, NUMBER
// the registry project's) must be able to read. Inside a VPC Service
// Controls perimeter, the project's vpcsc-config for the location decides
// whether a remote repository may reach an upstream outside it (DENY, the
// default, or ALLOW). Either failure is the cache's, not the node's path:
// an image already cached still pulls, one not yet cached fails.
const (
	modeRemote      = "REMOTE_REPOSITORY"
	vpcscAllow      = "ALLOW"
	svcAgentDomain  = "@gcp-sa-artifactregistry.iam.gserviceaccount.com"
	msgUpstreamAuth = "failed to fetch bearer token ... upstream credentials are invalid"
)

// Roles that hold secretmanager.versions.access.
var secretReaderRoles = []string{"roles/secretmanager.secretAccessor", "roles/secretmanager.admin", "roles/owner"}

// remoteRepo is the audited repository when it is a remote one.
func (m *Model) remoteRepo() *artifactregistry.Repository {
	if r := m.Repos[m.target.Repo]; r != nil && r.Mode == modeRemote {
		return r
	}
	return nil
}

// upstreamSecret is the secret (name, project) of the audited remote
// repository's upstream credentials (passwordSecretVersion is
// projects/P/secrets/S/versions/V, P an id or a number).
func (m *Model) upstreamSecret() (secret, project string) {
	r := m.remoteRepo()
	if r == nil || r.RemoteRepositoryConfig == nil || r.RemoteRepositoryConfig.UpstreamCredentials == nil ||
		r.RemoteRepositoryConfig.UpstreamCredentials.UsernamePasswordCredentials == nil {
		return "", ""
	}
	v := r.RemoteRepositoryConfig.UpstreamCredentials.UsernamePasswordCredentials.PasswordSecretVersion
	return segment(v, "secrets"), segment(v, "projects")
}

// upstream names what a remote repository caches.
func upstream(r *artifactregistry.Repository) string {
	c := r.RemoteRepositoryConfig
	switch {
	case c == nil:
		return "its upstream"
	case c.DockerRepository != nil && c.DockerRepository.PublicRepository != "":
		return c.DockerRepository.PublicRepository
	case c.DockerRepository != nil && c.DockerRepository.CustomRepository != nil:
		return c.DockerRepository.CustomRepository.Uri
	case c.CommonRepository != nil:
		return c.CommonRepository.Uri
	}
	return "its upstream"
}

// serviceAgent is the Artifact Registry service agent of the registry's
// project ("" when its number is not in the folder).
func (m *Model) serviceAgent() string {
	if n := m.projectNumber(m.target.Project); n != "" {
		return "service-" + n + svcAgentDomain
	}
	return ""
}

// notRemote is the skip of the remote checks for any other repository.
func notRemote(m *Model) (report.CheckResult, bool) {
	t := m.target
	if t.Kind != KindArtifactRegistry || t.Repo == "" {
		return audit.Skip("not an Artifact Registry repository: no remote repository in the pull"), true
	}
	r, ok := m.Repos[t.Repo]
	if !ok {
		return audit.MissingResult(FileRepo(t.Repo), "", cmdRepo(t.Repo, t.Location, t.Project)), true
	}
	if r.Mode != modeRemote {
		return audit.Skip(fmt.Sprintf("repository %s is a %s: it serves what was pushed to it, with no upstream", t.Repo, modeName(r.Mode))), true
	}
	return report.CheckResult{}, false
}

func modeName(mode string) string {
	if mode == "" {
		return "STANDARD_REPOSITORY"
	}
	return mode
}

// checkRemoteCredentials: a remote repository with upstream credentials
// needs the Artifact Registry service agent to read their secret
// (roles/secretmanager.secretAccessor on the secret, or on its project);
// without it every cache miss fails to authenticate to the upstream.
func checkRemoteCredentials(m *Model, _ *nodeSubnet) report.CheckResult {
	if c, done := notRemote(m); done {
		return c
	}
	t, r := m.target, m.remoteRepo()
	secret, sproj := m.upstreamSecret()
	if secret == "" {
		return audit.Pass(fmt.Sprintf("remote repository %s pulls %s with no upstream credentials (anonymously: the upstream's anonymous limits apply)", t.Repo, upstream(r)))
	}
	agent := m.serviceAgent()
	if agent == "" {
		return audit.MissingResult(FileProject, "", cmdProject(t.Project))
	}
	user := r.RemoteRepositoryConfig.UpstreamCredentials.UsernamePasswordCredentials.Username
	bs := policyBindings(m.SecretPolicies[secret], "secret "+secret)
	if sproj == t.Project || sproj == m.projectNumber(t.Project) {
		bs = append(bs, policyBindings(m.ProjectPolicy, "project "+t.Project)...)
	}
	g := grantsOf(bs, secretReaderRoles, agent)
	switch {
	case g.hit != nil:
		return audit.Pass(fmt.Sprintf("remote repository %s authenticates to %s as %s with secret %s, which the Artifact Registry service agent %s reads (%s on %s)", t.Repo, upstream(r), user, secret, agent, g.hit.Role, g.hit.Where))
	case g.conditional != nil:
		return audit.Warn(verdict.ConditionRegistry, fmt.Sprintf("the Artifact Registry service agent %s reads secret %s only under a condition (%s), which this audit does not evaluate", agent, secret, g.conditional.Condition))
	}
	summary := fmt.Sprintf("remote repository %s authenticates to %s as %s with secret %s, but the Artifact Registry service agent %s holds no roles/secretmanager.secretAccessor on it or its project: every cache miss fails (%q); images already cached still pull", t.Repo, upstream(r), user, secret, agent, msgUpstreamAuth)
	var evidence []string
	for _, s := range g.sets {
		evidence = append(evidence, fmt.Sprintf("%s on %s goes to %s, which this audit cannot expand", s.b.Role, s.b.Where, s.Member))
	}
	c := audit.Fail(verdict.ConditionRegistry, summary, evidence...)
	return audit.WithChange(audit.WithResources(audit.WithHost(c, t.Host), "projects/"+sproj+"/secrets/"+secret, agent), report.Change{Resource: "projects/" + sproj + "/secrets/" + secret, Kind: "secret",
		Action:  fmt.Sprintf("let the Artifact Registry service agent read the upstream credentials of remote repository %s", t.Repo),
		Command: fmt.Sprintf("gcloud secrets add-iam-policy-binding %s --project %s --member=serviceAccount:%s --role=roles/secretmanager.secretAccessor", secret, sproj, agent)})
}

// checkRemoteVPCSC: a remote repository whose project is inside an
// enforced perimeter that restricts Artifact Registry reaches an upstream
// outside it only when the project's vpcsc-config for the location is
// ALLOW (DENY is the default).
func checkRemoteVPCSC(m *Model, _ *nodeSubnet) report.CheckResult {
	if c, done := notRemote(m); done {
		return c
	}
	t, r := m.target, m.remoteRepo()
	reg := m.projectNumber(t.Project)
	var in *string
	for _, p := range m.Perimeters {
		if p == nil || p.Status == nil || p.PerimeterType == "PERIMETER_TYPE_BRIDGE" || !restricts(p.Status, []string{svcArtifactRegistry}) {
			continue
		}
		if holds(p.Status, reg) {
			name := title(p)
			in = &name
			break
		}
	}
	if in == nil {
		return audit.Pass(fmt.Sprintf("project %s is in no enforced perimeter that restricts %s: remote repository %s reaches %s", t.Project, svcArtifactRegistry, t.Repo, upstream(r)))
	}
	if m.VPCSC == nil {
		return audit.MissingResult(FileVPCSCConfig, "", cmdVPCSCConfig(t.Location, t.Project))
	}
	if m.VPCSC.VpcscPolicy == vpcscAllow {
		return audit.Pass(fmt.Sprintf("project %s is in perimeter %s, and its VPC-SC config for %s allows remote repositories to reach their upstreams", t.Project, *in, t.Location))
	}
	policy := m.VPCSC.VpcscPolicy
	if policy == "" || policy == "VPCSC_POLICY_UNSPECIFIED" {
		policy = "unset (DENY, the default)"
	}
	c := audit.Fail(verdict.ConditionRegistry, fmt.Sprintf("project %s is in perimeter %s, and its VPC-SC config for %s is %s: remote repository %s may not reach %s outside the perimeter; every cache miss fails, images already cached still pull", t.Project, *in, t.Location, policy, t.Repo, upstream(r)))
	name := "projects/" + t.Project + "/locations/" + t.Location + "/vpcscConfig"
	return audit.WithChange(audit.WithResources(audit.WithHost(c, t.Host), name), report.Change{Resource: name, Kind: "artifact-registry-vpcsc-config",
		Action:  fmt.Sprintf("allow the remote repositories of %s in %s to reach their upstreams outside the perimeter", t.Project, t.Location),
		Command: fmt.Sprintf("gcloud artifacts vpcsc-config allow --project %s --location %s", t.Project, t.Location)})
}

// needsRemote: the repository's description, and what the remote checks
// read for it: the secret's policy and the project's number, or the
// perimeters and the VPC-SC config.
func needsRemoteCredentials(m *Model, _ *nodeSubnet) []string {
	out := m.repoFile()
	if secret, _ := m.upstreamSecret(); secret != "" {
		out = append(out, FileProject)
		if _, ok := m.SecretPolicies[secret]; !ok {
			out = append(out, FileSecretPolicy(secret))
		}
	}
	return out
}

func needsRemoteVPCSC(m *Model, _ *nodeSubnet) []string {
	out := m.repoFile()
	if m.remoteRepo() != nil {
		out = append(out, FilePerimeters, FileProject, FileVPCSCConfig)
	}
	return out
}

func (m *Model) repoFile() []string {
	if m.target.Kind == KindArtifactRegistry && m.target.Repo != "" {
		return []string{FileRepo(m.target.Repo)}
	}
	return nil
}

// remoteWarnings name the files a remote repository's checks would read
// that the folder does not hold.
func (m *Model) remoteWarnings() []report.AuditWarning {
	t := m.target
	var out []report.AuditWarning
	if t.Kind == KindArtifactRegistry && t.Repo != "" && m.Repos[t.Repo] == nil {
		out = append(out, report.AuditWarning{Message: fmt.Sprintf("%s is missing: whether repository %s is a remote repository (a cache of an upstream) is unknown", FileRepo(t.Repo), t.Repo),
			File: FileRepo(t.Repo), Command: cmdRepo(t.Repo, t.Location, t.Project)})
	}
	if m.remoteRepo() == nil {
		return out
	}
	if secret, sproj := m.upstreamSecret(); secret != "" && m.SecretPolicies[secret] == nil {
		out = append(out, report.AuditWarning{Message: fmt.Sprintf("%s is missing: who may read remote repository %s's upstream credentials is known only from project roles", FileSecretPolicy(secret), t.Repo),
			File: FileSecretPolicy(secret), Command: cmdSecretPolicy(secret, sproj)})
	}
	if m.VPCSC == nil {
		out = append(out, report.AuditWarning{Message: fmt.Sprintf("%s is missing: whether remote repository %s may reach its upstream from inside a perimeter is unknown", FileVPCSCConfig, t.Repo),
			File: FileVPCSCConfig, Command: cmdVPCSCConfig(t.Location, t.Project)})
	}
	return out
}
