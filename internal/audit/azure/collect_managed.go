package azure

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"
)

// managedVNet is collect's step for a cluster whose pools name no subnet
// (an AKS-managed VNet): it lists the node resource group's VNets
// (`az network vnet list -g NODE_RG`, written as network-vnet-list.json)
// and returns the node subnet Load will find there (managedSubnet). A
// refused or failed list is a warning naming the file: the audit then runs
// the cluster-wide checks only.
func (c *collector) managedVNet(ctx context.Context, m *Model) ([]string, error) {
	nodeRG := ""
	if p := m.Cluster.Properties; p != nil {
		nodeRG = str(p.NodeResourceGroup)
	}
	if nodeRG == "" {
		c.warn("no agent pool has a vnetSubnetId and the cluster names no nodeResourceGroup: the node subnet is unknown", FileVNets, cmdVNets("NODE_RESOURCE_GROUP"))
		return nil, nil
	}
	nf, err := c.netFactory(c.o.Subscription)
	if err != nil {
		return nil, err
	}
	vnets := []*armnetwork.VirtualNetwork{}
	pager := nf.NewVirtualNetworksClient().NewListPager(nodeRG, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			c.warn("az network vnet list: "+armError(err), FileVNets, cmdVNets(nodeRG))
			return nil, nil
		}
		vnets = append(vnets, page.Value...)
	}
	if err := c.put(FileVNets, vnets); err != nil {
		return nil, err
	}
	if _, s := managedSubnet(vnets, nodeRG); s != nil {
		return []string{*s.ID}, nil
	}
	return nil, nil
}
