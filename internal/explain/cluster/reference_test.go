package cluster

// Explain as it was before its Lists overlapped (pods, then events, then
// nodes, each page read before the next is asked for), kept as the
// reference the concurrent Explain must agree with.

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
)

func refExplain(ctx context.Context, c kubernetes.Interface, t Target, o Options) (*report.ExplainReport, error) {
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	r := explain.NewReport()
	r.Source = "cluster"
	ns := t.Namespace
	if t.AllNamespaces {
		ns = metav1.NamespaceAll
	}

	// 1. Pods.
	st := &state{facts: explain.Facts{}, pods: map[string]podInfo{}}
	switch kind := Kinds[strings.ToLower(t.Kind)]; {
	case t.Kind == "":
		if t.AllNamespaces {
			r.Scope = "all namespaces"
		} else {
			r.Scope = "namespace " + ns
		}
		if err := refPagePods(ctx, c, ns, metav1.ListOptions{Limit: o.PageSize}, st.addPod); err != nil {
			return nil, err
		}
	case kind == "pod":
		r.Scope = "pod " + t.Namespace + "/" + t.Name
		p, err := c.CoreV1().Pods(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %v", t.Namespace, t.Name, err)
		}
		st.addPod(p)
	case kind != "":
		r.Scope = kind + " " + t.Namespace + "/" + t.Name
		sel, err := selectorOf(ctx, c, kind, t.Namespace, t.Name)
		if err != nil {
			return nil, err
		}
		if err := refPagePods(ctx, c, t.Namespace, metav1.ListOptions{Limit: o.PageSize, LabelSelector: sel}, st.addPod); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown kind %q: want one of pod, deployment, statefulset, daemonset, replicaset, job", t.Kind)
	}

	// 2. Events of pods. A single pod is asked for by field selector; a
	// workload's or a namespace's events are paged and filtered.
	sel := fields.Set{"involvedObject.kind": "Pod"}
	if Kinds[strings.ToLower(t.Kind)] == "pod" {
		sel["involvedObject.name"] = t.Name
	}
	evNS := ns
	if t.Kind != "" {
		evNS = t.Namespace
	}
	scoped := t.Kind != ""
	err := refPageEvents(ctx, c, evNS, metav1.ListOptions{Limit: o.PageSize, FieldSelector: sel.AsSelector().String()}, func(e *corev1.Event) {
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		if scoped {
			if _, ok := st.pods[key]; !ok {
				return
			}
		}
		st.addEvent(r, e)
	})
	if err != nil {
		return nil, err
	}
	r.Summary.Messages = st.messages

	// 3. Failing containers whose events are gone (events live one hour).
	for _, key := range sortedPodKeys(st.pods) {
		p := st.pods[key]
		if st.explained[key] {
			continue
		}
		for _, fc := range p.failing {
			m := explain.Message{
				Ref: "pod " + key + " container " + fc.container, Namespace: p.namespace, Kind: "Pod",
				Object: p.name, Node: p.node, Reason: fc.reason, Text: fc.text(),
			}
			if f, ok := explain.Finding(m); ok {
				if f.Image == "" {
					f.Image = fc.image
					f.Registry = refRegistryOf(fc.image)
				}
				r.Findings = append(r.Findings, f)
			}
		}
	}

	// 4. Nodes.
	nodes, err := st.nodeNames()
	if err != nil {
		return nil, err
	}
	st.facts.Nodes, err = nodeFacts(ctx, c, nodes, o.PageSize)
	if err != nil {
		return nil, err
	}
	if len(nodes) > 0 && len(st.facts.Nodes) < len(nodes) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d nodes named by pods or events no longer exist", len(nodes)-len(st.facts.Nodes), len(nodes)))
	}

	// 5. Correlate.
	r.Groups = explain.Correlate(st.facts, r.Findings)
	explain.Summarize(r)
	return r, nil
}

func refPagePods(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions, f func(*corev1.Pod)) error {
	for {
		l, err := c.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list pods: %v", err)
		}
		for i := range l.Items {
			f(&l.Items[i])
		}
		if l.Continue == "" {
			return nil
		}
		opts.Continue = l.Continue
	}
}

func refPageEvents(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions, f func(*corev1.Event)) error {
	for {
		l, err := c.CoreV1().Events(ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list events: %v", err)
		}
		for i := range l.Items {
			f(&l.Items[i])
		}
		if l.Continue == "" {
			return nil
		}
		opts.Continue = l.Continue
	}
}

func refRegistryOf(image string) string {
	c := explain.Classify(fmt.Sprintf("Back-off pulling image %q", image))
	return c.Registry
}
