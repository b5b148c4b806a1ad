// Package azure is `pullpath azure audit` and `pullpath azure collect`: it
// loads an AKS cluster's node path to its ACR registry (agent pools and
// their subnets, route tables, NSGs, VNet peerings, the privatelink.azurecr.io
// zone with its links and records, the registry's private endpoints, role
// assignments and the node NICs' effective routes) into the Azure SDK for
// Go's own model types, either from verbatim Azure CLI JSON files (--from)
// or from the live API (which goes through the same files), and runs one
// set of checks per node subnet (pool) for every host of a pull.
//
// It dials no registry: it reads configuration. `pullpath probe` walks the
// path from a node; --probe-report focuses the audit on what it found.
// Its entry points are FromFolder and Live (internal/audit's contract).
package azure

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// FromFolder audits a folder of Azure CLI JSON outputs (the files
// `pullpath azure collect` writes, docs/azure.md): the audit package's
// entry point for a folder.
func FromFolder(dir string, f audit.Focus) (*report.AuditReport, error) {
	m, err := Load(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	return Audit(m, dir, f), nil
}

// Live reads the cluster through ARM (Collect, into the same files) and
// audits it: the audit package's live entry point. A call ARM refused (a
// role the caller lacks) leaves its file out, and the report says why.
func Live(ctx context.Context, o LiveOptions, f audit.Focus) (*report.AuditReport, error) {
	if img, err := ParseImage(f.Image); err == nil && o.Registry == "" {
		o.Registry = img.LoginServer // the image's registry, unless --registry names one
	}
	if o.Image == "" {
		o.Image = f.Image // its cache rule is read too
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
	return Audit(m, audit.SourceLive, f), nil
}

// Audit runs every check on every node subnet of the model and returns the
// finished report; source is where the model came from ("live" or the
// folder).
func Audit(m *Model, source string, f audit.Focus) *report.AuditReport {
	start := time.Now()
	hosts := m.hosts()
	if f.Host != "" {
		hosts = focusHosts(hosts, f.Host)
	}
	r := &report.AuditReport{
		APIVersion: report.APIVersion,
		Kind:       report.AzureAuditKind,
		Source:     source,
		Target: report.AuditTarget{
			Cloud:    string(nodeplace.Azure),
			Cluster:  str(m.Cluster.Name),
			Region:   strings.ToLower(str(m.Cluster.Location)),
			Account:  subscriptionOf(str(m.Cluster.ID)),
			Registry: m.LoginServer(),
		},
		Hosts:     m.auditHosts(hosts),
		Warnings:  append([]report.AuditWarning(nil), m.Warnings...),
		StartedAt: start.UTC(),
	}
	r.Target.ResourceGrp = resourceGroupOf(str(m.Cluster.ID))
	if m.VNet != nil {
		r.Target.Network = str(m.VNet.ID)
	} else if s := m.NodeSubnets(); len(s) > 0 {
		r.Target.Network = parentID(s[0])
	}
	m.image = nil
	if f.Image != "" {
		if w := m.imageWarning(f.Image); w != nil {
			r.Warnings = append(r.Warnings, *w)
		} else if img, err := ParseImage(f.Image); err == nil {
			m.image = &img // its cache rule is checked
			r.Warnings = append(r.Warnings, m.cacheWarnings()...)
		}
	}
	if !m.hostsKnown() {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: "the registry has private endpoint connections, but no private endpoint was described: their addresses are unknown and the network checks warn"})
	}
	subnets, ws := audit.Keep(f, m.buildSubnets(hosts), func(n *nodeSubnet) string { return n.ID }, r.Target.Cluster)
	r.Warnings = append(r.Warnings, ws...)
	if len(m.NodeSubnets()) == 0 {
		r.Subnets = append(r.Subnets, m.clusterWide(hosts))
	}
	for _, n := range subnets {
		as := &report.AuditSubnet{ID: n.ID, Name: lastName(n.ID), CIDR: n.cidr(), Pools: n.Pools}
		for _, p := range m.Pools() {
			if sameID(p.SubnetID, n.ID) {
				as.Nodes += int(p.Count)
			}
		}
		as.Checks = audit.RunAll(Checks, m, n)
		if !m.hostsKnown() {
			unknownAddresses(as.Checks)
		}
		r.Subnets = append(r.Subnets, as)
	}
	audit.Finish(r, f.Place(m.placeNode))
	r.DurationMS = units.MS(time.Since(start))
	return r
}

// hostsKnown is false when the registry has private endpoint connections
// but none of the endpoints was described: the hosts then look public
// while they are not.
func (m *Model) hostsKnown() bool {
	if m.Registry == nil || m.Registry.Properties == nil || len(m.Registry.Properties.PrivateEndpointConnections) == 0 {
		return true
	}
	return len(m.PrivateEndpoints) > 0
}

// unknownAddresses turns the network checks' verdicts into warnings when the
// private endpoint addresses are unknown.
func unknownAddresses(cs []report.CheckResult) {
	for i := range cs {
		switch cs[i].ID {
		case CheckRoute, CheckNSGEgress, CheckPublicAccess, CheckDNSRecords, CheckDNSZoneLink:
			cs[i].Status = report.StepWarn
			cs[i].Summary = "the private endpoint addresses are unknown (no " + filePrefPE + "NAME.json): " + cs[i].Summary
			cs[i].Changes = nil
		}
	}
}

func focusHosts(hs []*pullHost, host string) []*pullHost {
	host = audit.HostOf(host)
	var first, rest []*pullHost
	for _, h := range hs {
		if h.Name == host || h.Name == BlobWildcard && strings.HasSuffix(host, ".blob.core.windows.net") {
			first = append(first, h)
		} else {
			rest = append(rest, h)
		}
	}
	return append(first, rest...)
}

// clusterWideChecks hold for every pool whatever its subnet: the
// registry's endpoints and records, its network access, the proxy and the
// kubelet identity.
var clusterWideChecks = map[string]bool{CheckDNSRecords: true, CheckPrivateEndpoint: true, CheckPublicAccess: true, CheckProxy: true, CheckIdentity: true}

// clusterWide is the stand-in subnet of a cluster whose node subnet is
// unknown (an AKS-managed VNet without the node resource group's VNet
// list): the cluster-wide checks run; the others warn, naming the file
// that would name the subnet.
func (m *Model) clusterWide(hosts []*pullHost) *report.AuditSubnet {
	nodeRG := ""
	if m.Cluster.Properties != nil {
		nodeRG = str(m.Cluster.Properties.NodeResourceGroup)
	}
	ns := &nodeSubnet{ID: "node subnet unknown (node resource group " + nodeRG + ")", Hosts: hosts}
	as := &report.AuditSubnet{ID: ns.ID, Unknown: true}
	for _, p := range m.Pools() {
		as.Pools = append(as.Pools, p.Name)
		ns.Pools = append(ns.Pools, p.Name)
		as.Nodes += int(p.Count)
	}
	cmd := cmdVNets(nodeRG)
	for _, c := range Checks {
		if clusterWideChecks[c.ID()] {
			as.Checks = append(as.Checks, audit.RunAll([]audit.Check[*Model, *nodeSubnet]{c}, m, ns)...)
			continue
		}
		r := audit.MissingResult(FileVNets, " (the pools name no subnet: an AKS-managed VNet, whose node subnet that listing of the node resource group holds)", cmd)
		r.ID, r.Title = c.ID(), c.Title()
		as.Checks = append(as.Checks, r)
	}
	return as
}
