package diagnose

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/report"
)

// maxNodeLookups bounds the node Gets made to learn providerIDs.
const maxNodeLookups = 64

// read runs explain on the target and picks the image to diagnose: the one
// given, or the image with the most failing pods.
func (d *diagnosis) read(ctx context.Context) error {
	start := time.Now()
	d.progress("read: events and pods of %s", scopeWords(d.o.Target))
	ex, err := cluster.Explain(ctx, d.o.Client, d.o.Target, cluster.Options{PageSize: d.o.PageSize})
	if err != nil {
		return err
	}
	d.r.Explain = ex
	d.r.Scope = ex.Scope
	d.group = pickGroup(ex, d.o.Image)
	d.nodes = map[string]NodeRef{}
	switch {
	case d.group != nil:
		d.r.Image = d.group.Image
		var failing, healthy int
		for _, n := range d.group.Nodes {
			if n.Status == report.NodeStatusFailed {
				failing++
			} else {
				healthy++
			}
		}
		s := fmt.Sprintf("%s of %s failing on %s (%s); %s healthy",
			plural(len(d.group.FailingPods), "pod", "pods"), d.group.Image, plural(failing, "node", "nodes"), d.group.Code, plural(healthy, "node", "nodes"))
		if d.group.Pattern != "" && d.group.Pattern != "unknown" {
			s += ", pattern " + d.group.Pattern
		}
		d.step("read", report.DiagnoseRan, s, time.Since(start))
		d.lookupNodes(ctx, d.group.Nodes)
	case d.o.Image != "":
		d.r.Image = explain.NormalizeImage(d.o.Image)
		d.step("read", report.DiagnoseRan, fmt.Sprintf("no pull failure of %s in %s", d.o.Image, ex.Scope), time.Since(start))
	default:
		d.step("read", report.DiagnoseRan, fmt.Sprintf("no pull failure in %s (%d messages read)", ex.Scope, ex.Summary.Messages), time.Since(start))
	}
	return nil
}

// pickGroup is the group of image (normalised), or the one with the most
// failing pods, then the most findings.
func pickGroup(ex *report.ExplainReport, image string) *report.ExplainGroup {
	var best *report.ExplainGroup
	want := ""
	if image != "" {
		want = explain.NormalizeImage(image)
	}
	for i := range ex.Groups {
		g := &ex.Groups[i]
		if want != "" {
			if g.Image == want || g.Image == image {
				return g
			}
			continue
		}
		if len(g.FailingPods) == 0 && g.Findings == 0 {
			continue
		}
		if best == nil || len(g.FailingPods) > len(best.FailingPods) ||
			(len(g.FailingPods) == len(best.FailingPods) && g.Findings > best.Findings) {
			best = g
		}
	}
	return best
}

// lookupNodes learns the providerID and address of the nodes explain named
// (a cloud audit finds instances by them), at most maxNodeLookups of them,
// failing ones first. A node that cannot be read keeps what explain knew.
func (d *diagnosis) lookupNodes(ctx context.Context, nodes []report.ExplainNode) {
	sorted := append([]report.ExplainNode(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].Status == report.NodeStatusFailed && sorted[j].Status != report.NodeStatusFailed
	})
	for i, n := range sorted {
		ref := NodeRef{Name: n.Name, InternalIP: n.InternalIP, Pool: n.Pool, Zone: n.Zone, Subnet: n.Subnet}
		if i < maxNodeLookups {
			if k, err := d.o.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); err == nil {
				ref.ProviderID = k.Spec.ProviderID
				if ip := internalIP(k); ip != "" {
					ref.InternalIP = ip
				}
			}
		}
		d.nodes[n.Name] = ref
	}
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func scopeWords(t cluster.Target) string {
	switch {
	case t.Kind != "":
		return strings.ToLower(t.Kind) + " " + t.Namespace + "/" + t.Name
	case t.AllNamespaces:
		return "all namespaces"
	}
	return "namespace " + t.Namespace
}
