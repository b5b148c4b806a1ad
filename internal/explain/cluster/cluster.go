// Package cluster is explain's cluster view: it lists Pods, Events and Nodes
// through client-go (paged, so it scales to thousands of nodes and tens of
// thousands of pods and events), reads them into explain.Facts and findings,
// and lets explain.Correlate compare failing and healthy nodes.
package cluster

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/explain"
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
	ns := t.Namespace
	if t.AllNamespaces {
		ns = metav1.NamespaceAll
	}

	// 1. Pods: what to list (or the one pod).
	st := &state{facts: explain.Facts{}, pods: map[string]podInfo{}, classifier: explain.NewClassifier()}
	var podOpts *metav1.ListOptions
	podNS := ns
	switch kind := Kinds[strings.ToLower(t.Kind)]; {
	case t.Kind == "":
		if t.AllNamespaces {
			r.Scope = "all namespaces"
		} else {
			r.Scope = "namespace " + ns
		}
		podOpts = &metav1.ListOptions{Limit: o.PageSize}
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
		podNS = t.Namespace
		podOpts = &metav1.ListOptions{Limit: o.PageSize, LabelSelector: sel}
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

	// Start the Lists: pods, events, and for all namespaces the nodes (a
	// cluster-wide explain names most of them).
	var podCh <-chan page[corev1.Pod]
	if podOpts != nil {
		podCh = fetchPages(ctx, *podOpts, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Pod, string, error) {
			l, err := c.CoreV1().Pods(podNS).List(ctx, opts)
			if err != nil {
				return nil, "", fmt.Errorf("list pods: %v", err)
			}
			return l.Items, l.Continue, nil
		})
	}
	evCh := fetchPages(ctx, metav1.ListOptions{Limit: o.PageSize, FieldSelector: sel.AsSelector().String()}, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Event, string, error) {
		l, err := c.CoreV1().Events(evNS).List(ctx, opts)
		if err != nil {
			return nil, "", fmt.Errorf("list events: %v", err)
		}
		return l.Items, l.Continue, nil
	})
	var nodeCh <-chan page[corev1.Node]
	if t.AllNamespaces && t.Kind == "" {
		nodeCh = fetchPages(ctx, metav1.ListOptions{Limit: o.PageSize}, func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Node, string, error) {
			l, err := c.CoreV1().Nodes().List(ctx, opts)
			if err != nil {
				return nil, "", fmt.Errorf("list nodes: %v", err)
			}
			return l.Items, l.Continue, nil
		})
	}

	// Read the pages as they come. Events wait (in order) for the pods
	// when an event needs them; errors are returned in the order the
	// series would meet them: pods, then events.
	var (
		podsDone  = podCh == nil
		held      []corev1.Event // the rest of an event page that waits for the pods
		evErr     error
		evDone    bool
		allNodes  map[string]explain.NodeInfo // every node, when listed early
		nodesDone = nodeCh == nil
	)
	addEvent := func(e *corev1.Event) {
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		if scoped {
			if _, ok := st.pods[key]; !ok {
				return
			}
		}
		st.addEvent(r, e)
	}
	// readEvents reads events in order until one needs the pods.
	readEvents := func(items []corev1.Event) []corev1.Event {
		for i := range items {
			if !podsDone && (scoped || eventNode(&items[i]) == "") {
				return items[i:]
			}
			addEvent(&items[i])
		}
		return nil
	}
	for {
		if podsDone && evErr != nil {
			return nil, evErr
		}
		if podsDone && evDone && nodesDone {
			break
		}
		var evIn <-chan page[corev1.Event]
		if len(held) == 0 && evErr == nil && !evDone {
			evIn = evCh // nil (paused) while events wait for the pods
		}
		select {
		case p, ok := <-podCh:
			if !ok {
				podsDone, podCh = true, nil
				held = readEvents(held) // podsDone: reads them all
				continue
			}
			if p.err != nil {
				return nil, p.err
			}
			for i := range p.items {
				st.addPod(&p.items[i])
			}
		case p, ok := <-evIn:
			if !ok {
				evDone = true
				continue
			}
			if p.err != nil {
				evErr = p.err
				continue
			}
			held = readEvents(p.items)
		case p, ok := <-nodeCh:
			if !ok {
				nodesDone, nodeCh = true, nil
				if allNodes == nil { // listed: there are none
					allNodes = map[string]explain.NodeInfo{}
				}
				continue
			}
			if p.err != nil {
				// Listing every node may be refused where getting
				// the few named is allowed: step 4 asks as before.
				nodesDone, nodeCh, allNodes = true, nil, nil
				continue
			}
			if allNodes == nil {
				allNodes = map[string]explain.NodeInfo{}
			}
			for i := range p.items {
				allNodes[p.items[i].Name] = FactsOf(&p.items[i])
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
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
			if f, _, ok := st.classifier.Finding(m); ok {
				if f.Image == "" {
					f.Image = fc.image
					f.Registry = registryOf(st.classifier, fc.image)
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
	if allNodes != nil {
		st.facts.Nodes = make(map[string]explain.NodeInfo, len(nodes))
		for _, n := range nodes {
			if info, ok := allNodes[n]; ok {
				st.facts.Nodes[n] = info
			}
		}
	} else {
		st.facts.Nodes, err = nodeFacts(ctx, c, nodes, o.PageSize)
		if err != nil {
			return nil, err
		}
	}
	if len(nodes) > 0 && len(st.facts.Nodes) < len(nodes) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d nodes named by pods or events no longer exist", len(nodes)-len(st.facts.Nodes), len(nodes)))
	}

	// The node's architecture completes an exec format error.
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Rule == "exec-format-error" && f.Node != "" {
			if arch := st.facts.Nodes[f.Node].Arch; arch != "" {
				f.Summary += fmt.Sprintf(" (node %s is %s)", f.Node, arch)
			}
		}
	}

	// 5. Correlate.
	r.Groups = explain.Correlate(st.facts, r.Findings)
	explain.Summarize(r)
	return r, nil
}

// page is one page of a List, or the error that ended the listing.
type page[T any] struct {
	items []T
	err   error
}

// pageDepth is how many pages a fetcher may read ahead of its reader.
const pageDepth = 4

// fetchPages lists page after page in a goroutine, up to pageDepth pages
// ahead of the reader; the channel closes after the last page or after
// the first error (sent as a page). Cancelling ctx stops it.
func fetchPages[T any](ctx context.Context, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) ([]T, string, error)) <-chan page[T] {
	ch := make(chan page[T], pageDepth)
	go func() {
		defer close(ch)
		for {
			items, cont, err := list(ctx, opts)
			select {
			case ch <- page[T]{items: items, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil || cont == "" {
				return
			}
			opts.Continue = cont
		}
	}()
	return ch
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
	}
	f, c, ok := s.classifier.Finding(m)
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

func registryOf(k *explain.Classifier, image string) string {
	c := k.Classify(fmt.Sprintf("Back-off pulling image %q", image))
	return c.Registry
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
