package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/units"
)

// WorkloadName and WorkloadNamespace are the Deployment's name and
// namespace (defaults "app" and "default").
func (c *Cluster) WorkloadName() (ns, name string) {
	w := c.scen.Cluster.Workload
	ns, name = "default", "app"
	if w != nil && w.Namespace != "" {
		ns = w.Namespace
	}
	if w != nil && w.Name != "" {
		name = w.Name
	}
	return ns, name
}

// WorkloadImage is the image the Deployment runs.
func (c *Cluster) WorkloadImage() string {
	if w := c.scen.Cluster.Workload; w != nil && w.Image != "" {
		return w.Image
	}
	return c.scen.ProbeImage()
}

// PrePull pulls the workload's image into a node's containerd with ctr,
// inside the node's namespaces (its resolver, routes and certs.d) and with
// node.credentials: the node then has it cached, as an old node does.
func (c *Cluster) PrePull(ctx context.Context, host string) error {
	n, err := c.node(host)
	if err != nil {
		return err
	}
	argv := []string{"ctr", "-a", n.sock(), "-n", "k8s.io", "images", "pull", "--hosts-dir", layoutPaths(n, c.scen.Cluster.Nodes[n.host]).certsReal}
	if cr := c.scen.Node.Credentials; cr != nil {
		argv = append(argv, "--user", cr.Username+":"+cr.Password)
	}
	argv = append(argv, c.WorkloadImage())
	pctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd, err := c.Exec(pctx, host, argv...)
	if err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pre-pull on %s: %v: %s", host, err, units.OneLine(lastN(string(out), 400)))
	}
	return nil
}

func lastN(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Deploy creates (or scales) the workload's Deployment: one replica per
// node (required anti-affinity on the hostname), imagePullPolicy
// IfNotPresent, grace period 0.
func (c *Cluster) Deploy(ctx context.Context, replicas int) error {
	ns, name := c.WorkloadName()
	dc := c.Client.AppsV1().Deployments(ns)
	if _, err := dc.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return c.Scale(ctx, replicas)
	}
	if ns != "default" {
		_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := c.waitServiceAccount(ctx, ns); err != nil {
		return err
	}
	labels := map[string]string{"app": name}
	var zero int64
	r := int32(replicas)
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: &zero,
		Containers: []corev1.Container{{
			Name: name, Image: c.WorkloadImage(), ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname",
			}},
		}},
		AutomountServiceAccountToken: new(bool),
	}
	if w := c.scen.Cluster.Workload; w != nil && w.PullSecret {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-pull", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: lab.DockerConfig(c.scen)}}
		if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: sec.Name}}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &r,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	_, err := dc.Create(ctx, d, metav1.CreateOptions{})
	return err
}

// waitServiceAccount waits (30s) for the controller-manager to create the
// namespace's default ServiceAccount, without which no Pod is admitted.
func (c *Cluster) waitServiceAccount(ctx context.Context, ns string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s has no default ServiceAccount after 30s (is kube-controller-manager running? %s)", ns,
				childproc.LastLines(filepath.Join(c.RunDir, "logs", "kube-controller-manager.log"), 2))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Scale sets the Deployment's replicas.
func (c *Cluster) Scale(ctx context.Context, replicas int) error {
	ns, name := c.WorkloadName()
	_, err := c.Client.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType,
		[]byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)), metav1.PatchOptions{})
	return err
}

// ReplicaState is where one replica of the workload stands.
type ReplicaState struct {
	Pod, Node, Host string
	Running         bool
	// PullFailed: the kubelet's Failed event "Failed to pull image" was
	// seen for the pod; Event is its message.
	PullFailed bool
	Event      string
}

// WaitWorkload waits (bounded by timeout) until the Deployment has want
// pods, each scheduled and either running or with a pull-failure Event
// from its kubelet, and returns them by node host.
func (c *Cluster) WaitWorkload(ctx context.Context, want int, timeout time.Duration) (map[string]ReplicaState, error) {
	ns, name := c.WorkloadName()
	hostOf := map[string]string{}
	for h := range c.scen.Cluster.Nodes {
		hostOf[c.scen.NodeName(h)] = h
	}
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		out, pending, err := c.replicaStates(ctx, ns, name, hostOf)
		if err == nil && len(out) == want && pending == "" {
			return out, nil
		}
		if err != nil {
			last = err.Error()
		} else if pending != "" {
			last = pending
		} else {
			last = fmt.Sprintf("%d of %d replicas settled", len(out), want)
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("workload %s/%s not settled after %s: %s", ns, name, timeout, units.OneLine(last))
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *Cluster) replicaStates(ctx context.Context, ns, name string, hostOf map[string]string) (map[string]ReplicaState, string, error) {
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return nil, "", err
	}
	evs, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,reason=Failed"})
	if err != nil {
		return nil, "", err
	}
	failed := map[string]string{}
	for _, e := range evs.Items {
		if strings.HasPrefix(e.Message, "Failed to pull image") {
			failed[e.InvolvedObject.Name] = e.Message
		}
	}
	out := map[string]ReplicaState{}
	pending := ""
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		s := ReplicaState{Pod: p.Name, Node: p.Spec.NodeName, Host: hostOf[p.Spec.NodeName]}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil {
				s.Running = true
			}
		}
		if m, ok := failed[p.Name]; ok {
			s.PullFailed, s.Event = true, m
		}
		if s.Node == "" || (!s.Running && !s.PullFailed) {
			pending = fmt.Sprintf("pod %s on %q: %s", p.Name, s.Node, podPhase(&p))
			continue
		}
		out[s.Host] = s
	}
	return out, pending, nil
}

func podPhase(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			return w.Reason + " " + w.Message
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Status != corev1.ConditionTrue && cond.Message != "" {
			return string(cond.Type) + ": " + cond.Message
		}
	}
	return string(p.Status.Phase)
}

// RunWorkload runs the scenario's story: pre-pull on the first nodes if
// asked, a Deployment with one replica per first node, healthy or failing
// as the network says; then every later node joins (the scale-up) and the
// Deployment is scaled to one replica per node. It returns the replicas'
// states by host.
func (c *Cluster) RunWorkload(ctx context.Context) (map[string]ReplicaState, error) {
	w := c.scen.Cluster.Workload
	if w == nil {
		return nil, fmt.Errorf("scenario %s has no cluster.workload", c.scen.Name)
	}
	first := c.Hosts()
	if w.PrePulled {
		for _, h := range first {
			if err := c.PrePull(ctx, h); err != nil {
				return nil, err
			}
		}
		c.logf("image pre-pulled on %s", strings.Join(first, ", "))
	}
	if err := c.Deploy(ctx, len(first)); err != nil {
		return nil, fmt.Errorf("deploy: %v", err)
	}
	states, err := c.WaitWorkload(ctx, len(first), 120*time.Second)
	if err != nil {
		return states, err
	}
	var later []string
	for _, h := range c.scen.Cluster.ClusterOrder() {
		if c.scen.Cluster.Nodes[h].Later {
			later = append(later, h)
		}
	}
	if len(later) == 0 {
		return states, nil
	}
	for _, h := range later {
		if err := c.AddNode(ctx, h); err != nil {
			return states, err
		}
	}
	c.logf("scale-up: %s joined", strings.Join(later, ", "))
	total := len(first) + len(later)
	if err := c.Scale(ctx, total); err != nil {
		return states, err
	}
	return c.WaitWorkload(ctx, total, 120*time.Second)
}

// failingHosts lists the hosts whose replica failed to pull.
func failingHosts(states map[string]ReplicaState) []string {
	var out []string
	for h, s := range states {
		if s.PullFailed && !s.Running {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}
