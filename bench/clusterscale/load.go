package clusterscale

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Shape is the cluster loaded into the apiserver.
type Shape struct {
	Nodes, Pods, Events int
	Namespaces          int // pods and events are spread over these
	Pools               int // node pools; the last one sits in the broken subnet
	Workers             int // concurrent creates
}

// Loaded is what actually made it in before the load budget ran out.
type Loaded struct {
	Nodes, Pods, PodStatuses, Events int
	Seconds                          float64
	Complete                         bool // everything of Shape loaded
}

// Failing pods are those on nodes of the last pool: the new subnet whose
// path to the layer bucket is black-holed (the seeds' endpoint-set case).
func (s Shape) nodeName(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", s.pool(i), (i/250)%250, i%250+1)
}
func (s Shape) pool(i int) int        { return i % s.Pools }
func (s Shape) podNode(p int) int     { return (p * 7919) % s.Nodes }
func (s Shape) podFailing(p int) bool { return s.pool(s.podNode(p)) == s.Pools-1 }
func (s Shape) ns(p int) string       { return fmt.Sprintf("team-%02d", p%s.Namespaces) }
func (s Shape) podName(p int) string  { return fmt.Sprintf("svc-%02d-%06d", p%20, p) }

const registry = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com"

func (s Shape) image(p int) string {
	return fmt.Sprintf("%s/shop/svc-%02d:1.4.%d", registry, p%20, p%3)
}

func (s Shape) node(i int) *corev1.Node {
	zone := []string{"ap-northeast-2a", "ap-northeast-2b", "ap-northeast-2c"}[i%3]
	pool := s.pool(i)
	subnet := fmt.Sprintf("subnet-0a%02d", pool)
	ip := fmt.Sprintf("10.%d.%d.%d", pool, (i/250)%250, i%250+1)
	created := time.Now().Add(-time.Duration(s.Nodes-i) * time.Minute)
	if pool == s.Pools-1 {
		created = time.Now().Add(-time.Duration(i%60) * time.Minute) // scaled up lately
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.nodeName(i),
			Labels: map[string]string{
				"eks.amazonaws.com/nodegroup":      fmt.Sprintf("pool-%02d", pool),
				"topology.kubernetes.io/zone":      zone,
				"node.kubernetes.io/instance-type": "m6i.large",
				"pullpath.io/subnet":               subnet,
				"kubernetes.io/hostname":           s.nodeName(i),
			},
			Annotations: map[string]string{"bench.pullpath.io/created": created.UTC().Format(time.RFC3339)},
		},
		Status: corev1.NodeStatus{
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: s.nodeName(i)}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	if pool != s.Pools-1 {
		for k := 0; k < 5; k++ {
			n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("%s/shop/svc-%02d:1.4.%d", registry, (i+k)%20, k%3)}, SizeBytes: 120 << 20})
		}
	}
	return n
}

func (s Shape) pod(p int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.podName(p), Namespace: s.ns(p), Labels: map[string]string{"app": fmt.Sprintf("svc-%02d", p%20)}},
		Spec: corev1.PodSpec{
			NodeName:   s.nodeName(s.podNode(p)),
			Containers: []corev1.Container{{Name: "app", Image: s.image(p)}},
		},
	}
}

func (s Shape) podStatus(pod *corev1.Pod, p int) {
	now := metav1.Now()
	if s.podFailing(p) {
		reason, msg := "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", s.image(p))
		if p%2 == 0 {
			reason, msg = "ErrImagePull", s.runtimeError(p)
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: s.image(p), State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}},
		}}}
		return
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", Image: s.image(p), Ready: true, ImageID: registry + "/shop/svc@sha256:" + fmt.Sprintf("%064x", p%20),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}}}
}

// runtimeError is containerd 1.6's message for a black-holed layer bucket
// (recorded in the lab: shared/notes/containerd-in-netns.md).
func (s Shape) runtimeError(p int) string {
	img := s.image(p)
	return fmt.Sprintf("rpc error: code = DeadlineExceeded desc = failed to pull and unpack image %q: failed to copy: httpReadSeeker: failed open: failed to do request: Get \"https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/docker/registry/v2/blobs/sha256/4f/4f1c/data\": dial tcp 10.0.20.10:443: i/o timeout", img)
}

// event j belongs to pod j%Pods: a failing pod gets Failed / BackOff /
// Failed(ErrImagePull) events, a healthy one Pulling / Pulled / Started.
func (s Shape) event(j int) *corev1.Event {
	p := j % s.Pods
	img := s.image(p)
	var reason, typ, msg string
	switch k := (j / s.Pods) % 3; {
	case s.podFailing(p) && k == 0:
		reason, typ, msg = "Failed", corev1.EventTypeWarning, fmt.Sprintf("Failed to pull image %q: %s", img, s.runtimeError(p))
	case s.podFailing(p) && k == 1:
		reason, typ, msg = "BackOff", corev1.EventTypeNormal, fmt.Sprintf("Back-off pulling image %q", img)
	case s.podFailing(p):
		reason, typ, msg = "Failed", corev1.EventTypeWarning, "Error: ErrImagePull"
	case k == 0:
		reason, typ, msg = "Pulled", corev1.EventTypeNormal, fmt.Sprintf("Successfully pulled image %q in 1.184s (1.184s including waiting). Image size: 125829120 bytes.", img)
	case k == 1:
		reason, typ, msg = "Pulling", corev1.EventTypeNormal, fmt.Sprintf("Pulling image %q", img)
	default:
		reason, typ, msg = "Started", corev1.EventTypeNormal, "Started container app"
	}
	ts := metav1.NewTime(time.Now().Add(-time.Duration(j%3000) * time.Second))
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", s.podName(p), j), Namespace: s.ns(p)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: s.ns(p), Name: s.podName(p), APIVersion: "v1", FieldPath: "spec.containers{app}"},
		Reason:         reason, Type: typ, Message: msg,
		Source: corev1.EventSource{Component: "kubelet", Host: s.nodeName(s.podNode(p))},
		Count:  int32(1 + j%7), FirstTimestamp: ts, LastTimestamp: ts,
	}
}

// Load creates the namespaces, then nodes, pods (create, then status) and
// events with Workers concurrent requests. Each phase gets a share of
// budget in proportion to its requests; what is not created by then is
// left out (the counts say what loaded), and later objects only refer to
// what loaded. A failed create is an error; running out of budget is not.
func Load(ctx context.Context, c kubernetes.Interface, s Shape, budget time.Duration, logf func(string, ...any)) (Loaded, error) {
	start := time.Now()
	want := s
	reqs := float64(s.Nodes + 2*s.Pods + s.Events)
	share := func(n int) time.Duration { return time.Duration(float64(budget) * float64(n) / reqs) }
	var out Loaded
	for i := 0; i < s.Namespaces; i++ {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%02d", i)}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return out, fmt.Errorf("create namespace %s: %v", ns.Name, err)
		}
	}
	phase := func(name string, n int, budget time.Duration, f func(ctx context.Context, i int) error) (int, error) {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		var next, done atomic.Int64
		var firstErr error
		var once sync.Once
		var wg sync.WaitGroup
		for range s.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					if err := f(ctx, i); err != nil {
						if ctx.Err() == nil {
							once.Do(func() { firstErr = fmt.Errorf("%s %d: %v", name, i, err) })
						}
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		logf("loaded %d of %d %s in %.1fs", done.Load(), n, name, time.Since(t0).Seconds())
		return int(done.Load()), firstErr
	}
	var err error
	if out.Nodes, err = phase("nodes", s.Nodes, share(s.Nodes), func(ctx context.Context, i int) error {
		_, err := c.CoreV1().Nodes().Create(ctx, s.node(i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return out, err
	}
	if out.Nodes == 0 {
		return out, fmt.Errorf("no node loaded within %s", share(s.Nodes))
	}
	s.Nodes = out.Nodes
	if out.Pods, err = phase("pods", s.Pods, share(2*s.Pods), func(ctx context.Context, p int) error {
		pod, err := c.CoreV1().Pods(s.ns(p)).Create(ctx, s.pod(p), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		s.podStatus(pod, p)
		_, err = c.CoreV1().Pods(s.ns(p)).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return out, err
	}
	out.PodStatuses = out.Pods
	if out.Pods == 0 {
		return out, fmt.Errorf("no pod loaded within %s", share(2*s.Pods))
	}
	s.Pods = out.Pods
	if out.Events, err = phase("events", s.Events, share(s.Events), func(ctx context.Context, j int) error {
		_, err := c.CoreV1().Events(s.ns(j%s.Pods)).Create(ctx, s.event(j), metav1.CreateOptions{})
		return err
	}); err != nil {
		return out, err
	}
	out.Seconds = time.Since(start).Seconds()
	out.Complete = out.Nodes == want.Nodes && out.Pods == want.Pods && out.Events == want.Events
	return out, nil
}

// Node is the i-th Node of the shape (pool, zone and subnet labels, an
// InternalIP, cached images on healthy pools), for other benchmarks that
// load the same cluster.
func (s Shape) Node(i int) *corev1.Node { return s.node(i) }
