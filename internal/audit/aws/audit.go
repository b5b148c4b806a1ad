package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// FromFolder audits a folder of AWS CLI v2 JSON outputs (the files
// `pullpath aws collect` writes, docs/aws.md): the audit package's entry
// point for a folder.
func FromFolder(dir string, f audit.Focus) (*report.AuditReport, error) {
	raw, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	return Audit(raw, dir, f)
}

// Live reads the account through the AWS SDK (CollectRaw) and audits it:
// the audit package's live entry point.
func Live(ctx context.Context, o LiveOptions, f audit.Focus) (*report.AuditReport, error) {
	if o.Image == "" {
		o.Image = f.Image // the image's pull-through cache rule is read too
	}
	raw, err := CollectRaw(ctx, o)
	if err != nil {
		return nil, err
	}
	return Audit(raw, audit.SourceLive, f)
}

// Audit runs every check on every node subnet of raw and returns the
// finished report; source is where raw came from ("live" or the folder).
func Audit(raw *Raw, source string, f audit.Focus) (*report.AuditReport, error) {
	start := time.Now()
	m, err := Build(raw)
	if err != nil {
		return nil, err
	}
	r := &report.AuditReport{
		APIVersion: report.APIVersion,
		Kind:       report.AWSAuditKind,
		Source:     source,
		Target: report.AuditTarget{Cloud: string(nodeplace.AWS), Cluster: m.Cluster, Region: m.Region, Account: m.Account,
			Network: m.VPC, Registry: m.Host(SvcECRDKR)},
		StartedAt: start,
		Warnings:  m.Warnings,
	}
	if f.Image != "" {
		applyRegistry(m, f.Image, r)
		r.Target.Registry = m.Host(SvcECRDKR)
		if m.RegistryAccount == m.Account && !m.RegistryDualStack {
			m.ImageRepository, m.ImageRef = imageRepository(f.Image), f.Image
		}
		r.Warnings = append(r.Warnings, m.warnCacheFiles()...)
	}
	subnets, ws := audit.Keep(f, m.NodeSubnets, func(ns *NodeSubnet) string { return ns.ID }, m.Cluster)
	r.Warnings = append(r.Warnings, ws...)
	for _, ns := range subnets {
		s := &report.AuditSubnet{ID: ns.ID, CIDR: cidrString(ns), Zone: ns.AZ, Pools: ns.Pools, Nodes: len(ns.Instances)}
		if ns.Subnet != nil {
			s.Name = nameTag(ns.Subnet.Tags)
			s.Checks = audit.RunAll(Checks, m, ns)
		} else {
			s.Checks = []report.CheckResult{audit.WithResources(audit.Warn("",
				fmt.Sprintf("%s is referenced but not described in %s: nothing can be checked", ns.ID, FileSubnets)), ns.ID)}
			s.Checks[0].ID, s.Checks[0].Title = CheckSubnetDescribed, "subnet described"
		}
		if f.Host != "" {
			focusHost(m, s, f.Host)
		}
		r.Subnets = append(r.Subnets, s)
	}
	r.Hosts = hosts(m, subnets)
	r.Cost = costNote(m, subnets, f)
	audit.Finish(r, f.Place(m.placeNode))
	r.DurationMS = units.MS(time.Since(start))
	return r, nil
}

func cidrString(ns *NodeSubnet) string {
	if ns.CIDR.IsValid() {
		return ns.CIDR.String()
	}
	return ""
}

// hosts lists the pull's hosts and how the first subnet reaches them.
func hosts(m *Model, subnets []*NodeSubnet) []report.AuditHost {
	roles := map[string]verdict.Role{SvcECRAPI: verdict.RoleAuth, SvcECRDKR: verdict.RoleRegistry, SvcS3: verdict.RoleBlob}
	var out []report.AuditHost
	for _, svc := range []string{SvcECRDKR, SvcECRAPI, SvcS3} {
		h := report.AuditHost{Host: m.Host(svc), Role: roles[svc]}
		var first string
		mixed := false
		for _, ns := range subnets {
			if ns.Subnet == nil {
				continue
			}
			v := m.path(ns, svc).via()
			if first == "" {
				first = v
			} else if v != first {
				mixed = true
			}
		}
		h.Via = first
		if mixed {
			h.Via = first + " (differs by subnet)"
		}
		out = append(out, h)
	}
	return out
}
