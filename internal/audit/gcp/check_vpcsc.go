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
	if project == m.ClusterProject() {
		if sa := m.defaultSA(); sa != "" {
			return strings.TrimSuffix(sa, "-compute@developer.gserviceaccount.com")
		}
	}
	return ""
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
		return missing(FilePerimeters, cmdPerimeters(""))
	}
	t := m.target
	reg := m.projectNumber(t.Project)
	nodeProjects := []string{m.ClusterProject()}
	if m.NetworkProject() != m.ClusterProject() {
		nodeProjects = append(nodeProjects, m.NetworkProject())
	}
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
	var touched []string
	for _, p := range regular {
		cfg := p.Status
		if !restricts(cfg, svcs) {
			continue
		}
		regIn := holds(cfg, reg)
		for _, np := range nodeProjects {
			num := m.projectNumber(np)
			if num == "" {
				if regIn || reg == "" {
					return audit.Warn("", fmt.Sprintf("perimeter %s restricts %s; the number of project %s is unknown, so whether it is inside cannot be decided", title(p), strings.Join(svcs, ", "), np))
				}
				continue
			}
			nodeIn := holds(cfg, num)
			if reg == "" && nodeIn {
				return audit.Warn("", fmt.Sprintf("perimeter %s holds the nodes' project %s and restricts %s; the registry project %s's number is unknown (%s)", title(p), np, strings.Join(svcs, ", "), t.Project, FileProject))
			}
			if regIn == nodeIn || bridged(reg, num) {
				if nodeIn {
					if v := cfg.VpcAccessibleServices; v != nil && v.EnableRestriction && !slices.Contains(v.AllowedServices, "RESTRICTED-SERVICES") && !containsAny(v.AllowedServices, svcs) {
						c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("perimeter %s limits its networks to %s: %s is not among the VPC accessible services", title(p), strings.Join(v.AllowedServices, ", "), svcs[0]))
						return with(c, t.Host, []string{p.Name}, report.Change{Resource: p.Name, Kind: "service-perimeter",
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
			c := audit.Fail(verdict.ConditionTLSIdentity, fmt.Sprintf("perimeter %s holds %s but not %s and restricts %s: the pull is refused (403 \"Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier: ...\")", title(p), inside, outside, strings.Join(svcs, ", ")))
			return with(c, t.Host, []string{p.Name}, report.Change{Resource: p.Name, Kind: "service-perimeter",
				Action:  fmt.Sprintf("put projects/%s in perimeter %s (or add an ingress/egress rule for the node service account)", add, title(p)),
				Command: fmt.Sprintf("gcloud access-context-manager perimeters update %s --policy %s --add-resources projects/%s", lastSeg(p.Name), segment(p.Name, "accessPolicies"), add)})
		}
	}
	if len(touched) > 0 {
		return audit.Pass(strings.Join(touched, "; "))
	}
	return audit.Pass(fmt.Sprintf("no enforced perimeter restricting %s separates the nodes' project from %s", strings.Join(svcs, ", "), t.Project))
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
