// Package nodeplace reads where a Kubernetes node sits and what it is, from
// the plain strings of its Node object: its pool, zone and subnet (the
// groups explain, sweep, monitor and diagnose compare nodes by), the cloud
// and instance its spec.providerID names, and when one of its Events last
// happened.
//
// It is pure and takes strings and times, not client-go types, so the node
// agent (which decodes its Node with its own small types) reads a node
// exactly as the cluster-side engines do.
package nodeplace

import (
	"fmt"
	"net/netip"
)

// PoolLabels are the node labels that name a node pool, most specific
// first.
var PoolLabels = []string{
	"kubernetes.azure.com/agentpool", // AKS
	"agentpool",                      // AKS (older)
	"eks.amazonaws.com/nodegroup",    // EKS managed node groups
	"alpha.eksctl.io/nodegroup-name", // eksctl self-managed node groups
	"karpenter.sh/nodepool",          // Karpenter >= v1beta1
	"karpenter.sh/provisioner-name",  // Karpenter (older)
	"cloud.google.com/gke-nodepool",  // GKE
	"node.kubernetes.io/pool",        // common convention
}

// InstanceTypeLabel names the pool when no pool label does.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

// ZoneLabels are the node labels that name its zone, the GA one first.
var ZoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

// SubnetKeys are the labels or annotations that name a node's subnet where
// the platform or the user sets one, a key's label before its annotation.
// None of the managed platforms sets a subnet label by default;
// pullpath.io/subnet lets a cluster say it.
var SubnetKeys = []string{
	"pullpath.io/subnet",
	"k8s.amazonaws.com/eniConfig", // AWS VPC CNI custom networking: usually one ENIConfig per subnet
}

// Place is where a node sits, and where each part was read.
type Place struct {
	Pool         string
	PoolSource   string // "label KEY", or "instance type (no pool label)"
	Zone         string
	Subnet       string
	SubnetSource string // "label KEY", "annotation KEY", or the InternalIP guess
	// SubnetGuessed is true when no label or annotation named the subnet
	// and it is the node's InternalIP widened to /24 (IPv4) or /64 (IPv6).
	SubnetGuessed bool
}

// Of reads a node's place from its labels, annotations and first
// InternalIP ("" when it has none):
//
//  1. the pool: the first PoolLabels label set, else the instance type;
//  2. the zone: the first ZoneLabels label set;
//  3. the subnet: the first SubnetKeys key set as a label, then as an
//     annotation; else a guess from the InternalIP (/24, or /64 for IPv6).
func Of(labels, annotations map[string]string, internalIP string) Place {
	var p Place
	for _, k := range PoolLabels {
		if v := labels[k]; v != "" {
			p.Pool, p.PoolSource = v, "label "+k
			break
		}
	}
	if p.Pool == "" {
		if v := labels[InstanceTypeLabel]; v != "" {
			p.Pool, p.PoolSource = v, "instance type (no pool label)"
		}
	}
	for _, k := range ZoneLabels {
		if v := labels[k]; v != "" {
			p.Zone = v
			break
		}
	}
	for _, k := range SubnetKeys {
		if v := labels[k]; v != "" {
			p.Subnet, p.SubnetSource = v, "label "+k
			return p
		}
		if v := annotations[k]; v != "" {
			p.Subnet, p.SubnetSource = v, "annotation "+k
			return p
		}
	}
	if a, err := netip.ParseAddr(internalIP); err == nil {
		a = a.Unmap()
		bits := 24
		if a.Is6() {
			bits = 64
		}
		pre, _ := a.Prefix(bits)
		p.Subnet = pre.String()
		p.SubnetSource = fmt.Sprintf("InternalIP /%d (a guess: no subnet label)", bits)
		p.SubnetGuessed = true
	}
	return p
}
