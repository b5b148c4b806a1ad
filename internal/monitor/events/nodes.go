package events

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/explain/cluster"
)

// groupOf reads a node's pool and zone from its labels exactly as explain
// does (cluster.FactsOf: the platforms' pool labels, then the instance
// type; the topology zone label).
func groupOf(labels map[string]string) group {
	f := cluster.FactsOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}})
	return group{Pool: f.Pool, Zone: f.Zone}
}

// setNode records a node's group and keeps the per-group node counts.
func (x *Exporter) setNode(name string, g group, gen int) {
	old, had := x.nodes[name]
	x.nodes[name] = nodeState{g: g, gen: gen}
	if had && old.g == g {
		return
	}
	if had {
		x.addToGroup(old.g, -1)
	}
	x.addToGroup(g, 1)
}

func (x *Exporter) dropNode(name string) {
	if old, had := x.nodes[name]; had {
		delete(x.nodes, name)
		x.addToGroup(old.g, -1)
	}
}

func (x *Exporter) addToGroup(g group, d int) {
	x.groups[g] += d
	if n := x.groups[g]; n > 0 {
		x.m.nodes.WithLabelValues(g.Pool, g.Zone).Set(float64(n))
		return
	}
	delete(x.groups, g)
	x.m.nodes.DeleteLabelValues(g.Pool, g.Zone)
}

// groupOfNode is the group of a node by name; the empty group when the
// node is not known (gone, or not named).
func (x *Exporter) groupOfNode(name string) group {
	return x.nodes[name].g
}
