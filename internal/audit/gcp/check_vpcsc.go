package gcp

import (
	"fmt"
	"slices"
	"strings"

	accesscontextmanager "google.golang.org/api/accesscontextmanager/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// projectNumber is a project's number when the folder tells it:
// projects-describe.json for the registry's project, the default compute
// service account's email for the cluster's.
func (m *Model) projectNumber(project string) string {
	if m.Project != nil && strings.EqualFold(m.Project.ProjectId, project) && m.Project.ProjectNumber != 0 {
		return itoa(m.Project.ProjectNumber)
	}
	if p := m.NodeProjects[project]; p != nil && p.ProjectNumber != 0 {
		return itoa(p.ProjectNumber)
	}
	if project == m.ClusterProject() {
		if sa := m.defaultSA(); sa != "" {
			return strings.TrimSuffix(sa, "-compute@developer.gserviceaccount.com")
		}
	}
	return ""
}

// nodeProjects are the projects the nodes' requests come from: the
// cluster's, and the network's host project with Shared VPC.
func (m *Model) nodeProjects() []string {
	out := []string{m.ClusterProject()}
	if m.NetworkProject() != m.ClusterProject() {
		out = append(out, m.NetworkProject())
	}
	return out
}

// knownNumbers are the project numbers the folder ties to a project id.
func (m *Model) knownNumbers() map[string]string {
	out := map[string]string{}
	if m.Project != nil && m.Project.ProjectNumber != 0 {
		out[itoa(m.Project.ProjectNumber)] = m.Project.ProjectId
	}
	for id, p := range m.NodeProjects {
		if p != nil && p.ProjectNumber != 0 {
			out[itoa(p.ProjectNumber)] = id
		}
	}
	if n := m.projectNumber(m.ClusterProject()); n != "" {
		out[n] = m.ClusterProject()
	}
	return out
}

// unaccounted are a perimeter's resources the folder cannot name: a
// project number no file ties to a project id, or the nodes' own VPC
// network (whose membership this audit does not decide). A VPC network
// resource (//compute.googleapis.com/projects/ID/global/networks/N) names
// its project by id. With none, every member is known, and a project whose
// number is unknown is not among them.
func (m *Model) unaccounted(cfg *accesscontextmanager.ServicePerimeterConfig) []string {
	known := m.knownNumbers()
	var out []string
	for _, r := range cfg.Resources {
		switch {
		case strings.HasPrefix(r, "projects/"):
			if known[strings.TrimPrefix(r, "projects/")] == "" {
				out = append(out, r)
			}
		case strings.HasPrefix(r, "//compute.googleapis.com/"):
			if sameRes(r, m.NetworkPath()) {
				out = append(out, r+" (the nodes' network)")
			}
		default:
			out = append(out, r)
		}
	}
	return out
}

// members names a perimeter's resources: project ids for known numbers.
func (m *Model) members(cfg *accesscontextmanager.ServicePerimeterConfig) string {
	known := m.knownNumbers()
	var out []string
	for _, r := range cfg.Resources {
		if id := known[strings.TrimPrefix(r, "projects/")]; strings.HasPrefix(r, "projects/") && id != "" {
			out = append(out, r+" = "+id)
		} else {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// services VPC Service Controls names a pull from t by.
func (t Target) services() []string {
	if t.Kind == KindGCR {
		return []string{svcContainerRegistry, svcArtifactRegistry, svcStorage}
	}
	return []string{svcArtifactRegistry}
}

func restricts(cfg *accesscontextmanager.ServicePerimeterConfig, svcs []string) bool {
	for _, s := range cfg.RestrictedServices {
		if s == "*" || slices.Contains(svcs, s) {
			return true
		}
	}
	return false
}

func holds(cfg *accesscontextmanager.ServicePerimeterConfig, number string) bool {
	return number != "" && slices.Contains(cfg.Resources, "projects/"+number)
}

// checkVPCSC: a perimeter (enforced configuration) that restricts the
// registry's service must hold the nodes' projects (the cluster's, and the
// network's with Shared VPC) on the same side as the registry's project;
// across the boundary only ingress or egress rules admit the pull
// ("Request is prohibited by organization's policy.
// vpcServiceControlsUniqueIdentifier: ..."). A bridge perimeter holding
// both sides admits it. Inside a perimeter with VPC accessible services
// on, the registry's service must be allowed.
func checkVPCSC(m *Model, ns *nodeSubnet) report.CheckResult {
	if !m.PerimetersKnown {
		return audit.MissingResult(FilePerimeters, "", cmdPerimeters(""))
	}
	t := m.target
	reg := m.projectNumber(t.Project)
	nodeProjects := m.nodeProjects()
	svcs := t.services()
	var regular, bridges []*accesscontextmanager.ServicePerimeter
	for _, p := range m.Perimeters {
		if p == nil || p.Status == nil {
			continue
		}
		if p.PerimeterType == "PERIMETER_TYPE_BRIDGE" {
			bridges = append(bridges, p)
		} else {
			regular = append(regular, p)
		}
	}
	bridged := func(a, b string) bool {
		for _, br := range bridges {
			if holds(br.Status, a) && holds(br.Status, b) {
				return true
			}
		}
		return false
	}
	var touched, evidence []string
	for _, p := range regular {
		cfg := p.Status
		if !restricts(cfg, svcs) {
			continue
		}
		regIn := holds(cfg, reg)
		for _, np := range nodeProjects {
			num := m.projectNumber(np)
			nodeIn := holds(cfg, num)
			if num == "" {
				if un := m.unaccounted(cfg); len(un) > 0 {
					if regIn || reg == "" {
						return audit.Warn("", fmt.Sprintf("perimeter %s restricts %s; the number of project %s is unknown (%s) and the perimeter lists %s, which the folder does not name, so whether the nodes are inside cannot be decided", title(p), strings.Join(svcs, ", "), np, FileNodeProject(np), strings.Join(un, ", ")))
					}
					continue
				}
				// every member is known: the nodes' project is not one of them
				num = fmt.Sprintf("$(gcloud projects describe %s --format='value(projectNumber)')", np)
				evidence = append(evidence, fmt.Sprintf("every resource perimeter %s lists is a project or network the folder names (%s): project %s, whose number is not in the folder, is not among them", title(p), m.members(cfg), np))
			}
			if reg == "" && nodeIn {
				return audit.Warn("", fmt.Sprintf("perimeter %s holds the nodes' project %s and restricts %s; the registry project %s's number is unknown (%s)", title(p), np, strings.Join(svcs, ", "), t.Project, FileProject))
			}
			if regIn == nodeIn || bridged(reg, num) {
				if nodeIn {
					if v := cfg.VpcAccessibleServices; v != nil && v.EnableRestriction && !slices.Contains(v.AllowedServices, "RESTRICTED-SERVICES") && !containsAny(v.AllowedServices, svcs) {
						c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("perimeter %s limits its networks to %s: %s is not among the VPC accessible services", title(p), strings.Join(v.AllowedServices, ", "), svcs[0]))
						return audit.WithChange(audit.WithResources(audit.WithHost(c, t.Host), p.Name), report.Change{Resource: p.Name, Kind: "service-perimeter",
							Action:  "allow the registry's service from the perimeter's networks",
							Command: fmt.Sprintf("gcloud access-context-manager perimeters update %s --policy %s --add-vpc-allowed-services %s", lastSeg(p.Name), segment(p.Name, "accessPolicies"), svcs[0])})
					}
					touched = append(touched, fmt.Sprintf("%s holds both projects", title(p)))
				}
				continue
			}
			inside, outside, rules := "the registry's project "+t.Project, "the nodes' project "+np, len(cfg.IngressPolicies) > 0
			add := num
			if nodeIn {
				inside, outside, rules, add = "the nodes' project "+np, "the registry's project "+t.Project, len(cfg.EgressPolicies) > 0, reg
			}
			if rules {
				return audit.Warn("", fmt.Sprintf("perimeter %s holds %s but not %s and restricts %s; it has ingress/egress rules, which this audit does not evaluate", title(p), inside, outside, strings.Join(svcs, ", ")))
			}
			c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("perimeter %s holds %s but not %s and restricts %s: the pull is refused (403 \"Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier: ...\")", title(p), inside, outside, strings.Join(svcs, ", ")), evidence...)
			return audit.WithChange(audit.WithResources(audit.WithHost(c, t.Host), p.Name), report.Change{Resource: p.Name, Kind: "service-perimeter",
				Action:  fmt.Sprintf("put projects/%s in perimeter %s (or add an ingress/egress rule for the node service account)", add, title(p)),
				Command: fmt.Sprintf("gcloud access-context-manager perimeters update %s --policy %s --add-resources projects/%s", lastSeg(p.Name), segment(p.Name, "accessPolicies"), add)})
		}
	}
	if len(touched) > 0 {
		return audit.Pass(strings.Join(touched, "; "), evidence...)
	}
	return audit.Pass(fmt.Sprintf("no enforced perimeter restricting %s separates the nodes' project from %s", strings.Join(svcs, ", "), t.Project), evidence...)
}

func title(p *accesscontextmanager.ServicePerimeter) string {
	if p.Title != "" {
		return p.Title
	}
	return lastSeg(p.Name)
}

func containsAny(list, vs []string) bool {
	for _, v := range vs {
		if slices.Contains(list, v) {
			return true
		}
	}
	return false
}
