// Package fleet reads the node agents' verdicts back from the cluster for
// `pullpath monitor status`: the latest monitor Event of every Node,
// grouped by pool, zone and subnet the way explain groups nodes. It is
// cluster-side code (client-go); the agent itself never links it.
package fleet

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Options tune Status.
type Options struct {
	EventNamespace string // where the agents post Node events (default "default")
	PageSize       int64  // objects per List (default 500)
}

// Status lists the Nodes and the agents' Events and returns the fleet view.
func Status(ctx context.Context, c kubernetes.Interface, o Options) (*report.MonitorFleetReport, error) {
	if o.EventNamespace == "" {
		o.EventNamespace = "default"
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	// 1. Nodes: pool, zone, subnet.
	var nodes []corev1.Node
	cont := ""
	for {
		l, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: o.PageSize, Continue: cont})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %v", err)
		}
		nodes = append(nodes, l.Items...)
		if cont = l.Continue; cont == "" {
			break
		}
	}
	// 2. The agents' Events on Nodes: the latest per node wins.
	latest := map[string]corev1.Event{}
	cont = ""
	sel := "involvedObject.kind=Node,source=" + monitor.EventComponent
	for {
		l, err := c.CoreV1().Events(o.EventNamespace).List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: o.PageSize, Continue: cont})
		if err != nil {
			return nil, fmt.Errorf("list events in %s: %v", o.EventNamespace, err)
		}
		for _, e := range l.Items {
			if e.Reason != monitor.ReasonOK && e.Reason != monitor.ReasonBroken {
				continue
			}
			n := e.InvolvedObject.Name
			if old, ok := latest[n]; !ok || eventTime(e).After(eventTime(old)) || (eventTime(e).Equal(eventTime(old)) && e.Name > old.Name) {
				latest[n] = e
			}
		}
		if cont = l.Continue; cont == "" {
			break
		}
	}
	return build(nodes, latest, o.EventNamespace), nil
}

// eventTime is when e last happened.
func eventTime(e corev1.Event) time.Time {
	return nodeplace.EventTime(e.LastTimestamp.Time, e.EventTime.Time, e.CreationTimestamp.Time)
}

func build(nodes []corev1.Node, latest map[string]corev1.Event, ns string) *report.MonitorFleetReport {
	r := &report.MonitorFleetReport{APIVersion: report.APIVersion, Kind: report.MonitorFleetKind,
		Source: fmt.Sprintf("Events of %s on Nodes (namespace %s)", monitor.EventComponent, ns), Groups: []report.MonitorGroup{}}
	groups := map[[3]string]*report.MonitorGroup{}
	known := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		known[n.Name] = true
		f := cluster.FactsOf(n)
		k := [3]string{f.Pool, f.Zone, f.Subnet}
		g := groups[k]
		if g == nil {
			g = &report.MonitorGroup{Pool: f.Pool, Zone: f.Zone, Subnet: f.Subnet}
			groups[k] = g
		}
		st := report.MonitorNodeState{Node: n.Name, Status: report.MonitorNodeUnknown}
		if e, ok := latest[n.Name]; ok {
			t := eventTime(e)
			st.Reason, st.Message, st.At = e.Reason, e.Message, &t
			st.Code, st.Condition, st.ImageHost = e.Annotations[monitor.AnnotationCode], e.Annotations[monitor.AnnotationCondition], e.Annotations[monitor.AnnotationImageHost]
			st.Status = report.MonitorNodeOK
			if e.Reason == monitor.ReasonBroken {
				st.Status = report.MonitorNodeFail
			}
		}
		switch st.Status {
		case "ok":
			g.OK++
			r.Summary.OK++
		case "fail":
			g.Failing++
			r.Summary.Failing++
		default:
			g.Unknown++
			r.Summary.Unknown++
		}
		r.Summary.Nodes++
		g.Nodes = append(g.Nodes, st)
	}
	for n := range latest {
		if !known[n] {
			r.Warnings = append(r.Warnings, fmt.Sprintf("an Event names node %s, which no longer exists", n))
		}
	}
	sort.Strings(r.Warnings)
	if r.Summary.Unknown > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d node(s) have no monitor Event: the agent is not running there, has not walked yet, or its last Event is older than the API server's --event-ttl (default 1h); its metrics still tell", r.Summary.Unknown))
	}
	for _, g := range groups {
		sort.Slice(g.Nodes, func(i, j int) bool {
			if rank(g.Nodes[i].Status) != rank(g.Nodes[j].Status) {
				return rank(g.Nodes[i].Status) < rank(g.Nodes[j].Status)
			}
			return g.Nodes[i].Node < g.Nodes[j].Node
		})
		r.Groups = append(r.Groups, *g)
	}
	// Failing groups first, then by pool, zone, subnet.
	sort.Slice(r.Groups, func(i, j int) bool {
		a, b := r.Groups[i], r.Groups[j]
		if (a.Failing > 0) != (b.Failing > 0) {
			return a.Failing > 0
		}
		if a.Pool != b.Pool {
			return a.Pool < b.Pool
		}
		if a.Zone != b.Zone {
			return a.Zone < b.Zone
		}
		return a.Subnet < b.Subnet
	})
	r.Summary.DominantCondition = dominant(r)
	r.Summary.ExitCode = exitcode.ForFailures(r.Summary.Failing, r.Summary.DominantCondition)
	return r
}

func rank(s report.MonitorNodeStatus) int {
	switch s {
	case report.MonitorNodeFail:
		return 0
	case report.MonitorNodeUnknown:
		return 1
	}
	return 2
}

// dominant is the most common condition among failing nodes ("" when
// none fails or the Events carry none).
func dominant(r *report.MonitorFleetReport) verdict.Condition {
	count := map[string]int{}
	for _, g := range r.Groups {
		for _, n := range g.Nodes {
			if n.Status == report.MonitorNodeFail {
				count[n.Condition]++
			}
		}
	}
	best, bestN := "", -1
	for c, n := range count {
		if n > bestN || (n == bestN && c < best) {
			best, bestN = c, n
		}
	}
	return verdict.Condition(best)
}
