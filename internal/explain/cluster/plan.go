package cluster

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// plan is what Explain lists for a target.
type plan struct {
	scope   string              // the report's scope: "pod NS/NAME", "deployment NS/NAME", "namespace NS", "all namespaces"
	podOpts *metav1.ListOptions // nil: no pod List (one pod, read by Get)
	podNS   string
	evOpts  metav1.ListOptions // the event List: pod events, one pod's by field selector
	evNS    string
	// scoped: only events of the listed pods count (a pod's or a
	// workload's scope), so an event waits until every pod is read.
	scoped bool
	// allNodes: list every node while pods and events are listed (a
	// cluster-wide explain names most of them).
	allNodes bool
	pageSize int64
}

// planFor resolves a target into what to list. A single pod is read (Get)
// into st here; a workload is resolved to its label selector.
func planFor(ctx context.Context, c kubernetes.Interface, t Target, pageSize int64, st *state) (plan, error) {
	ns := t.Namespace
	if t.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	p := plan{podNS: ns, evNS: ns, pageSize: pageSize, scoped: t.Kind != "", allNodes: t.AllNamespaces && t.Kind == ""}
	if t.Kind != "" {
		p.evNS = t.Namespace
	}

	// 1. Pods: what to list (or the one pod).
	switch kind := Kinds[strings.ToLower(t.Kind)]; {
	case t.Kind == "":
		if t.AllNamespaces {
			p.scope = "all namespaces"
		} else {
			p.scope = "namespace " + ns
		}
		p.podOpts = &metav1.ListOptions{Limit: pageSize}
	case kind == "pod":
		p.scope = "pod " + t.Namespace + "/" + t.Name
		pod, err := c.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return p, fmt.Errorf("pod %s/%s: %v", t.Namespace, t.Name, err)
		}
		st.addPod(pod)
	case kind != "":
		p.scope = kind + " " + t.Namespace + "/" + t.Name
		sel, err := selectorOf(ctx, c, kind, t.Namespace, t.Name)
		if err != nil {
			return p, err
		}
		p.podNS = t.Namespace
		p.podOpts = &metav1.ListOptions{Limit: pageSize, LabelSelector: sel}
	default:
		return p, fmt.Errorf("unknown kind %q: want one of pod, deployment, statefulset, daemonset, replicaset, job", t.Kind)
	}

	// 2. Events of pods. A single pod is asked for by field selector; a
	// workload's or a namespace's events are paged and filtered.
	sel := fields.Set{"involvedObject.kind": "Pod"}
	if Kinds[strings.ToLower(t.Kind)] == "pod" {
		sel["involvedObject.name"] = t.Name
	}
	p.evOpts = metav1.ListOptions{Limit: pageSize, FieldSelector: sel.AsSelector().String()}
	return p, nil
}

func selectorOf(ctx context.Context, c kubernetes.Interface, kind, ns, name string) (string, error) {
	var sel *metav1.LabelSelector
	var err error
	switch kind {
	case "deployment":
		var d *appsv1.Deployment
		if d, err = c.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			sel = d.Spec.Selector
		}
	case "statefulset":
		var d *appsv1.StatefulSet
		if d, err = c.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			sel = d.Spec.Selector
		}
	case "daemonset":
		var d *appsv1.DaemonSet
		if d, err = c.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			sel = d.Spec.Selector
		}
	case "replicaset":
		var d *appsv1.ReplicaSet
		if d, err = c.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			sel = d.Spec.Selector
		}
	case "job":
		var d *batchv1.Job
		if d, err = c.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			sel = d.Spec.Selector
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s %s/%s: %v", kind, ns, name, err)
	}
	if sel == nil {
		return "", fmt.Errorf("%s %s/%s has no selector", kind, ns, name)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", fmt.Errorf("%s %s/%s: selector: %v", kind, ns, name, err)
	}
	if s.Empty() {
		return "", fmt.Errorf("%s %s/%s has an empty selector", kind, ns, name)
	}
	return s.String(), nil
}
