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
package azure

import (
	"fmt"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The checks, in the seed's order of work: route the node network first
// (routes, peering and gateway transit, security rules), then resolve in
// node context (DNS servers, the zone link, the records), then every
// endpoint the registry hands out, then the pull identity.
var Checks = []audit.Check[*Model, *nodeSubnet]{
	audit.New("route", "effective routes to each private endpoint address", checkRoute),
	audit.New("peering", "peering and gateway transit on the cluster side", checkPeering),
	audit.New("nsg-egress-443", "NSG outbound TCP 443 to each private endpoint address", checkNSG),
	audit.New("dns-servers", "the VNet's DNS servers", checkDNSServers),
	audit.New("dns-zone-link", "privatelink.azurecr.io linked to the VNet the nodes resolve from", checkZoneLink),
	audit.New("dns-records", "an A record for the registry and every data endpoint", checkRecords),
	audit.New("private-endpoint", "private endpoint connections Approved, covering every host", checkPrivateEndpoint),
	audit.New("public-access", "public network access and the network rule set", checkPublicAccess),
	audit.New("identity-acrpull", "the kubelet identity can pull", checkIdentity),
}

// CheckIDs lists the check ids in order.
func CheckIDs() []string {
	out := make([]string, len(Checks))
	for i, c := range Checks {
		out[i] = c.ID()
	}
	return out
}

// Options shape an audit.
type Options struct {
	Source string // "live" or the --from folder
	Focus  *Focus
}

// Focus is what a probe report says: the node (so its pool) and the host
// that failed, with the probe's code.
type Focus struct {
	Node string
	Pool string
	Host string
	Code verdict.Code
	Role verdict.Role
}

// Audit runs every check on every node subnet of the model.
func Audit(m *Model, o Options) *report.AuditReport {
	start := time.Now()
	hosts := m.hosts()
	if o.Focus != nil && o.Focus.Host != "" {
		hosts = focusHosts(hosts, o.Focus.Host)
	}
	r := &report.AuditReport{
		APIVersion: "pullpath/v1",
		Kind:       report.KindAzureAudit,
		Source:     o.Source,
		Target: report.AuditTarget{
			Cloud:    "azure",
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
	if !m.hostsKnown() {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: "the registry has private endpoint connections, but no private endpoint was described: their addresses are unknown and the network checks warn"})
	}
	subnets := m.buildSubnets(hosts)
	for _, n := range subnets {
		as := &report.AuditSubnet{ID: n.ID, Name: lastName(n.ID), CIDR: n.cidr(), Pools: n.Pools}
		for _, p := range m.Pools() {
			if sameID(p.SubnetID, n.ID) {
				as.Nodes += int(p.Count)
			}
		}
		as.Checks = audit.RunAll(Checks, m, n)
		for i := range as.Checks {
			if as.Checks[i].Status != report.CheckFail {
				as.Checks[i].Condition = "" // a condition is the direction of a failure
			}
		}
		if !m.hostsKnown() {
			unknownAddresses(as.Checks)
		}
		r.Subnets = append(r.Subnets, as)
	}
	if o.Focus != nil {
		applyFocus(r, m, o.Focus)
	}
	audit.Finish(r, audit.Focus{})
	if o.Focus != nil {
		focusVerdict(r, o.Focus)
	}
	identityScope(r)
	r.DurationMS = float64(time.Since(start).Microseconds()) / 1000
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
		case "route", "nsg-egress-443", "public-access", "dns-records", "dns-zone-link":
			cs[i].Status = report.CheckWarn
			cs[i].Summary = "the private endpoint addresses are unknown (no " + filePrefPE + "NAME.json): " + cs[i].Summary
			cs[i].Changes = nil
		}
	}
}

// identityScope says so when the identity check fails: it fails every pool
// alike, whatever their network.
func identityScope(r *report.AuditReport) {
	for _, s := range r.Subnets {
		for _, c := range s.Checks {
			if c.ID == "identity-acrpull" && c.Status == report.CheckFail {
				if !strings.Contains(r.Verdict.Summary, "every pool alike") {
					r.Verdict.Summary += "; the kubelet identity's missing pull role fails every pool alike, whatever their network"
				}
				return
			}
		}
	}
}

func focusHosts(hs []*pullHost, host string) []*pullHost {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
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

// applyFocus records the probe's node, pool and host in the target.
func applyFocus(r *report.AuditReport, m *Model, f *Focus) {
	r.Target.FocusHost = f.Host
	r.Target.ProbeVerdict = string(f.Code)
	pool := f.Pool
	if pool == "" {
		pool = PoolOfNode(f.Node)
	}
	for _, p := range m.Pools() {
		if strings.EqualFold(p.Name, pool) {
			r.Target.FocusSubnet = p.SubnetID
			return
		}
	}
	if pool != "" {
		r.Warnings = append(r.Warnings, report.AuditWarning{Message: fmt.Sprintf("the probed node %s belongs to pool %q, which the cluster does not list", f.Node, pool)})
	}
}

// focusVerdict puts the probed pool first and says which of its checks
// explains what the probe saw on the failing host.
func focusVerdict(r *report.AuditReport, f *Focus) {
	id := r.Target.FocusSubnet
	if id == "" {
		return
	}
	for i, s := range r.Subnets {
		if !sameID(s.ID, id) {
			continue
		}
		r.Subnets[0], r.Subnets[i] = r.Subnets[i], r.Subnets[0]
		c, ok := explainProbe(s, f)
		if !ok {
			if s.Verdict == report.CheckPass {
				r.Verdict.Summary = fmt.Sprintf("the probed pool's subnet %s passes every check; the probe's %s on %s is outside what the configuration shows (a node-local setting, a hosts-file entry, or the far side); %s", s.Name, f.Code, f.Host, r.Verdict.Summary)
			}
			return
		}
		r.Verdict.Summary = fmt.Sprintf("the probe's %s on %s from %s: %s (%s); %s", f.Code, orDefault(f.Host, "the registry"), strings.Join(s.Pools, ", "), c.Summary, c.ID, r.Verdict.Summary)
		if c.Status == report.CheckFail && c.Condition != "" {
			r.Verdict.Condition = c.Condition
		}
		return
	}
}

// explainProbe picks the check of the probed subnet that explains the
// probe's code: a public answer or NXDOMAIN points at the zone link, then
// the records; a timeout at routes, peering, NSG, endpoint state; a 401 or
// 403 at the identity.
func explainProbe(s *report.AuditSubnet, f *Focus) (report.CheckResult, bool) {
	info, _ := verdict.Lookup(f.Code)
	var order []string
	switch {
	case f.Code == verdict.DNSPublicAnswer:
		order = []string{"dns-zone-link", "dns-records", "private-endpoint", "dns-servers"}
	case info.Condition == verdict.ConditionDNS:
		order = []string{"dns-records", "dns-zone-link", "dns-servers", "private-endpoint"}
	case info.Condition == verdict.ConditionRoute, info.Condition == verdict.ConditionEndpointSet:
		order = []string{"route", "peering", "nsg-egress-443", "private-endpoint", "public-access", "dns-records"}
	case info.Condition == verdict.ConditionTLSIdentity:
		order = []string{"identity-acrpull", "public-access"}
	default:
		order = CheckIDs()
	}
	host := strings.ToLower(f.Host)
	for _, pass := range []bool{true, false} {
		for _, id := range order {
			for _, c := range s.Checks {
				if c.ID != id || c.Status != report.CheckFail {
					continue
				}
				if pass && host != "" && c.Host != "" && c.Host != host {
					continue // first the checks about the probed host
				}
				return c, true
			}
		}
	}
	return report.CheckResult{}, false
}
