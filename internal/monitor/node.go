package monitor

import (
	"context"
	"fmt"
	"net"
	"net/url"
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

// The label and annotation keys below are explain's (internal/explain/
// cluster.FactsOf), so the monitor's pools, zones and subnets are the same
// groups explain names; a test holds the two together.
var (
	poolLabels = []string{
		"kubernetes.azure.com/agentpool",
		"agentpool",
		"eks.amazonaws.com/nodegroup",
		"alpha.eksctl.io/nodegroup-name",
		"karpenter.sh/nodepool",
		"karpenter.sh/provisioner-name",
		"cloud.google.com/gke-nodepool",
		"node.kubernetes.io/pool",
	}
	zoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}
	subnetKeys = []string{"pullpath.io/subnet", "k8s.amazonaws.com/eniConfig"}
)

// placeOf reads a Node's pool, zone and subnet the way explain does.
func placeOf(n *node) NodePlace {
	var p NodePlace
	l := n.Metadata.Labels
	for _, k := range poolLabels {
		if v := l[k]; v != "" {
			p.Pool = v
			break
		}
	}
	if p.Pool == "" {
		p.Pool = l["node.kubernetes.io/instance-type"]
	}
	for _, k := range zoneLabels {
		if v := l[k]; v != "" {
			p.Zone = v
			break
		}
	}
	for _, k := range subnetKeys {
		if v := l[k]; v != "" {
			p.Subnet = v
			break
		}
		if v := n.Metadata.Annotations[k]; v != "" {
			p.Subnet = v
			break
		}
	}
	if p.Subnet == "" {
		for _, a := range n.Status.Addresses {
			if a.Type != "InternalIP" {
				continue
			}
			if ip := net.ParseIP(a.Address); ip != nil {
				bits, size := 24, 32
				if ip.To4() == nil {
					bits, size = 64, 128
				} else {
					ip = ip.To4()
				}
				p.Subnet = (&net.IPNet{IP: ip.Mask(net.CIDRMask(bits, size)), Mask: net.CIDRMask(bits, size)}).String()
			}
			break
		}
	}
	return p
}

func (p NodePlace) String() string {
	return fmt.Sprintf("pool=%s zone=%s subnet=%s", p.Pool, p.Zone, p.Subnet)
}
