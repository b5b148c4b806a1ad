package monitorlab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/deploytest"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

// eventInterval is the agents' walk interval in the events test: short,
// so one interval bounds the wait for a verdict change.
const eventInterval = 20 * time.Second

// TestAgentEventsOnLabCluster is issue 24's "done when" for the monitor:
// deploy/monitor as it is on a lab cluster whose nodes run a real
// kube-proxy, the agents walking the scenario's registry every 20 s. Each
// agent reads its Node and posts its Events through the kubernetes
// Service's ClusterIP (no other way to the API exists from a node). A
// route on node-a that makes the registry unreachable gets a
// PullPathBroken Event on node-a within one interval; removing it, a
// PullPathOK; `pullpath monitor status` shows both states. A plain Pod (not
// hostNetwork) reads its Node through the same ClusterIP, from the pod
// network.
func TestAgentEventsOnLabCluster(t *testing.T) {
	c := labtest.Require(t, "cluster-healthy")
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	labtest.ImportAgentImage(ctx, t, c)
	image := c.WorkloadImage()
	if err := deploytest.ApplyMonitor(ctx, c.Config, agentsWalking(t, c, image)); err != nil {
		t.Fatal(err)
	}
	nodes := c.NodeNames()

	// 1. every agent's first verdict: PullPathOK on its Node
	okOn := func(since time.Time) func([]*corev1.Event) bool {
		return func(evs []*corev1.Event) bool {
			return len(nodesWith(evs, monitor.ReasonOK, since)) == len(nodes)
		}
	}
	start := time.Now().Add(-time.Minute)
	if _, err := kwait.Wait(ctx, 3*time.Minute, "a PullPathOK Event on every node", kwait.Events(c.Client, "default", "reason="+monitor.ReasonOK),
		okOn(start)); err != nil {
		logAgents(t, c)
		t.Fatal(err)
	}
	if st := monitorStatus(t, c); st.Summary.OK != len(nodes) || st.Summary.Failing != 0 || st.Summary.ExitCode != 0 {
		t.Errorf("monitor status before the break: %+v, want every node ok and exit 0", st.Summary)
	}

	// 2. the break: node-a has no route to the registry's address any more
	// (its route to the control plane stays, so the agent can tell)
	broken := scenario.Route{To: "10.0.10.20/32", Type: "unreachable"}
	if err := c.Route(ctx, "node-a", "add", broken); err != nil {
		t.Fatal(err)
	}
	breakAt := time.Now()
	nodeA := c.NodeName("node-a")
	evs, err := kwait.Wait(ctx, eventInterval+30*time.Second, "a PullPathBroken Event on "+nodeA,
		kwait.Events(c.Client, "default", "reason="+monitor.ReasonBroken),
		func(evs []*corev1.Event) bool {
			return slices.Contains(nodesWith(evs, monitor.ReasonBroken, breakAt), nodeA)
		})
	if err != nil {
		logAgents(t, c)
		t.Fatal(err)
	}
	ev := latest(evs, nodeA, monitor.ReasonBroken)
	// Event times have a resolution of one second
	late := ev.FirstTimestamp.Sub(breakAt.Truncate(time.Second))
	t.Logf("PullPathBroken on %s %s after the break: %s", nodeA, late, ev.Message)
	if late > eventInterval+2*time.Second {
		t.Errorf("PullPathBroken came %s after the break, want within one interval (%s)", late, eventInterval)
	}
	if got := ev.Annotations[monitor.AnnotationCondition]; got != "route" {
		t.Errorf("PullPathBroken's condition = %q, want route (%s)", got, ev.Message)
	}
	st := monitorStatus(t, c)
	if st.Summary.Failing != 1 || st.Summary.OK != len(nodes)-1 || st.Summary.ExitCode != 3 {
		t.Errorf("monitor status after the break: %+v, want node-a failing (route, exit 3) and the others ok", st.Summary)
	}
	if s := nodeState(st, nodeA); s == nil || s.Status != "fail" || s.Condition != "route" {
		t.Errorf("monitor status of %s after the break: %+v, want fail, route", nodeA, s)
	}

	// 3. the heal
	if err := c.Route(ctx, "node-a", "del", broken); err != nil {
		t.Fatal(err)
	}
	healAt := time.Now()
	if _, err := kwait.Wait(ctx, eventInterval+30*time.Second, "a PullPathOK Event on "+nodeA+" after the heal",
		kwait.Events(c.Client, "default", "reason="+monitor.ReasonOK),
		func(evs []*corev1.Event) bool {
			return slices.Contains(nodesWith(evs, monitor.ReasonOK, healAt), nodeA)
		}); err != nil {
		logAgents(t, c)
		t.Fatal(err)
	}
	if st := monitorStatus(t, c); st.Summary.OK != len(nodes) || st.Summary.Failing != 0 {
		t.Errorf("monitor status after the heal: %+v, want every node ok", st.Summary)
	}
	if evs, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + monitor.ReasonBroken}); err != nil {
		t.Fatal(err)
	} else if others := slices.DeleteFunc(nodesWith(ptrs(evs.Items), monitor.ReasonBroken, start), func(n string) bool { return n == nodeA }); len(others) > 0 {
		t.Errorf("PullPathBroken on %v, want only on %s", others, nodeA)
	}

	// 4. the pod network: an agent in a plain Pod reads its Node (the
	// pool and zone labels come only from the API) through the ClusterIP
	podNetworkReadsNode(ctx, t, c, image)
}

// agentsWalking edits deploy/monitor for the test: the scenario's image
// walked every eventInterval (no jitter, a 15 s budget), and the node
// credentials in the Secret the DaemonSet mounts, created with the
// Namespace so the first Pods have it.
func agentsWalking(t *testing.T, c *cluster.Cluster, image string) func(*unstructured.Unstructured) []*unstructured.Unstructured {
	return func(u *unstructured.Unstructured) []*unstructured.Unstructured {
		switch u.GetKind() {
		case "Namespace":
			sec := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "pullpath-monitor-docker-config", Namespace: u.GetName()},
				Type:       corev1.SecretTypeDockerConfigJson,
				Data:       map[string][]byte{corev1.DockerConfigJsonKey: lab.DockerConfig(c.Scenario())}}
			return []*unstructured.Unstructured{u, toUnstructured(t, sec)}
		case "ConfigMap":
			cfg := fmt.Sprintf(`{"apiVersion": "pullpath/v1", "kind": "MonitorConfig", "images": [%q], "interval": %q, "fullInterval": "0s"}`,
				image, eventInterval.String())
			if err := unstructured.SetNestedField(u.Object, cfg, "data", "monitor.json"); err != nil {
				t.Fatal(err)
			}
		case "DaemonSet":
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			ctr := cs[0].(map[string]any)
			args, _ := ctr["args"].([]any)
			ctr["args"] = append(args, "--probe-timeout=15s", "--connect-timeout=2s", "--jitter=0")
			if err := unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
		}
		return []*unstructured.Unstructured{u}
	}
}

// podNetworkReadsNode runs the agent once in a Pod on the pod network
// (not hostNetwork) and checks that it read its Node's labels.
func podNetworkReadsNode(ctx context.Context, t *testing.T, c *cluster.Cluster, image string) {
	t.Helper()
	host := c.Hosts()[len(c.Hosts())-1]
	node := c.NodeName(host)
	var zero int64
	uid := int64(65532)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-once", Namespace: "pullpath-monitor"},
		Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: "pullpath-monitor", RestartPolicy: corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &zero,
			SecurityContext:               &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &uid, RunAsNonRoot: new(true)},
			Containers: []corev1.Container{{Name: "agent", Image: agentimage.Ref, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--once", "--node=" + node, "--image=" + image, "--probe-timeout=10s", "--connect-timeout=1s"}}},
		},
	}
	if _, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kwait.Wait(ctx, 2*time.Minute, "pod agent-once done", kwait.Pods(c.Client, pod.Namespace, ""),
		func(ps []*corev1.Pod) bool {
			for _, p := range ps {
				if p.Name == pod.Name && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
					return true
				}
			}
			return false
		}); err != nil {
		t.Fatal(err)
	}
	p, err := c.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logs, err := c.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Status.PodIP == p.Status.HostIP {
		t.Fatalf("pod agent-once ran with IP %q on host %q: want the pod network", p.Status.PodIP, p.Status.HostIP)
	}
	want := fmt.Sprintf(`pullpath_node_info{node=%q,pool="ng-general",`, node)
	if !bytes.Contains(logs, []byte(want)) || bytes.Contains(logs, []byte("pullpath_kube_request_errors_total 1")) {
		t.Errorf("agent in a pod (IP %s) did not read its Node through the Service: want %s in its output:\n%s", p.Status.PodIP, want, logs)
	}
	t.Logf("agent in pod %s (IP %s) read its Node through %s", pod.Name, p.Status.PodIP, c.Scenario().Cluster.APIServiceIP())
}

// nodesWith lists the nodes with an Event of reason at or after since.
func nodesWith(evs []*corev1.Event, reason string, since time.Time) []string {
	var out []string
	for _, e := range evs {
		if e.Reason == reason && e.InvolvedObject.Kind == "Node" && !e.FirstTimestamp.Time.Before(since.Truncate(time.Second)) &&
			!slices.Contains(out, e.InvolvedObject.Name) {
			out = append(out, e.InvolvedObject.Name)
		}
	}
	slices.Sort(out)
	return out
}

// latest is the newest Event of reason on node.
func latest(evs []*corev1.Event, node, reason string) *corev1.Event {
	var out *corev1.Event
	for _, e := range evs {
		if e.Reason == reason && e.InvolvedObject.Name == node && (out == nil || e.FirstTimestamp.After(out.FirstTimestamp.Time)) {
			out = e
		}
	}
	return out
}

func ptrs(evs []corev1.Event) []*corev1.Event {
	out := make([]*corev1.Event, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}

// monitorStatus runs `pullpath monitor status -o json` against the lab
// cluster, as a user would.
func monitorStatus(t *testing.T, c *cluster.Cluster) *report.MonitorFleetReport {
	t.Helper()
	code, out, errOut := testenv.Run(t, labtest.Pullpath(t), "monitor", "status", "--kubeconfig", c.Kubeconfig, "-o", "json")
	var r report.MonitorFleetReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("pullpath monitor status (exit %d): %v: %s%s", code, err, out, errOut)
	}
	if code != r.Summary.ExitCode {
		t.Errorf("pullpath monitor status exited %d, its report says %d", code, r.Summary.ExitCode)
	}
	return &r
}

func nodeState(r *report.MonitorFleetReport, node string) *report.MonitorNodeState {
	for _, g := range r.Groups {
		for i := range g.Nodes {
			if g.Nodes[i].Node == node {
				return &g.Nodes[i]
			}
		}
	}
	return nil
}

// logAgents logs every agent's output, for a failed wait.
func logAgents(t *testing.T, c *cluster.Cluster) {
	pods, err := c.Client.CoreV1().Pods("pullpath-monitor").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range pods.Items {
		b, _ := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(t.Context())
		t.Logf("logs of %s on %s:\n%s", p.Name, p.Spec.NodeName, b)
	}
	t.Logf("lab logs (kube-proxy, kubelets): %s", c.SaveLogs(""))
}

func toUnstructured(t *testing.T, o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
