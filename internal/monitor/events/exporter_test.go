package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

// Real runtime messages (explain's corpus): a black-holed S3 layer bucket
// and an unknown authority.
const (
	ecr        = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com"
	ecrImage   = ecr + "/shop/checkout:1.4.2"
	blobTimout = `Failed to pull image "` + ecrImage + `": rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "` + ecrImage + `": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/docker/registry/v2/blobs/sha256/4f/4f1c/data": dial tcp 10.0.20.10:443: i/o timeout`
	acrImage   = "myacr.azurecr.io/team/app:2.0"
	acrTLS     = `Failed to pull image "` + acrImage + `": rpc error: code = Unknown desc = failed to pull and unpack image "` + acrImage + `": failed to resolve reference "` + acrImage + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/2.0": tls: failed to verify certificate: x509: certificate signed by unknown authority`
)

// startControlPlane is controlplane.Require with the apiserver's watch
// cache off, so that a compaction of etcd makes a resumed watch's version
// too old (410), as a busy cluster's event churn does.
func startControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{APIServerArgs: []string{"--watch-cache=false"}})
	if err != nil {
		if errors.Is(err, controlplane.ErrBinariesMissing) && !testenv.CI() {
			t.Skipf("real control plane unavailable, run hack/controlplane.sh: %v", err)
		}
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control-plane logs:\n%s", cp.Logs())
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return cp
}

func mkNode(t *testing.T, c kubernetes.Interface, name, pool, zone string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"eks.amazonaws.com/nodegroup": pool, "topology.kubernetes.io/zone": zone}}}
	if _, err := c.CoreV1().Nodes().Create(t.Context(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mkEvent(t *testing.T, c kubernetes.Interface, name, node, typ, reason, msg string, first time.Time) *corev1.Event {
	t.Helper()
	ts := metav1.NewTime(first)
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "pod-" + name, APIVersion: "v1"},
		Type:           typ, Reason: reason, Message: msg, Count: 1,
		Source:         corev1.EventSource{Component: "kubelet", Host: node},
		FirstTimestamp: ts, LastTimestamp: ts,
	}
	out, err := c.CoreV1().Events("default").Create(t.Context(), e, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// repeat is what the kubelet's event correlator does when a message
// repeats: the same Event, its count raised.
func repeat(t *testing.T, c kubernetes.Interface, name string, count int32) {
	t.Helper()
	e, err := c.CoreV1().Events("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Count = count
	e.LastTimestamp = metav1.Now()
	if _, err := c.CoreV1().Events("default").Update(t.Context(), e, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// scrape reads the exporter's /metrics into "name{k=v,...}" -> value.
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			var kv []string
			for _, l := range m.Label {
				kv = append(kv, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(kv)
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
			out[name+"{"+strings.Join(kv, ",")+"}"] = v
		}
	}
	return out, nil
}

func key(name string, labels ...string) string {
	kv := make([]string, 0, len(labels)/2)
	for i := 0; i+1 < len(labels); i += 2 {
		kv = append(kv, labels[i]+"="+labels[i+1])
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// waitMetrics waits (bounded) until cond holds on a scrape.
func waitMetrics(t *testing.T, addr, what string, cond func(m map[string]float64) bool) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last map[string]float64
	for {
		m, err := scrape(addr)
		if err == nil && cond(m) {
			return m
		}
		if err == nil {
			last = m
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not within 90s (last scrape: %v, %s)", what, err, pullpathOnly(last))
		case <-tick.C:
		}
	}
}

func pullpathOnly(m map[string]float64) string {
	var out []string
	for k, v := range m {
		if strings.HasPrefix(k, "pullpath_") {
			out = append(out, fmt.Sprintf("%s %g", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// sum adds every series of name whose labels include all of labels.
func sum(m map[string]float64, name string, labels ...string) float64 {
	var s float64
	for k, v := range m {
		if !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && (strings.Contains(k, "{"+labels[i]+"="+labels[i+1]+",") || strings.Contains(k, ","+labels[i]+"="+labels[i+1]+",") ||
				strings.Contains(k, ","+labels[i]+"="+labels[i+1]+"}") || strings.Contains(k, "{"+labels[i]+"="+labels[i+1]+"}"))
		}
		if ok {
			s += v
		}
	}
	return s
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startExporter(t *testing.T, cp *controlplane.ControlPlane, o Options) *Exporter {
	t.Helper()
	logs := &syncBuf{}
	o.Listen, o.Log = "127.0.0.1:0", logs
	x, err := New(cp.Config, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the exporter did not stop within 30s")
		}
		if t.Failed() {
			t.Logf("exporter logs:\n%s", logs.String())
		}
	})
	return x
}

// TestExporterCountsPullFailures runs the exporter against a real
// kube-apiserver: failures are counted per (registry host, cause,
// condition, pool, zone) from the Events' counts; the failures from before
// the start are the baseline (first-seen time, no count); the kubelet's
// echoes and Normal events count nothing; a watch that ends resumes, and
// one whose version was compacted away lists again, and neither counts an
// Event twice; Pods waiting on a pull are the backoff gauge until they
// leave Pending.
func TestExporterCountsPullFailures(t *testing.T) {
	cp := startControlPlane(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	mkNode(t, c, "node-a1", "pool-a", "zone-1")
	mkNode(t, c, "node-b2", "pool-b", "zone-2")
	mkNode(t, c, "node-b3", "pool-b", "zone-2")
	before := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	mkEvent(t, c, "old-failure", "node-a1", corev1.EventTypeWarning, "Failed", acrTLS, before)

	x := startExporter(t, cp, Options{WatchTimeout: time.Second})
	acrA := []string{"image_host", "myacr.azurecr.io", "cause", "tls", "condition", "tls-identity", "pool", "pool-a", "zone", "zone-1"}
	ecrB := []string{"image_host", ecr, "cause", "timeout", "condition", "endpoint-set", "pool", "pool-b", "zone", "zone-2"}
	// 1. The baseline: the old failure's series at 0, its first time, the groups.
	waitMetrics(t, x.Addr(), "the first Lists", func(m map[string]float64) bool { return x.Ready() })
	m, err := scrape(x.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m[key(MetricFailures, acrA...)]; !ok || v != 0 {
		t.Errorf("%s of the failure from before the start = %v (present %v), want 0 (baseline)", key(MetricFailures, acrA...), v, ok)
	}
	if v := m[key(MetricFirstSeen, "image_host", "myacr.azurecr.io", "cause", "tls", "pool", "pool-a", "zone", "zone-1")]; v != float64(before.Unix()) {
		t.Errorf("first seen = %v, want %d", v, before.Unix())
	}
	if m[key(MetricNodes, "pool", "pool-b", "zone", "zone-2")] != 2 || m[key(MetricNodes, "pool", "pool-a", "zone", "zone-1")] != 1 {
		t.Errorf("pullpath_nodes: %s", pullpathOnly(m))
	}

	// 2. New failures and repeats count; echoes and Normal events do not.
	mkEvent(t, c, "blob-timeout", "node-b2", corev1.EventTypeWarning, "Failed", blobTimout, time.Now())
	mkEvent(t, c, "echo", "node-b2", corev1.EventTypeWarning, "Failed", "Error: ErrImagePull", time.Now())
	mkEvent(t, c, "backoff", "node-b2", corev1.EventTypeNormal, "BackOff", `Back-off pulling image "`+ecrImage+`"`, time.Now())
	mkEvent(t, c, "pulled", "node-a1", corev1.EventTypeNormal, "Pulled", `Successfully pulled image "nginx:1.27" in 1.2s`, time.Now())
	repeat(t, c, "blob-timeout", 3)
	repeat(t, c, "old-failure", 2)
	m = waitMetrics(t, x.Addr(), "3 ECR timeouts in pool-b and 1 ACR TLS failure in pool-a", func(m map[string]float64) bool {
		return m[key(MetricFailures, ecrB...)] == 3 && m[key(MetricFailures, acrA...)] == 1
	})
	if s := sum(m, MetricFailures); s != 4 {
		t.Errorf("every failure: %v, want 4 (echoes and Normal events count nothing): %s", s, pullpathOnly(m))
	}

	// 3. Watches end every second or two and resume: nothing is counted again.
	w0 := m[key(mWatches, "resource", "events")]
	m = waitMetrics(t, x.Addr(), "three more event watches", func(m map[string]float64) bool { return m[key(mWatches, "resource", "events")] >= w0+3 })
	if s := sum(m, MetricFailures); s != 4 {
		t.Errorf("after resumed watches: %v failures, want 4", s)
	}

	// 4. A version compacted away: the next resume is 410 Gone and the
	// exporter lists again; the List finds every Event it counted and
	// counts none of them again.
	mkEvent(t, c, "while-gone", "node-b3", corev1.EventTypeWarning, "Failed", blobTimout, time.Now())
	compact(t, cp, c)
	m = waitMetrics(t, x.Addr(), "a relist of events", func(m map[string]float64) bool { return m[key(mRelists, "resource", "events")] >= 1 })
	m = waitMetrics(t, x.Addr(), "4 ECR timeouts in pool-b", func(m map[string]float64) bool { return m[key(MetricFailures, ecrB...)] >= 4 })
	if s := sum(m, MetricFailures); s != 5 || m[key(MetricFailures, ecrB...)] != 4 {
		t.Errorf("after a 410 and a List: %s, want 5 failures (4 ECR in pool-b)", pullpathOnly(m))
	}
	repeat(t, c, "old-failure", 3)
	m = waitMetrics(t, x.Addr(), "the old failure's third occurrence", func(m map[string]float64) bool { return m[key(MetricFailures, acrA...)] == 2 })
	if s := sum(m, MetricFailures); s != 6 {
		t.Errorf("after one more repeat: %v failures, want 6", s)
	}

	// 5. Pods waiting on a pull, by cause; running, they leave the gauge.
	pod := mkPod(t, c, "web", "node-b2", ecrImage)
	setWaiting(t, c, pod, "ErrImagePull", strings.TrimPrefix(blobTimout, `Failed to pull image "`+ecrImage+`": `))
	m = waitMetrics(t, x.Addr(), "one pod in back-off (ECR timeout, pool-b)", func(m map[string]float64) bool { return m[key(MetricBackoff, ecrB...)] == 1 })
	// the kubelet's back-off text without a cause keeps the pod's cause
	setWaiting(t, c, pod, "ImagePullBackOff", `Back-off pulling image "`+ecrImage+`"`)
	pod2 := mkPod(t, c, "bad-name", "node-a1", "myacr.azurecr.io/team/App:2.0")
	setWaiting(t, c, pod2, "InvalidImageName", `Failed to apply default image tag "myacr.azurecr.io/team/App:2.0": couldn't parse image name "myacr.azurecr.io/team/App:2.0": invalid reference format: repository name (team/App) must be lowercase`)
	m = waitMetrics(t, x.Addr(), "two pods waiting", func(m map[string]float64) bool { return sum(m, MetricBackoff) == 2 })
	if m[key(MetricBackoff, ecrB...)] != 1 {
		t.Errorf("after a back-off message without a cause: %s, want the pod still under its ECR timeout", pullpathOnly(m))
	}
	if sum(m, MetricBackoff, "pool", "pool-a", "cause", "invalid_name") != 1 {
		t.Errorf("the pod with an invalid name: %s", pullpathOnly(m))
	}
	pod, err = c.CoreV1().Pods("default").Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: ecrImage, Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(t.Context(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	m = waitMetrics(t, x.Addr(), "the running pod out of the gauge", func(m map[string]float64) bool { return m[key(MetricBackoff, ecrB...)] == 0 })
	if s := sum(m, MetricBackoff); s != 1 {
		t.Errorf("backoff pods: %v, want 1: %s", s, pullpathOnly(m))
	}

	// 6. No Pod or node name, no image or message in any label.
	for k := range m {
		for _, bad := range []string{"node-a1", "node-b2", "web", "shop/checkout", "team/App", "starport"} {
			if strings.HasPrefix(k, "pullpath_") && strings.Contains(k, bad) {
				t.Errorf("series %s carries %q", k, bad)
			}
		}
	}
}

func mkPod(t *testing.T, c kubernetes.Interface, name, node, image string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: image}}}}
	out, err := c.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setWaiting writes the status a kubelet writes for a container that
// cannot pull.
func setWaiting(t *testing.T, c kubernetes.Interface, p *corev1.Pod, reason, msg string) {
	t.Helper()
	p, err := c.CoreV1().Pods(p.Namespace).Get(t.Context(), p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
	if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// compact moves etcd's revision on (two ConfigMaps written: a watch that
// resumes after the last Event starts one revision later, which must be
// gone too) and compacts everything before it, through etcd's own HTTP
// gateway.
func compact(t *testing.T, cp *controlplane.ControlPlane, c kubernetes.Interface) {
	t.Helper()
	var cm *corev1.ConfigMap
	var err error
	for range 2 {
		cm, err = c.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "bump-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	body := fmt.Sprintf(`{"revision": %q, "physical": true}`, cm.ResourceVersion)
	resp, err := http.Post(cp.EtcdURL+"/v3/kv/compaction", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("etcd compaction at %s: %s %s", cm.ResourceVersion, resp.Status, b)
	}
}
