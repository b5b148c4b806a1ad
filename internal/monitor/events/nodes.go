package events

import "github.com/pullpath/pullpath/internal/nodeplace"

// groupOf reads a node's pool and zone from its labels with the one table
// explain, sweep and monitor read them by (nodeplace.Of: the platforms'
// pool labels, then the instance type; the topology zone label).
func groupOf(labels map[string]string) group {
	p := nodeplace.Of(labels, nil, "")
	return group{Pool: p.Pool, Zone: p.Zone}
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
