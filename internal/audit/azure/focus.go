package azure

import (
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
)

// placeNode places a focus node by its pool: the one its AKS name carries
// (aks-POOL-12345678-vmss000000) when the focus names none, and that
// pool's subnet.
func (m *Model) placeNode(n audit.Node) audit.Node {
	if n.Subnet != "" {
		return n
	}
	if n.Pool == "" {
		n.Pool = PoolOfNode(n.Name)
	}
	for _, p := range m.Pools() {
		if n.Pool != "" && strings.EqualFold(p.Name, n.Pool) {
			n.Subnet = p.SubnetID
			return n
		}
	}
	return n
}
