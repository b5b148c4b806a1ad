// Package sweep walks the pull from chosen nodes of a cluster as Kubernetes
// Pods: one probe Pod per node (pullpath probe in the node's network
// namespace, reading the node's own resolver, hosts and registry files), and
// with --canary a Pod with the target image that the real kubelet and
// runtime pull with the kubelet's identity. Kubernetes is the distributed
// engine: Pods are created with nodeName, watched (one watch per run), read
// back (termination message, logs, Events), and garbage-collected through
// one per-run owner.
//
// The steps, one file each: plan.go (which nodes, which are skipped and
// why), pods.go (the Pod specs), owner.go (the per-run owner and clean-up),
// run.go (create, watch, collect), result.go (read a Pod into a result),
// judge.go (matrix, groups, the divergence as the verdict).
package sweep

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Per values: how many nodes speak for whom.
const (
	PerGroup  = "group" // one node per pool x zone x subnet (the default)
	PerNode   = "node"  // every node (as --all)
	PerPool   = "pool"
	PerZone   = "zone"
	PerSubnet = "subnet"
)

// PerValues are the values --per accepts.
var PerValues = []string{PerNode, PerPool, PerZone, PerSubnet}

// PlanOptions decide the plan.
type PlanOptions struct {
	Per          string // PerGroup by default
	All          bool
	Selector     string // shown in the plan only; the caller lists with it
	SkipCordoned bool
	Image        string // to tell whether a node already holds it
	ExpectPools  []string
	// AutoscalerPools are node groups named by the cluster-autoscaler's
	// status (with their ready counts), when it could be read.
	AutoscalerPools map[string]int
	Resolved        string // auto | yes | no: mount /run/systemd/resolve
	// Prefer names nodes to choose first in their group (diagnose: the
	// nodes where the pull was seen failing).
	Prefer []string
}

// Plan chooses the nodes to walk from. It is pure: nodes are what the
// caller listed (with the selector applied).
//
//  1. Each node's facts (pool, zone, subnet) as explain reads them.
//  2. Nodes that cannot run the walk are skipped with the reason:
//     NotReady, Windows, virtual-kubelet, Fargate; cordoned ones only with
//     SkipCordoned (else they are probed, and marked).
//  3. One node per group (by --per), preferring a node of Prefer, then an uncordoned node, then
//     the newest (a node from the last scale-up is the one the diagnosis method says
//     to verify on), then by name; --all keeps every eligible node.
//  4. Pools expected (--expect-pool, the cluster-autoscaler's status) but
//     without any node are named.
func Plan(nodes []corev1.Node, o PlanOptions) report.SweepPlan {
	per := o.Per
	if o.All {
		per = PerNode
	}
	if per == "" {
		per = PerGroup
	}
	p := report.SweepPlan{Selection: selection(per), Selector: o.Selector, TotalNodes: len(nodes)}
	target := explain.NormalizeImage(o.Image)

	groups := map[string][]candidate{}
	allGroups := map[string]bool{}
	pools := map[string]bool{}
	sorted := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		sorted[i] = &nodes[i]
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, n := range sorted {
		info := cluster.FactsOf(n)
		pn := report.PlannedNode{
			Name: n.Name, Pool: info.Pool, Zone: info.Zone, Subnet: info.Subnet, SubnetSource: info.SubnetSource,
			InternalIP: info.InternalIP, ProviderID: n.Spec.ProviderID, Cloud: string(nodeplace.CloudOf(n.Spec.ProviderID)),
			Cordoned: n.Spec.Unschedulable,
		}
		pn.Group = groupKey(pn)
		allGroups[pn.Group] = true
		if pn.Pool != "" {
			pools[pn.Pool] = true
		}
		if info.ImagesKnown && target != "" {
			has := info.Images[target]
			pn.HasImage = &has
		}
		pn.Resolved = resolvedOn(n, o.Resolved)
		if reason, detail := skipReason(n); reason != "" {
			p.Skipped = append(p.Skipped, report.SkippedNode{Name: n.Name, Group: pn.Group, Reason: reason, Detail: detail})
			continue
		}
		if pn.Cordoned && o.SkipCordoned {
			p.Skipped = append(p.Skipped, report.SkippedNode{Name: n.Name, Group: pn.Group, Reason: report.SkipCordoned, Detail: "--skip-cordoned"})
			continue
		}
		k := perKey(pn, per)
		groups[k] = append(groups[k], candidate{pn: pn, created: n.CreationTimestamp.Unix()})
	}
	p.Groups = len(allGroups)

	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	prefer := map[string]bool{}
	for _, n := range o.Prefer {
		prefer[n] = true
	}
	eligible := 0
	for _, k := range keys {
		cs := groups[k]
		eligible += len(cs)
		if per == PerNode {
			for _, c := range cs {
				p.Chosen = append(p.Chosen, c.pn)
			}
			continue
		}
		p.Chosen = append(p.Chosen, pick(cs, prefer))
	}
	sort.Slice(p.Chosen, func(i, j int) bool {
		if p.Chosen[i].Group != p.Chosen[j].Group {
			return p.Chosen[i].Group < p.Chosen[j].Group
		}
		return p.Chosen[i].Name < p.Chosen[j].Name
	})
	p.Unchosen = eligible - len(p.Chosen)

	// 4. Pools with no node.
	p.EmptyPools = emptyPools(o, pools)
	return p
}

// candidate is a node that may walk for its group.
type candidate struct {
	pn      report.PlannedNode
	created int64
}

// pick is the node of a group that walks: a preferred node (the failing
// ones diagnose names) first, then a schedulable one, then the newest.
func pick(cs []candidate, prefer map[string]bool) report.PlannedNode {
	best := 0
	for i := 1; i < len(cs); i++ {
		a, b := cs[i], cs[best]
		switch {
		case prefer[a.pn.Name] != prefer[b.pn.Name]:
			if prefer[a.pn.Name] {
				best = i
			}
		case a.pn.Cordoned != b.pn.Cordoned:
			if !a.pn.Cordoned {
				best = i
			}
		case a.created != b.created:
			if a.created > b.created {
				best = i
			}
		}
	}
	return cs[best].pn
}

// emptyPools are the pools expected (--expect-pool) or known to
// cluster-autoscaler with no ready node that have no node here.
func emptyPools(o PlanOptions, pools map[string]bool) []report.EmptyPool {
	var out []report.EmptyPool
	seen := map[string]bool{}
	for _, name := range o.ExpectPools {
		if name != "" && !pools[name] && !seen[name] {
			seen[name] = true
			out = append(out, report.EmptyPool{Pool: name, Source: "--expect-pool"})
		}
	}
	var as []string
	for name, ready := range o.AutoscalerPools {
		if ready == 0 && !pools[name] && !seen[name] {
			as = append(as, name)
		}
	}
	sort.Strings(as)
	for _, name := range as {
		seen[name] = true
		out = append(out, report.EmptyPool{Pool: name, Source: "cluster-autoscaler-status"})
	}
	return out
}

func selection(per string) string {
	switch per {
	case PerNode:
		return "every node"
	case PerPool:
		return "one Ready node per pool"
	case PerZone:
		return "one Ready node per zone"
	case PerSubnet:
		return "one Ready node per subnet"
	}
	return "one Ready node per pool x zone x subnet"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func groupKey(n report.PlannedNode) string {
	return orNone(n.Pool) + "/" + orNone(n.Zone) + "/" + orNone(n.Subnet)
}

func perKey(n report.PlannedNode, per string) string {
	switch per {
	case PerNode:
		return n.Group + "\x00" + n.Name
	case PerPool:
		return orNone(n.Pool)
	case PerZone:
		return orNone(n.Zone)
	case PerSubnet:
		return orNone(n.Subnet)
	}
	return n.Group
}

// skipReason says why a node cannot run the walk ("" when it can).
func skipReason(n *corev1.Node) (reason, detail string) {
	l := n.Labels
	if l["type"] == "virtual-kubelet" || strings.Contains(n.Status.NodeInfo.KubeletVersion, "vk-") || strings.HasPrefix(n.Spec.ProviderID, "virtual-kubelet") {
		return report.SkipVirtualKubelet, "Pods on a virtual kubelet stay Pending; it has no node network to walk from"
	}
	if l["eks.amazonaws.com/compute-type"] == "fargate" || strings.HasPrefix(n.Name, "fargate-") {
		return report.SkipFargate, "Fargate runs one Pod per micro-VM: no hostNetwork, no nodeName Pods"
	}
	os := l["kubernetes.io/os"]
	if os == "" {
		os = n.Status.NodeInfo.OperatingSystem
	}
	if os == "windows" {
		return report.SkipWindows, "the walk runs as a Linux hostNetwork Pod"
	}
	ready := false
	why := "no Ready condition"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
			why = fmt.Sprintf("Ready=%s", c.Status)
			if c.Reason != "" {
				why += " (" + c.Reason + ")"
			}
		}
	}
	if !ready {
		return report.SkipNotReady, why + ": a Pod would stay Pending; the node is named, not probed"
	}
	return "", ""
}

// OS images that run systemd-resolved (so /etc/resolv.conf points at the
// stub and /run/systemd/resolve holds the upstream list).
var resolvedOS = regexp.MustCompile(`(?i)ubuntu|amazon linux 2023|fedora|flatcar|azure linux|cbl-mariner`)

func resolvedOn(n *corev1.Node, mode string) bool {
	switch mode {
	case "yes":
		return true
	case "no":
		return false
	}
	return resolvedOS.MatchString(n.Status.NodeInfo.OSImage)
}
