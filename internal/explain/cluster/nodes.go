package cluster

import (
	"context"
	"fmt"
	"net"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// addNodes fills the facts of every node the pods and events name: from
// allNodes when every node was listed, else by asking for those nodes. It
// warns about nodes that no longer exist, and completes an exec format
// error with the node's architecture.
func (s *state) addNodes(ctx context.Context, c kubernetes.Interface, r *report.ExplainReport, allNodes map[string]explain.NodeInfo, pageSize int64) error {
	nodes, err := s.nodeNames()
	if err != nil {
		return err
	}
	if allNodes != nil {
		s.facts.Nodes = make(map[string]explain.NodeInfo, len(nodes))
		for _, n := range nodes {
			if info, ok := allNodes[n]; ok {
				s.facts.Nodes[n] = info
			}
		}
	} else if s.facts.Nodes, err = nodeFacts(ctx, c, nodes, pageSize); err != nil {
		return err
	}
	if len(nodes) > 0 && len(s.facts.Nodes) < len(nodes) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d nodes named by pods or events no longer exist", len(nodes)-len(s.facts.Nodes), len(nodes)))
	}
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Rule == "exec-format-error" && f.Node != "" {
			if arch := s.facts.Nodes[f.Node].Arch; arch != "" {
				f.Summary += fmt.Sprintf(" (node %s is %s)", f.Node, arch)
			}
		}
	}
	return nil
}

// Node labels that name a node pool, most specific first.
var poolLabels = []string{
	"kubernetes.azure.com/agentpool", // AKS
	"agentpool",                      // AKS (older)
	"eks.amazonaws.com/nodegroup",    // EKS managed node groups
	"alpha.eksctl.io/nodegroup-name", // eksctl self-managed node groups
	"karpenter.sh/nodepool",          // Karpenter >= v1beta1
	"karpenter.sh/provisioner-name",  // Karpenter (older)
	"cloud.google.com/gke-nodepool",  // GKE
	"node.kubernetes.io/pool",        // common convention
}

var zoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

// Labels or annotations that name a node's subnet where the platform or the
// user sets one. None of the managed platforms sets a subnet label by
// default; pullpath.io/subnet lets a cluster say it.
var subnetKeys = []string{
	"pullpath.io/subnet",
	"k8s.amazonaws.com/eniConfig", // AWS VPC CNI custom networking: usually one ENIConfig per subnet
}

// FactsOf reads a Node into what the correlation needs.
func FactsOf(n *corev1.Node) explain.NodeInfo {
	info := explain.NodeInfo{Name: n.Name, Created: n.CreationTimestamp.Time}
	if a := n.Status.NodeInfo.Architecture; a != "" {
		info.Arch = n.Status.NodeInfo.OperatingSystem + "/" + a
	}
	for _, k := range poolLabels {
		if v := n.Labels[k]; v != "" {
			info.Pool, info.PoolSource = v, "label "+k
			break
		}
	}
	if info.Pool == "" {
		if v := n.Labels["node.kubernetes.io/instance-type"]; v != "" {
			info.Pool, info.PoolSource = v, "instance type (no pool label)"
		}
	}
	for _, k := range zoneLabels {
		if v := n.Labels[k]; v != "" {
			info.Zone = v
			break
		}
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && info.InternalIP == "" {
			info.InternalIP = a.Address
		}
	}
	for _, k := range subnetKeys {
		if v := n.Labels[k]; v != "" {
			info.Subnet, info.SubnetSource = v, "label "+k
			break
		}
		if v := n.Annotations[k]; v != "" {
			info.Subnet, info.SubnetSource = v, "annotation "+k
			break
		}
	}
	if info.Subnet == "" && info.InternalIP != "" {
		if ip := net.ParseIP(info.InternalIP); ip != nil {
			bits := 24
			if ip.To4() == nil {
				bits = 64
			}
			info.Subnet = prefixOf(ip, bits)
			info.SubnetSource = fmt.Sprintf("InternalIP /%d (a guess: no subnet label)", bits)
		}
	}
	info.Images = map[string]bool{}
	for _, img := range n.Status.Images {
		for _, name := range img.Names {
			info.Images[explain.NormalizeImage(name)] = true
			info.Images[name] = true
		}
	}
	// The kubelet reports at most 50 images by default
	// (nodeStatusMaxImages): a full list may just not show ours.
	info.ImagesKnown = len(n.Status.Images) > 0 && len(n.Status.Images) < 50
	return info
}

func prefixOf(ip net.IP, bits int) string {
	if v4 := ip.To4(); v4 != nil {
		return (&net.IPNet{IP: v4.Mask(net.CIDRMask(bits, 32)), Mask: net.CIDRMask(bits, 32)}).String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(bits, 128)), Mask: net.CIDRMask(bits, 128)}).String()
}

// nodeFacts reads the named nodes: one Get each for a few, one paged List
// (keeping only those named) for many.
func nodeFacts(ctx context.Context, c kubernetes.Interface, names []string, page int64) (map[string]explain.NodeInfo, error) {
	out := make(map[string]explain.NodeInfo, len(names))
	if len(names) == 0 {
		return out, nil
	}
	if len(names) <= 20 {
		for _, n := range names {
			node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("node %s: %v", n, err)
			}
			out[n] = FactsOf(node)
		}
		return out, nil
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	opts := metav1.ListOptions{Limit: page}
	for {
		l, err := c.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list nodes: %v", err)
		}
		for i := range l.Items {
			if want[l.Items[i].Name] {
				out[l.Items[i].Name] = FactsOf(&l.Items[i])
			}
		}
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue = l.Continue
	}
}
