package gcp

import (
	"cmp"
	"strings"
)

// Given says whether a contract file was given (audit.Files): a check
// that states it needs a file not given never fails on its absence.
func (m *Model) Given(file string) bool {
	switch file {
	case FileInstances:
		return m.InstancesKnown
	case FileNetwork:
		return m.Network != nil
	case FileRoutes:
		return m.RoutesKnown
	case FileFirewalls:
		return m.FirewallsKnown
	case FileRouters:
		return m.RoutersKnown
	case FileZones:
		return m.ZonesKnown
	case FileDNSPolicies:
		return m.PolicyKnown
	case FileProjectPolicy:
		return m.ProjectPolicy != nil
	case FileProject:
		return m.Project != nil
	case FilePerimeters:
		return m.PerimetersKnown
	case FileVPCSCConfig:
		return m.VPCSC != nil
	}
	base := strings.TrimSuffix(file, fileSuffix)
	switch {
	case strings.HasPrefix(file, filePrefSubnet):
		name := strings.TrimPrefix(base, filePrefSubnet)
		for _, s := range m.Subnets {
			if s != nil && s.Name == name {
				return true
			}
		}
		return false
	}
	for _, k := range []struct {
		prefix string
		has    func(key string) bool
	}{
		{filePrefRecords, func(k string) bool { return hasKey(m.Records, k) }},
		{filePrefRepoPolicy, func(k string) bool { return hasKey(m.RepoPolicies, k) }},
		{filePrefProject, func(k string) bool { return hasKey(m.NodeProjects, k) }},
		{filePrefRepo, func(k string) bool { return hasKey(m.Repos, k) }},
		{filePrefSecretPol, func(k string) bool { return hasKey(m.SecretPolicies, k) }},
	} {
		if key, ok := strings.CutPrefix(base, k.prefix); ok {
			return k.has(key)
		}
	}
	return true
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// Collect is the command that writes a contract file, with what is known
// filled in.
func (m *Model) Collect(file string) string {
	netProj, net, reg := m.NetworkProject(), m.NetworkName(), m.target.Project
	if reg == "" {
		reg = "REGISTRY_PROJECT"
	}
	base := strings.TrimSuffix(file, fileSuffix)
	switch {
	case file == FileInstances:
		return cmdInstances(m.ClusterProject(), m.Cluster.Name)
	case file == FileNetwork:
		return cmdNetwork(netProj, net)
	case file == FileRoutes:
		return cmdRoutes(netProj, net)
	case file == FileFirewalls:
		return cmdFirewalls(netProj, net)
	case file == FileRouters:
		return cmdRouters(netProj, net)
	case file == FileZones:
		return cmdZones(netProj)
	case file == FileDNSPolicies:
		return cmdDNSPolicies(netProj)
	case file == FileProjectPolicy:
		return cmdProjectPolicy(reg)
	case file == FileProject:
		return cmdProject(reg)
	case file == FilePerimeters:
		return cmdPerimeters("")
	case strings.HasPrefix(file, filePrefSubnet):
		return cmdSubnet(netProj, m.Region(), strings.TrimPrefix(base, filePrefSubnet))
	case strings.HasPrefix(file, filePrefRecords):
		return cmdRecords(netProj, strings.TrimPrefix(base, filePrefRecords))
	case strings.HasPrefix(file, filePrefProject):
		return cmdProject(strings.TrimPrefix(base, filePrefProject))
	case file == FileVPCSCConfig:
		return cmdVPCSCConfig(cmp.Or(m.target.Location, "L"), reg)
	case strings.HasPrefix(file, filePrefRepo):
		return cmdRepo(strings.TrimPrefix(base, filePrefRepo), cmp.Or(m.target.Location, "L"), reg)
	case strings.HasPrefix(file, filePrefSecretPol):
		_, proj := m.upstreamSecret()
		return cmdSecretPolicy(strings.TrimPrefix(base, filePrefSecretPol), cmp.Or(proj, "SECRET_PROJECT"))
	case strings.HasPrefix(file, filePrefRepoPolicy):
		loc := m.target.Location
		if loc == "" {
			loc = "L"
		}
		return cmdRepoPolicy(strings.TrimPrefix(base, filePrefRepoPolicy), loc, reg)
	}
	return ""
}

// The files each check needs to decide (docs/gcp.md's table): a check
// never fails when one of them was not given.
func needsNone(*Model, *nodeSubnet) []string { return nil }

func needsFiles(files ...string) func(*Model, *nodeSubnet) []string {
	return func(*Model, *nodeSubnet) []string { return files }
}

// needsSubnet adds the node subnet's own file.
func needsSubnet(files ...string) func(*Model, *nodeSubnet) []string {
	return func(_ *Model, ns *nodeSubnet) []string { return append([]string{FileSubnet(ns.Name)}, files...) }
}

// needsPGA: the subnet and the zones always; the Cloud NAT gateways only
// when no host answers a VIP (then only Cloud NAT could carry the pull).
func needsPGA(m *Model, ns *nodeSubnet) []string {
	out := []string{FileSubnet(ns.Name), FileZones}
	for _, h := range ns.Hosts {
		if h.Answer.ok() && !h.Answer.Public {
			return out
		}
	}
	return append(out, FileRouters)
}

// needsIdentity: the project's policy, and the repository's when the
// image names one in Artifact Registry.
func needsIdentity(m *Model, _ *nodeSubnet) []string {
	out := []string{FileProjectPolicy}
	if m.target.Repo != "" && strings.HasSuffix(m.target.Host, "pkg.dev") {
		out = append(out, FileRepoPolicy(m.target.Repo))
	}
	return out
}
