package gcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Access scopes that let the node's token read images: the kubelet's
// credential provider asks the metadata server for a token with the node's
// scopes; without one of these the registry sees no usable credential and
// the pull goes out anonymously (401/403).
var pullScopes = []string{
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/devstorage.read_only",
	"https://www.googleapis.com/auth/devstorage.read_write",
	"https://www.googleapis.com/auth/devstorage.full_control",
}

func hasPullScope(scopes []string) bool {
	for _, s := range scopes {
		if slices.Contains(pullScopes, s) || slices.Contains(pullScopes, "https://www.googleapis.com/auth/"+s) {
			return true
		}
	}
	return false
}

// checkScopes: every set of nodes in the subnet carries a scope that
// reads images (GKE's defaults do: devstorage.read_only for the default
// service account, cloud-platform for a custom one).
func checkScopes(m *Model, ns *nodeSubnet) report.CheckResult {
	if len(ns.Profiles) == 0 {
		return audit.Skip("no node pool or node in the subnet")
	}
	var ok []string
	for _, p := range ns.Profiles {
		if p.FromConfig && len(p.Scopes) == 0 {
			ok = append(ok, profileName(p)+": GKE's default scopes")
			continue
		}
		if !hasPullScope(p.Scopes) {
			c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("the nodes of %s have no storage or cloud-platform access scope (%s): the kubelet's credential provider gets no token that reads images, and the pull goes out anonymously (401/403)", profileName(p), shortScopes(p.Scopes)))
			pool := p.Pool
			if pool == "" {
				pool = "POOL"
			}
			sa := p.SA
			if sa == "" {
				sa = "SERVICE_ACCOUNT"
			}
			return audit.WithChange(audit.WithResources(c, "nodePools/"+pool), report.Change{Resource: "nodePools/" + pool, Kind: "node-pool",
				Action:  fmt.Sprintf("access scopes of an existing node pool cannot change: create a pool with the cloud-platform scope (IAM then decides) and move the workloads off %s", pool),
				Command: fmt.Sprintf("gcloud container node-pools create %s-v2 --cluster %s --location %s --project %s --service-account %s --scopes https://www.googleapis.com/auth/cloud-platform", pool, m.Cluster.Name, m.Location(), m.ClusterProject(), sa)})
		}
		ok = append(ok, profileName(p)+": "+shortScopes(p.Scopes))
	}
	return audit.Pass(strings.Join(ok, "; "))
}

func shortScopes(s []string) string {
	var out []string
	for _, x := range s {
		out = append(out, strings.TrimPrefix(x, "https://www.googleapis.com/auth/"))
	}
	if len(out) == 0 {
		return "no scopes"
	}
	return strings.Join(out, ", ")
}

// Roles that hold artifactregistry.repositories.downloadArtifacts (reader
// or above), and for images still in a Container Registry bucket, the
// storage roles that read objects.
var (
	arReaderRoles = []string{"roles/artifactregistry.reader", "roles/artifactregistry.writer", "roles/artifactregistry.repoAdmin",
		"roles/artifactregistry.createOnPushWriter", "roles/artifactregistry.createOnPushRepoAdmin", "roles/artifactregistry.admin",
		"roles/owner", "roles/editor"}
	gcsReaderRoles = []string{"roles/storage.objectViewer", "roles/storage.objectAdmin", "roles/storage.admin", "roles/storage.legacyObjectReader"}
)

type binding struct {
	Role, Where string
	Members     []string
	Conditional bool
	Condition   string // the condition's title or expression
}

// policyBindings reads the bindings of an IAM policy of any of Google's
// clients (Artifact Registry's, Resource Manager's, Secret Manager's
// Policy: the same JSON, one Go type each).
func policyBindings(p any, where string) []binding {
	data, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	var pol struct {
		Bindings []*struct {
			Role      string
			Members   []string
			Condition *struct{ Title, Expression string }
		}
	}
	if json.Unmarshal(data, &pol) != nil {
		return nil
	}
	var out []binding
	for _, b := range pol.Bindings {
		if b == nil {
			continue
		}
		x := binding{Role: b.Role, Where: where, Members: b.Members, Conditional: b.Condition != nil}
		if b.Condition != nil {
			x.Condition = cmp.Or(b.Condition.Title, b.Condition.Expression)
		}
		out = append(out, x)
	}
	return out
}

// checkIdentity: each node service account holds a role with
// artifactregistry.repositories.downloadArtifacts on the repository or its
// project (or, for gcr.io, a storage reader role on the project). It
// decides from what the policies show: an account with no reader role by
// name fails for its pool, and the groups, domains or principal sets a
// reader role goes to (which the audit cannot expand) are named as the one
// thing to check; a reader binding naming the account under a condition is
// a warn (the condition is not evaluated).
func checkIdentity(m *Model, ns *nodeSubnet) report.CheckResult {
	t := m.target
	repoPolicy, haveRepo := m.RepoPolicies[t.Repo]
	if !haveRepo && m.ProjectPolicy == nil {
		return audit.MissingResult(FileProjectPolicy, "", cmdProjectPolicy(t.Project))
	}
	roles := arReaderRoles
	if t.Kind == KindGCR {
		roles = append(append([]string(nil), arReaderRoles...), gcsReaderRoles...)
	}
	var bs []binding
	bs = append(bs, policyBindings(repoPolicy, "repository "+t.Repo)...)
	bs = append(bs, policyBindings(m.ProjectPolicy, "project "+t.Project)...)
	var ok []string
	var warn *report.CheckResult
	seen := map[string]bool{}
	for _, p := range ns.Profiles {
		if seen[p.SA] {
			continue
		}
		seen[p.SA] = true
		if p.SA == "" {
			return audit.Warn("", fmt.Sprintf("%s runs as the Compute Engine default service account of %s, whose number is unknown (%s of that project, or %s)", profileName(p), m.ClusterProject(), FileProject, FileInstances))
		}
		g := grantsOf(bs, roles, p.SA)
		switch {
		case g.hit != nil:
			ok = append(ok, fmt.Sprintf("%s holds %s on %s", p.SA, g.hit.Role, g.hit.Where))
		case !haveRepo && t.Kind == KindArtifactRegistry:
			if warn == nil {
				c := audit.Warn("", fmt.Sprintf("%s holds no reader role on project %s; the repository's own policy is not given (%s)", p.SA, t.Project, cmdRepoPolicy(t.Repo, t.Location, t.Project)))
				warn = &c
			}
		case g.conditional != nil:
			if warn == nil {
				c := audit.Warn("", fmt.Sprintf("%s holds %s on %s only under a condition (%s), which this audit does not evaluate", p.SA, g.conditional.Role, g.conditional.Where, g.conditional.Condition))
				warn = &c
			}
		default:
			return identityFail(t, p, g.sets)
		}
	}
	if warn != nil {
		return *warn
	}
	if len(ok) == 0 {
		return audit.Skip("no node pool or node in the subnet")
	}
	return audit.Pass(strings.Join(ok, "; "))
}

// grants is what the policies' reader bindings say of one service account.
type grants struct {
	hit         *binding // a reader role by name (or to allUsers, allAuthenticatedUsers), unconditional
	conditional *binding // a reader role by name under a condition
	sets        []setGrant
}

// setGrant is a reader role that goes to a set of principals the audit
// cannot expand (group:, domain:, principalSet:).
type setGrant struct {
	Member string
	b      *binding
}

func grantsOf(bs []binding, roles []string, sa string) grants {
	var g grants
	member := "serviceAccount:" + sa
	for i := range bs {
		b := &bs[i]
		if !slices.Contains(roles, b.Role) {
			continue
		}
		for _, mem := range b.Members {
			switch {
			case mem == member || mem == "allUsers" || mem == "allAuthenticatedUsers":
				if b.Conditional {
					g.conditional = b
				} else if g.hit == nil {
					g.hit = b
				}
			case strings.HasPrefix(mem, "group:") || strings.HasPrefix(mem, "domain:") || strings.HasPrefix(mem, "principalSet:"):
				g.sets = append(g.sets, setGrant{mem, b})
			}
		}
	}
	return g
}

// identityFail: no reader role names the account. The change grants it by
// name; a role that goes to a group is the one thing that might still let
// the pull through, named with the command that answers it.
func identityFail(t Target, p *nodeProfile, sets []setGrant) report.CheckResult {
	where := "repository " + t.Repo + " or project " + t.Project
	if t.Repo == "" {
		where = "project " + t.Project
	}
	summary := fmt.Sprintf("%s (the nodes of %s) holds no role with artifactregistry.repositories.downloadArtifacts on %s: the pull is denied (403 Permission \"artifactregistry.repositories.downloadArtifacts\" denied)", p.SA, profileName(p), where)
	var evidence []string
	if len(sets) > 0 {
		var names []string
		for _, s := range sets {
			names = append(names, fmt.Sprintf("%s (%s on %s)", s.Member, s.b.Role, s.b.Where))
		}
		summary = fmt.Sprintf("%s (the nodes of %s) holds no role with artifactregistry.repositories.downloadArtifacts by name on %s; a reader role goes to %s, which this audit cannot expand: unless the account is a member, the pull is denied (403 Permission \"artifactregistry.repositories.downloadArtifacts\" denied)",
			p.SA, profileName(p), where, strings.Join(names, ", "))
		for _, s := range sets {
			if email, ok := strings.CutPrefix(s.Member, "group:"); ok {
				evidence = append(evidence, fmt.Sprintf("check: gcloud identity groups memberships check-transitive-membership --group-email=%s --member-email=%s", email, p.SA))
			}
		}
	}
	c := audit.Fail(verdict.ConditionTLSIdentity, summary, evidence...)
	return audit.WithChange(audit.WithResources(audit.WithHost(c, t.Host), "projects/"+t.Project+"/locations/"+t.Location+"/repositories/"+t.Repo, p.SA), readerChange(t, p.SA))
}

func readerChange(t Target, sa string) report.Change {
	repo := t.Repo
	if repo == "" {
		repo = "REPOSITORY"
	}
	return report.Change{Resource: "projects/" + t.Project + "/locations/" + t.Location + "/repositories/" + repo, Kind: "artifact-registry-repository",
		Action:  "grant the node service account Artifact Registry Reader on the repository",
		Command: fmt.Sprintf("gcloud artifacts repositories add-iam-policy-binding %s --location %s --project %s --member=serviceAccount:%s --role=roles/artifactregistry.reader", repo, t.Location, t.Project, sa)}
}
