package aws

import (
	"fmt"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Options tune an audit.
type Options struct {
	Source string // "live" or the --from folder
	// Focus narrows the audit to the probed node's subnet (--probe-report).
	Focus *Focus
	// Cost: the image size and pulls per day for the NAT cost note (0: no
	// note unless a subnet pulls through NAT and the probe measured a size).
	ImageBytes  int64
	PullsPerDay int
	// Subnets, when set, keeps only these node subnets (--subnet).
	Subnets []string
	// Registry is the image's registry host when the caller named an
	// image (ACCOUNT.dkr.ecr.REGION.amazonaws.com): the audit's registry
	// host, which may be another account's than the cluster's.
	Registry string
	Now      func() time.Time
}

// Audit runs every check on every node subnet of raw and returns the
// report, finished (verdict, comparison, changes).
func Audit(raw *Raw, o Options) (*report.AuditReport, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	start := now()
	m, err := Build(raw)
	if err != nil {
		return nil, err
	}
	r := &report.AuditReport{
		APIVersion: "pullpath/v1",
		Kind:       report.KindAWSAudit,
		Source:     o.Source,
		Target: report.AuditTarget{Cloud: "aws", Cluster: m.Cluster, Region: m.Region, Account: m.Account,
			Network: m.VPC, Registry: m.Host(SvcECRDKR)},
		StartedAt: start,
		Warnings:  m.Warnings,
	}
	if o.Registry != "" {
		applyRegistry(m, o.Registry, r)
		r.Target.Registry = m.Host(SvcECRDKR)
	}
	subnets := m.NodeSubnets
	if o.Focus != nil {
		subnets = applyFocus(m, o.Focus, r)
	}
	if len(o.Subnets) > 0 {
		var keep []*NodeSubnet
		for _, ns := range subnets {
			if contains(o.Subnets, ns.ID) {
				keep = append(keep, ns)
			}
		}
		for _, id := range o.Subnets {
			found := false
			for _, ns := range keep {
				found = found || ns.ID == id
			}
			if !found {
				r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("--subnet %s is not a node subnet of cluster %s (no nodegroup or instance in it)", id, m.Cluster)})
			}
		}
		subnets = keep
		if len(keep) == 1 {
			r.Target.FocusSubnet = keep[0].ID
		}
	}
	for _, ns := range subnets {
		s := &report.AuditSubnet{ID: ns.ID, CIDR: cidrString(ns), Zone: ns.AZ, Pools: ns.Pools, Nodes: len(ns.Instances)}
		if ns.Subnet != nil {
			s.Name = nameTag(ns.Subnet.Tags)
			s.Checks = audit.RunAll(Checks, m, ns)
		} else {
			s.Checks = []report.CheckResult{{ID: CheckSubnetDescribed, Title: "subnet described", Status: report.CheckWarn,
				Summary: fmt.Sprintf("%s is referenced but not described in %s: nothing can be checked", ns.ID, FileSubnets), Resources: []string{ns.ID}}}
		}
		if o.Focus != nil && o.Focus.Host != "" {
			focusHost(m, s, o.Focus.Host)
		}
		r.Subnets = append(r.Subnets, s)
	}
	r.Hosts = hosts(m, subnets)
	audit.Finish(r, audit.Focus{})
	r.Cost = costNote(m, subnets, o)
	r.DurationMS = float64(now().Sub(start).Microseconds()) / 1000
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
