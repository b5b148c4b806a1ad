package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Provider is the AWS audit in the list of providers (internal/audit/clouds).
var Provider = audit.Provider{
	Cloud:       nodeplace.AWS,
	FromFolder:  FromFolder,
	Live:        LiveOptions{},
	Permissions: Permissions,
	Outputs:     "AWS CLI outputs",
	Objects:     "AWS",
}

// maxLiveInstances bounds the instances Open asks about to find the
// cluster.
const maxLiveInstances = 50

// Open opens the live audit found from the nodes' aws:///ZONE/i-...
// providerIDs: the default chain's credentials (checked, and who they
// are), the region of the first node's zone unless o names one, and the
// EKS cluster the instances are tagged with unless o names one.
func (o LiveOptions) Open(ctx context.Context, nodes []audit.Node) (audit.Auditor, error) {
	var ids []string
	zone := ""
	for _, n := range nodes {
		p := nodeplace.ParseProviderID(n.ProviderID)
		if p.Cloud != nodeplace.AWS || !strings.HasPrefix(p.Instance, "i-") || len(ids) >= maxLiveInstances || slices.Contains(ids, p.Instance) {
			continue
		}
		ids = append(ids, p.Instance)
		if zone == "" {
			zone = p.Zone
		}
	}
	if o.Region == "" {
		o.Region = nodeplace.RegionOfZone(zone)
	}
	t, err := FindTarget(ctx, o, ids)
	if err != nil {
		return nil, err
	}
	o.Cluster, o.Region, o.Config = t.Cluster, t.Region, &t.Config
	return audit.LiveAuditor(fmt.Sprintf("live as %s, cluster %s in %s", t.Identity, t.Cluster, t.Region),
		func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) { return Live(ctx, o, f) }), nil
}

// Collect is the package's Collect with these options.
func (o LiveOptions) Collect(ctx context.Context) (*audit.Collection, error) { return Collect(ctx, o) }

// Target is the cluster and region o names, else the region of the
// nodes' zones.
func (o LiveOptions) Target(nodes []audit.Node) nodeplace.Target {
	t := nodeplace.Target{Cluster: o.Cluster, Region: o.Region}
	for _, n := range nodes {
		if t.Region == "" {
			t.Region = nodeplace.ParseProviderID(n.ProviderID).Region()
		}
	}
	return t
}
