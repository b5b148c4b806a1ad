package cluster

import (
	"context"
	"fmt"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/nodeplace"
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

// FactsOf reads a Node into what the correlation needs; its pool, zone
// and subnet are nodeplace's, as every engine reads them.
func FactsOf(n *corev1.Node) explain.NodeInfo {
	info := explain.NodeInfo{Name: n.Name, Created: n.CreationTimestamp.Time}
	if a := n.Status.NodeInfo.Architecture; a != "" {
		info.Arch = n.Status.NodeInfo.OperatingSystem + "/" + a
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && info.InternalIP == "" {
			info.InternalIP = a.Address
		}
	}
	p := nodeplace.Of(n.Labels, n.Annotations, info.InternalIP)
	info.Pool, info.PoolSource, info.Zone = p.Pool, p.PoolSource, p.Zone
	info.Subnet, info.SubnetSource = p.Subnet, p.SubnetSource
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
