package gcp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// FromFolder audits the gcloud --format=json files in dir (the folder
// `pullpath gcp collect` writes, or one made by hand with the same names).
func FromFolder(dir string, f audit.Focus) (*report.AuditReport, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--from %s: not a folder: want the folder `pullpath gcp collect --out` wrote, or one of gcloud --format=json outputs (docs/gcp.md)", dir)
	}
	m, err := Load(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	return Audit(m, dir, f)
}

// Live reads the cluster's configuration through Google's REST APIs
// (Collect) and audits it: the same model and checks as FromFolder.
func Live(ctx context.Context, o LiveOptions, f audit.Focus) (*report.AuditReport, error) {
	if o.Image == "" {
		o.Image = f.Image
	}
	c, err := Collect(ctx, o)
	if err != nil {
		return nil, err
	}
	m, err := Load(c.Files.FS())
	if err != nil {
		return nil, err
	}
	m.Warnings = append(c.Warnings, m.Warnings...)
	return Audit(m, audit.SourceLive, f)
}

// Audit runs every check on every node subnet of a loaded model; f.Image
// names the registry (empty: the folder's one repository in the cluster's
// region), f.Subnets keeps subnets, f.Nodes puts their subnets first.
func Audit(m *Model, source string, f audit.Focus) (*report.AuditReport, error) {
	start := time.Now()
	r := &report.AuditReport{
		APIVersion: "pullpath/v1",
		Kind:       report.GCPAuditKind,
		Source:     source,
		Warnings:   append([]report.AuditWarning(nil), m.Warnings...),
		StartedAt:  start.UTC(),
	}
	var t Target
	if f.Image != "" {
		var err error
		if t, err = ParseImage(f.Image); err != nil {
			return nil, err
		}
	} else {
		var w report.AuditWarning
		t, w = m.guessTarget()
		r.Warnings = append(r.Warnings, w)
	}
	m.target = t
	r.Target = report.AuditTarget{Cloud: string(nodeplace.GCP), Cluster: m.Cluster.Name, Region: m.Location(), Account: m.ClusterProject(),
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
	r.Warnings = append(r.Warnings, m.remoteWarnings()...)
	for _, np := range m.nodeProjects() {
		if np != t.Project && m.NodeProjects[np] == nil {
			r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("%s is missing: the nodes' project %s's number (perimeter membership) is known only from a node running as its default compute service account", FileNodeProject(np), np),
				File: FileNodeProject(np), Command: cmdProject(np)})
		}
	}
	hosts := t.hosts()
	for _, h := range hosts {
		h.Answer = m.resolve(h.Name)
	}
	subnets, ws := audit.Keep(f, m.buildSubnets(hosts), func(ns *nodeSubnet) string { return ns.Name }, m.Cluster.Name)
	r.Warnings = append(r.Warnings, ws...)
	for _, ns := range subnets {
		s := &report.AuditSubnet{ID: ns.Name, Name: ns.Path, Zone: ns.Region, Pools: ns.Pools, Nodes: ns.Nodes}
		if ns.Subnet != nil {
			s.CIDR = ns.Subnet.IpCidrRange
		}
		s.Checks = audit.RunAll(Checks, m, ns)
		r.Subnets = append(r.Subnets, s)
	}
	r.Hosts = auditHosts(m, hosts, subnets)
	audit.Finish(r, f.Place(m.place))
	r.DurationMS = units.MS(time.Since(start))
	return r, nil
}

// place finds a focus node among the cluster's instances (a GKE node is
// named after its instance; its providerID is gce://PROJECT/ZONE/INSTANCE)
// and names its subnet and pool; failing that, the pool its name carries
// (gke-CLUSTER-POOL-HASH-SUFFIX).
func (m *Model) place(n audit.Node) audit.Node {
	name := strings.ToLower(n.Name)
	if p := nodeplace.ParseProviderID(n.ProviderID); p.Cloud == nodeplace.GCP && p.Instance != "" {
		name = strings.ToLower(p.Instance)
	}
	if short, _, ok := strings.Cut(name, "."); ok {
		name = short
	}
	for _, in := range m.clusterInstances() {
		if strings.EqualFold(in.Name, name) {
			if nic := nic0(in); nic != nil && n.Subnet == "" {
				n.Subnet = lastSeg(nic.Subnetwork)
			}
			if n.Pool == "" {
				n.Pool = in.Labels[labelPool]
			}
			return n
		}
	}
	if n.Pool == "" {
		for _, p := range m.Cluster.NodePools {
			if p != nil && strings.HasPrefix(name, "gke-"+m.Cluster.Name+"-"+p.Name+"-") {
				n.Pool = p.Name
			}
		}
	}
	return n
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
			via = a.String() + ", Private Google Access"
		}
		for _, role := range h.Roles {
			out = append(out, report.AuditHost{Host: h.Name, Role: role, Via: via})
		}
	}
	return out
}
