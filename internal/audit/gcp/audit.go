package gcp

import (
	"fmt"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// Options shape an audit.
type Options struct {
	Source string // "live" or the --from folder
	// Image is the image the pods pull (its registry host, project and
	// repository); empty: the folder's one repository in the cluster's
	// region.
	Image string
	// Subnets, when set, keeps only these node subnets (names or paths).
	Subnets []string
	Now     func() time.Time
}

// Audit runs every check on every node subnet of m.
func Audit(m *Model, o Options) (*report.AuditReport, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	start := now()
	r := &report.AuditReport{
		APIVersion: "pullpath/v1",
		Kind:       report.KindGCPAudit,
		Source:     o.Source,
		Warnings:   append([]report.AuditWarning(nil), m.Warnings...),
		StartedAt:  start.UTC(),
	}
	var t Target
	if o.Image != "" {
		var err error
		if t, err = ParseImage(o.Image); err != nil {
			return nil, err
		}
	} else {
		var w report.AuditWarning
		t, w = m.guessTarget()
		r.Warnings = append(r.Warnings, w)
	}
	m.target = t
	r.Target = report.AuditTarget{Cloud: "gcp", Cluster: m.Cluster.Name, Region: m.Location(), Account: m.ClusterProject(),
		Network: m.NetworkPath(), Registry: t.Host}
	if t.Kind == KindArtifactRegistry && t.Repo != "" {
		if _, ok := m.RepoPolicies[t.Repo]; !ok {
			r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("%s is missing: the repository's own IAM policy is unknown", FileRepoPolicy(t.Repo)),
				File: FileRepoPolicy(t.Repo), Command: cmdRepoPolicy(t.Repo, t.Location, t.Project)})
		}
	}
	if m.ProjectPolicy == nil {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: FileProjectPolicy + " is missing: the registry project's IAM policy is unknown", File: FileProjectPolicy, Command: cmdProjectPolicy(t.Project)})
	}
	if m.Project == nil {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: FileProject + " is missing: the registry project's number (perimeter membership) is unknown", File: FileProject, Command: cmdProject(t.Project)})
	}
	hosts := t.hosts()
	for _, h := range hosts {
		h.Answer = m.resolve(h.Name)
	}
	subnets := m.buildSubnets(hosts)
	if len(o.Subnets) > 0 {
		var keep []*nodeSubnet
		for _, id := range o.Subnets {
			found := false
			for _, ns := range subnets {
				if ns.Name == id || sameRes(ns.Path, id) {
					keep, found = append(keep, ns), true
				}
			}
			if !found {
				r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("--subnet %s is not a node subnet of cluster %s (no node pool or node in it)", id, m.Cluster.Name)})
			}
		}
		subnets = keep
		if len(keep) == 1 {
			r.Target.FocusSubnet = keep[0].Name
		}
	}
	for _, ns := range subnets {
		s := &report.AuditSubnet{ID: ns.Name, Name: ns.Path, Zone: ns.Region, Pools: ns.Pools, Nodes: ns.Nodes}
		if ns.Subnet != nil {
			s.CIDR = ns.Subnet.IpCidrRange
		}
		s.Checks = audit.RunAll(Checks, m, ns)
		for i := range s.Checks {
			if s.Checks[i].Status != report.CheckFail {
				s.Checks[i].Condition = ""
			}
		}
		r.Subnets = append(r.Subnets, s)
	}
	r.Hosts = auditHosts(m, hosts, subnets)
	audit.Finish(r, audit.Focus{})
	r.DurationMS = float64(now().Sub(start).Microseconds()) / 1000
	return r, nil
}

// auditHosts lists the pull's hosts and how the nodes reach them.
func auditHosts(m *Model, hosts []*pullHost, subnets []*nodeSubnet) []report.AuditHost {
	var out []report.AuditHost
	for _, h := range hosts {
		via := ""
		a := h.Answer
		switch {
		case !a.ok():
			via = "DNS: " + a.String()
		case a.Public:
			via = "Google's public addresses"
			var pga, nat int
			for _, ns := range subnets {
				if ns.pgaOn() {
					pga++
				} else {
					nat++
				}
			}
			switch {
			case nat == 0:
				via += ", Private Google Access"
			case pga == 0:
				via += ", Cloud NAT or external IPs"
			default:
				via += ", Private Google Access or Cloud NAT (differs by subnet)"
			}
		default:
			names := map[string]bool{}
			for _, ad := range a.Addrs {
				if n := vipName(ad); n != "" {
					names[n] = true
				}
			}
			var ns []string
			for n := range names {
				ns = append(ns, n)
			}
			via = fmt.Sprintf("%s (%s), Private Google Access", a, strings.Join(ns, ", "))
		}
		for _, role := range h.Roles {
			out = append(out, report.AuditHost{Host: h.Name, Role: role, Via: via})
		}
	}
	return out
}
