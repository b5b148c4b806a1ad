package gcp

import "github.com/pullpath/pullpath/internal/audit"

// Files writes a model back as the contract's files in gcloud's shape (the
// benchmark's synthetic clusters; collect itself writes what the APIs
// answered).
func (m *Model) Files() (audit.Files, error) {
	c := &collector{files: audit.Files{}}
	if err := c.put(FileCluster, m.Cluster); err != nil {
		return nil, err
	}
	if m.Network != nil {
		if err := c.put(FileNetwork, m.Network); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(m.Subnets) {
		if err := c.put(FileSubnet(lastSeg(k)), m.Subnets[k]); err != nil {
			return nil, err
		}
	}
	lists := []struct {
		known bool
		name  string
		put   func(string) error
	}{
		{m.InstancesKnown, FileInstances, func(n string) error { return putList(c, n, m.Instances) }},
		{m.RoutesKnown, FileRoutes, func(n string) error { return putList(c, n, m.Routes) }},
		{m.FirewallsKnown, FileFirewalls, func(n string) error { return putList(c, n, m.Firewalls) }},
		{m.RoutersKnown, FileRouters, func(n string) error { return putList(c, n, m.Routers) }},
		{m.ZonesKnown, FileZones, func(n string) error { return putList(c, n, m.Zones) }},
		{m.PolicyKnown, FileDNSPolicies, func(n string) error { return putList(c, n, m.Policies) }},
		{m.PerimetersKnown, FilePerimeters, func(n string) error { return putList(c, n, m.Perimeters) }},
	}
	for _, l := range lists {
		if l.known {
			if err := l.put(l.name); err != nil {
				return nil, err
			}
		}
	}
	for _, z := range sortedKeys(m.Records) {
		if err := putList(c, FileRecords(z), m.Records[z]); err != nil {
			return nil, err
		}
	}
	for _, err := range []error{putEach(c, m.RepoPolicies, FileRepoPolicy), putEach(c, m.Repos, FileRepo),
		putEach(c, m.SecretPolicies, FileSecretPolicy), putEach(c, m.NodeProjects, FileNodeProject)} {
		if err != nil {
			return nil, err
		}
	}
	if m.VPCSC != nil {
		if err := c.put(FileVPCSCConfig, m.VPCSC); err != nil {
			return nil, err
		}
	}
	if m.ProjectPolicy != nil {
		if err := c.put(FileProjectPolicy, m.ProjectPolicy); err != nil {
			return nil, err
		}
	}
	if m.Project != nil {
		if err := c.put(FileProject, m.Project); err != nil {
			return nil, err
		}
	}
	return c.files, nil
}

// putEach writes one file per key of a keyed model field.
func putEach[V any](c *collector, byKey map[string]V, file func(string) string) error {
	for _, k := range sortedKeys(byKey) {
		if err := c.put(file(k), byKey[k]); err != nil {
			return err
		}
	}
	return nil
}
