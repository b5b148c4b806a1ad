package azure

import (
	"context"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Provider is the Azure audit in the list of providers (internal/audit/clouds).
var Provider = audit.Provider{
	Cloud:       nodeplace.Azure,
	FromFolder:  FromFolder,
	Live:        LiveOptions{},
	Permissions: []string{Permissions},
	Outputs:     "Azure CLI outputs",
	Objects:     "Azure",
}

// Open opens the live audit found from the nodes' azure:///subscriptions/
// SUB/resourceGroups/NODE_RG/... providerIDs: the credential (proven with
// a token, and who it is), the subscription unless o names one, and the
// AKS cluster whose node resource group the nodes sit in unless o names
// it.
func (o LiveOptions) Open(ctx context.Context, nodes []audit.Node) (audit.Auditor, error) {
	sub, nodeRG := nodeGroup(nodes, o.Subscription)
	if o.Subscription == "" {
		o.Subscription = sub
	}
	t, err := FindTarget(ctx, o, nodeRG)
	if err != nil {
		return nil, err
	}
	o.Subscription, o.ResourceGroup, o.Cluster, o.Credential = t.Subscription, t.ResourceGroup, t.Cluster, t.Credential
	return audit.LiveAuditor(fmt.Sprintf("live as %s, cluster %s in resource group %s", t.Identity, t.Cluster, t.ResourceGroup),
		func(ctx context.Context, f audit.Focus) (*report.AuditReport, error) { return Live(ctx, o, f) }), nil
}

// Collect is the package's Collect with these options.
func (o LiveOptions) Collect(ctx context.Context) (*audit.Collection, error) { return Collect(ctx, o) }

// Target is the subscription, resource group and cluster o names, the
// subscription else the nodes'.
func (o LiveOptions) Target(nodes []audit.Node) nodeplace.Target {
	sub, _ := nodeGroup(nodes, o.Subscription)
	return nodeplace.Target{Subscription: sub, ResourceGroup: o.ResourceGroup, Cluster: o.Cluster}
}

// nodeGroup is the subscription and node resource group the nodes'
// providerIDs name (the first node's in sub, when sub is given).
func nodeGroup(nodes []audit.Node, sub string) (subscription, nodeRG string) {
	for _, n := range nodes {
		p := nodeplace.ParseProviderID(n.ProviderID)
		if p.Cloud == nodeplace.Azure && p.Subscription != "" && p.ResourceGroup != "" && (sub == "" || strings.EqualFold(p.Subscription, sub)) {
			return p.Subscription, p.ResourceGroup
		}
	}
	return sub, ""
}
