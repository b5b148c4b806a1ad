// Package cluster is explain's cluster view: it lists Pods, Events and Nodes
// through client-go (paged, so it scales to thousands of nodes and tens of
// thousands of pods and events), reads them into explain.Facts and findings,
// and lets explain.Correlate compare failing and healthy nodes.
package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Kinds that `explain KIND NAME` accepts, with their aliases.
var Kinds = map[string]string{
	"pod": "pod", "pods": "pod", "po": "pod",
	"deployment": "deployment", "deployments": "deployment", "deploy": "deployment",
	"statefulset": "statefulset", "statefulsets": "statefulset", "sts": "statefulset",
	"daemonset": "daemonset", "daemonsets": "daemonset", "ds": "daemonset",
	"replicaset": "replicaset", "replicasets": "replicaset", "rs": "replicaset",
	"job": "job", "jobs": "job",
}

// Target is what to explain: one pod, one workload (through its selector),
// a namespace, or all namespaces.
type Target struct {
	Kind          string // "" for a namespace or all namespaces; else a key of Kinds
	Name          string
	Namespace     string
	AllNamespaces bool
}

// Options tune the listing.
type Options struct {
	// PageSize is the Limit of every List call. Default 500.
	PageSize int64
}

// Explain builds the report for a target.
//
//  1. Pods: the pod, the workload's pods (its label selector), or every pod.
//  2. Events of those pods (Failed, BackOff, Pulled, ...): one finding per
//     pull-failure event; Pulled events tell fresh pulls from cached images.
//  3. Failing containers without a readable event get a finding from their
//     waiting message.
//  4. Nodes involved: pool, zone, subnet, creation time, cached images.
//  5. Correlate failing and healthy nodes per image.
//
// The Lists overlap: one goroutine per List fetches the next page while
// this one reads the current, and events (and, for all namespaces, nodes)
// are listed while pods are. Events are still read in their order, and an
// event that needs the pods (a workload's or a pod's scope, or an event
// without a node) waits until every pod is read, so the report is the one
// the same Lists in series would give.
func Explain(ctx context.Context, c kubernetes.Interface, t Target, o Options) (*report.ExplainReport, error) {
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the fetchers when Explain returns early
	r := explain.NewReport()
	r.Source = "cluster"
	st := &state{facts: explain.Facts{}, pods: map[string]podInfo{}, classifier: explain.NewClassifier()}

	// 1. and 2. What to list: the pods (or the one pod, read here) and
	// their events.
	p, err := planFor(ctx, c, t, o.PageSize, st)
	if err != nil {
		return nil, err
	}
	r.Scope = p.scope
	allNodes, err := st.read(ctx, r, p, startLists(ctx, c, p))
	if err != nil {
		return nil, err
	}
	r.Summary.Messages = st.messages

	// 3. Failing containers whose events are gone (events live one hour).
	st.addWaitingFindings(r)

	// 4. Nodes.
	if err := st.addNodes(ctx, c, r, allNodes, o.PageSize); err != nil {
		return nil, err
	}

	// 5. Correlate.
	r.Groups = explain.Correlate(st.facts, r.Findings)
	r.Waits = st.queue.Waits()
	explain.Summarize(r)
	return r, nil
}

// addWaitingFindings reads the waiting message of each failing container
// whose pod has no classified event (events live one hour) into a finding.
func (s *state) addWaitingFindings(r *report.ExplainReport) {
	for _, key := range sortedPodKeys(s.pods) {
		p := s.pods[key]
		if s.explained[key] {
			continue
		}
		for _, fc := range p.failing {
			m := explain.Message{
				Ref: "pod " + key + " container " + fc.container, Namespace: p.namespace, Kind: "Pod",
				Object: p.name, Node: p.node, Reason: fc.reason, Text: fc.text(),
			}
			if f, _, ok := s.classifier.Finding(m); ok {
				if f.Image == "" {
					f.Image = fc.image
					f.Registry = registryOf(s.classifier, fc.image)
				}
				r.Findings = append(r.Findings, f)
			}
		}
	}
}

// eventNode is the node an event names itself ("" when only its pod can
// tell).
func eventNode(e *corev1.Event) string {
	if e.Source.Host != "" {
		return e.Source.Host
	}
	return e.ReportingInstance
}

// execFormatError: the container's last run ended with exec format error
// (the kubelet's termination message, or the log tail it keeps with
// terminationMessagePolicy FallbackToLogsOnError).
func execFormatError(cs corev1.ContainerStatus) string {
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t != nil && strings.Contains(t.Message, "exec format error") {
			return t.Message
		}
	}
	return ""
}

type failingContainer struct {
	container, image, reason, message string
}

func (f failingContainer) text() string {
	if f.message != "" {
		// The waiting message of ErrImagePull is the runtime's error; the
		// one of ImagePullBackOff is `Back-off pulling image "X"`.
		if !strings.Contains(f.message, f.image) && f.image != "" {
			return fmt.Sprintf("Failed to pull image %q: %s", f.image, f.message)
		}
		return f.message
	}
	return fmt.Sprintf("Failed to pull image %q: %s", f.image, f.reason)
}

type podInfo struct {
	namespace, name, node string
	failing               []failingContainer
}

type state struct {
	facts     explain.Facts
	pods      map[string]podInfo
	explained map[string]bool // pods with a classified finding from an event
	eventNode map[string]bool
	messages  int
	// classifier classifies each distinct message text once per run.
	classifier *explain.Classifier
	// queue reads the kubelet's Pulling and Pulled events node by node:
	// the pulls that waited behind others.
	queue explain.PullQueue
}

// Waiting reasons of a container whose image could not be pulled.
var pullReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "ImageInspectError": true, "RegistryUnavailable": true,
	"SignatureValidationFailed": true,
}

func (s *state) addPod(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	info := podInfo{namespace: p.Namespace, name: p.Name, node: p.Spec.NodeName}
	images := map[string]string{}
	for _, c := range p.Spec.InitContainers {
		images[c.Name] = c.Image
	}
	for _, c := range p.Spec.Containers {
		images[c.Name] = c.Image
	}
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		image := images[cs.Name]
		if image == "" {
			image = cs.Image
		}
		o := explain.Observation{Pod: key, Node: p.Spec.NodeName, Image: image}
		switch {
		case cs.State.Waiting != nil && pullReasons[cs.State.Waiting.Reason]:
			o.Failing = true
			info.failing = append(info.failing, failingContainer{container: cs.Name, image: image, reason: cs.State.Waiting.Reason, message: cs.State.Waiting.Message})
		case execFormatError(cs) != "":
			// The pull worked, the binary is for another architecture.
			o.Failing = true
			info.failing = append(info.failing, failingContainer{container: cs.Name, image: image, reason: "ExecFormatError", message: execFormatError(cs)})
		case cs.State.Running != nil, cs.State.Terminated != nil, cs.ImageID != "":
			o.Running = true
		default:
			continue
		}
		s.facts.Observations = append(s.facts.Observations, o)
	}
	s.pods[key] = info
}

// Event reasons that can carry pull news.
var eventReasons = map[string]bool{
	"Failed": true, "BackOff": true, "ErrImageNeverPull": true, "InspectFailed": true,
	"Pulled": true, "ErrImagePull": true, "ImagePullBackOff": true,
	"Pulling": true, // when the kubelet asked for the pull: its queue (explain.PullQueue)
}

func (s *state) addEvent(r *report.ExplainReport, e *corev1.Event) {
	if !eventReasons[e.Reason] {
		return
	}
	s.messages++
	node := eventNode(e)
	key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
	if node == "" {
		node = s.pods[key].node
	}
	count := int(e.Count)
	if e.Series != nil && int(e.Series.Count) > count {
		count = int(e.Series.Count)
	}
	m := explain.Message{
		Ref: e.Namespace + "/" + e.Name, Namespace: e.InvolvedObject.Namespace, Kind: "Pod",
		Object: e.InvolvedObject.Name, Node: node, Reason: e.Reason, Count: count, Text: e.Message,
		Time: nodeplace.EventTime(e.LastTimestamp.Time, e.EventTime.Time, e.CreationTimestamp.Time),
	}
	f, c, ok := s.classifier.Finding(m)
	s.queue.Note(m, c)
	if ok {
		r.Findings = append(r.Findings, f)
		if f.Code != "" && f.Rule != "kubelet-backoff" && f.Rule != "unclassified-pull-failure" {
			if s.explained == nil {
				s.explained = map[string]bool{}
			}
			s.explained[key] = true
		}
		s.noteNode(node)
		return
	}
	if c.Rule != "" && !c.Failed() && c.Image != "" && node != "" {
		s.facts.NotePull(node, c.Image, c.Rule == "kubelet-pulled")
	}
}

func (s *state) noteNode(n string) {
	if n == "" {
		return
	}
	if s.eventNode == nil {
		s.eventNode = map[string]bool{}
	}
	s.eventNode[n] = true
}

func (s *state) nodeNames() ([]string, error) {
	set := map[string]bool{}
	for _, o := range s.facts.Observations {
		if o.Node != "" {
			set[o.Node] = true
		}
	}
	for n := range s.eventNode {
		set[n] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func sortedPodKeys(m map[string]podInfo) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func registryOf(k *explain.Classifier, image string) string {
	c := k.Classify(fmt.Sprintf("Back-off pulling image %q", image))
	return c.Registry
}
