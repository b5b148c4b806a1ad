package monitor

import (
	"context"
	"fmt"
	"net/url"

	"github.com/pullpath/pullpath/internal/nodeplace"
)

// node is the part of a Node the agent reads.
type node struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Taints []taint `json:"taints,omitempty"`
	} `json:"spec"`
	Status struct {
		Addresses []struct {
			Type    string `json:"type"`
			Address string `json:"address"`
		} `json:"addresses,omitempty"`
	} `json:"status"`
}

type taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

func (k *kubeClient) getNode(ctx context.Context, name string) (*node, error) {
	var n node
	if err := k.do(ctx, "GET", "/api/v1/nodes/"+url.PathEscape(name), nil, nil, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// NodePlace is where a node sits: the grouping explain uses.
type NodePlace struct {
	Pool, Zone, Subnet string
}

// placeOf reads a Node's pool, zone and subnet as every engine does
// (nodeplace.Of), from its labels, annotations and first InternalIP.
func placeOf(n *node) NodePlace {
	ip := ""
	for _, a := range n.Status.Addresses {
		if a.Type == "InternalIP" {
			ip = a.Address
			break
		}
	}
	p := nodeplace.Of(n.Metadata.Labels, n.Metadata.Annotations, ip)
	return NodePlace{Pool: p.Pool, Zone: p.Zone, Subnet: p.Subnet}
}

func (p NodePlace) String() string {
	return fmt.Sprintf("pool=%s zone=%s subnet=%s", p.Pool, p.Zone, p.Subnet)
}
