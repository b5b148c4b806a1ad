// Package sweeplab_test runs pullpath sweep on the lab cluster: real
// kubelets and containerd in network namespaces (internal/lab), pullpath's
// node-side image (pullpath-agent) built without Docker (internal/selfimage)
// and imported into every node, or pulled by them through the lab's
// registry. They need root; under CI=true they fail when they cannot run.
package sweeplab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distribution/reference"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/testenv/deploytest"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestMain(m *testing.M) { labtest.Main(m) }

const (
	probeImage = labtest.NodeImageRef // the node-side image: sweep's default
	ns         = "pullpath-sweep"
	secretName = "registry-creds"
)

// artifacts are the node-side image's tarball (what the probe Pods run,
// built once per test binary by labtest) and the pullpath binary labtest
// built for this machine (the CLI under signals).
func artifacts(t *testing.T) (tarball, bin string) {
	t.Helper()
	tar, _ := labtest.NodeImage(t)
	return tar, labtest.Pullpath(t)
}

type env struct {
	t *testing.T
	c *cluster.Cluster
}

// start brings the scenario's cluster up with the node-side image on every
// node, the working namespace and the registry credentials as a pull
// secret.
func start(t *testing.T, scenario string) *env {
	e := startBare(t, scenario)
	tar, _ := artifacts(t)
	if err := e.c.ImportImage(t.Context(), tar); err != nil {
		t.Fatal(err)
	}
	return e
}

// startBare is start without any of pullpath's images on the nodes.
func startBare(t *testing.T, scenario string) *env {
	c := labtest.Require(t, scenario)
	e := &env{t: t, c: c}
	labtest.WalkNamespace(t, c, ns, secretName)
	return e
}

func (e *env) options() sweep.Options {
	o := sweep.Options{
		Image: e.c.WorkloadImage(), ProbeImage: probeImage, Namespace: ns,
		DockerCerts: "/etc/containerd/docker-certs.d", Timeout: 3 * time.Minute, StartTimeout: 90 * time.Second,
		ProbeArgs: []string{"--connect-timeout", "3s"},
	}
	if e.c.Scenario().Node.Credentials != nil {
		o.PullSecrets = []string{secretName}
	}
	return o
}

func (e *env) sweep(o sweep.Options) *report.SweepReport {
	e.t.Helper()
	r, err := sweep.Run(e.t.Context(), e.c.Client, o)
	if err != nil {
		e.t.Fatalf("sweep = %v", err)
	}
	var b bytes.Buffer
	_ = printers.Print(&b, "text", r, printers.Options{})
	e.t.Logf("sweep %s:\n%s", o.Image, b.String())
	e.noLeftovers(0)
	return r
}

// noLeftovers waits up to d (0: not at all) for the run's objects to be
// gone, then fails if any is left.
func (e *env) noLeftovers(d time.Duration) { e.noLeftoversT(e.t, d) }

func (e *env) noLeftoversT(t *testing.T, d time.Duration) {
	t.Helper()
	if d > 0 {
		// watched, bounded by d: the run's Pods gone, then its owners
		end := time.Now().Add(d)
		kwait.Until(context.Background(), t, d, "the run's Pods gone", kwait.Pods(e.c.Client, ns, sweep.CleanupSelector),
			func(ps []*corev1.Pod) bool { return len(ps) == 0 })
		kwait.Until(context.Background(), t, max(time.Until(end), time.Second), "the run's owner Jobs gone", kwait.Jobs(e.c.Client, ns, sweep.CleanupSelector),
			func(js []*batchv1.Job) bool { return len(js) == 0 })
	}
	pods, owners, err := sweep.Leftovers(context.Background(), e.c.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	if pods != 0 || owners != 0 {
		t.Fatalf("left behind after %s: %d Pod(s), %d owner(s); want none", d, pods, owners)
	}
}

func node(r *report.SweepReport, name string) *report.SweepNode {
	for i := range r.Nodes {
		if r.Nodes[i].Name == name {
			return &r.Nodes[i]
		}
	}
	return nil
}

// waitImageListed waits until node.status.images of every named node lists
// the image (the kubelet reports it with its node status).
func (e *env) waitImageListed(image string, nodes ...string) {
	e.t.Helper()
	want := strings.TrimPrefix(image, "docker.io/")
	end := time.Now().Add(90 * time.Second)
	for _, n := range nodes {
		kwait.One(e.t.Context(), e.t, max(time.Until(end), time.Second), "node "+n+" lists "+want+" in status.images", kwait.Node(e.c.Client, n),
			func(nd *corev1.Node) bool {
				for _, img := range nd.Status.Images {
					if slices.Contains(img.Names, want) {
						return true
					}
				}
				return false
			})
	}
}

// TestLabScaleUpNewSubnet: the ECR subnet scenario on real kubelets. The default sweep
// finds the one failing group (the subnet added by the scale-up), names
// the blob host and CONNECT_TIMEOUT, and shows the other groups pulling
// fully; the canary agrees on the new node and says cached on the old
// ones; after the repair a second sweep is green on every group.
func TestLabScaleUpNewSubnet(t *testing.T) {
	e := start(t, "scale-up-new-subnet")
	ctx := t.Context()
	old := e.c.NodeNames()
	for _, h := range e.c.Hosts() {
		if err := e.c.PrePull(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	e.waitImageListed(e.c.WorkloadImage(), old...)
	if err := e.c.AddNode(ctx, "node-c"); err != nil {
		t.Fatal(err)
	}
	newNode := e.c.NodeName("node-c")

	o := e.options()
	o.Canary = true
	r := e.sweep(o)
	if f := os.Getenv("PULLPATH_SWEEP_RECORD"); f != "" {
		// A real report for internal/printers' golden files.
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := r.Verdict
	if len(r.Nodes) != 3 {
		t.Fatalf("walked from %d node(s), want 3 (one per pool x zone x subnet)", len(r.Nodes))
	}
	if v.Pattern != "subnet" || !strings.Contains(string(v.Code), "CONNECT_TIMEOUT") || !strings.Contains(v.Endpoint, "starport-layer-bucket") || v.Role != verdict.RoleBlob {
		t.Errorf("verdict = %s %s %s (%s), want subnet, CONNECT_TIMEOUT, the S3 blob host", v.Pattern, v.Code, v.Endpoint, v.Role)
	}
	if !strings.Contains(v.Summary, "subnet-0c3a5b7d9e1f40003") || !strings.Contains(v.Summary, "pull fully") || v.OK != 2 || v.Failed != 1 {
		t.Errorf("summary = %q (ok %d, failed %d), want subnet C failing and 2 groups pulling fully", v.Summary, v.OK, v.Failed)
	}
	nc := node(r, newNode)
	if nc == nil || nc.Agreement != "agree-fail" || nc.Canary == nil || nc.Canary.Status != report.SweepFail {
		t.Errorf("new node %s = %+v, want the canary failing the same way (agree-fail)", newNode, nc)
	}
	for _, n := range old {
		sn := node(r, n)
		if sn == nil || sn.Agreement != "agree-ok" || sn.Canary == nil || sn.Canary.Cached == nil || !*sn.Canary.Cached {
			t.Errorf("old node %s = %+v, want agree-ok with the canary from cache", n, sn)
		}
	}

	// The repair: subnet C's path to the bucket (the scenario's drop rule
	// on the VPC router).
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", e.c.Namespace("vpc"), "nft", "delete", "table", "inet", "pullpath")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("repair: %v: %s", err, out)
	}
	r = e.sweep(e.options())
	if r.Verdict.Pattern != "all-ok" || r.Verdict.OK != 3 {
		t.Errorf("after the repair: %s (%d ok), want every group green", r.Verdict.Summary, r.Verdict.OK)
	}
}

// TestLabIPv6OnlyPool: pool ng-v6's node is IPv6-only (its kubelet, its
// apiserver connection and its Pods too) and the ECR name has only an A
// record: the sweep's probe Pod there says ADDRESS_FAMILY_UNUSABLE, the
// IPv4 pool pulls fully, the verdict names the IPv6-only subnet (pool,
// zone and subnet all separate the groups: the sweep names the subnet
// first) and its advice DNS64/NAT64; the canary on the IPv6-only node
// fails the same way.
func TestLabIPv6OnlyPool(t *testing.T) {
	e := start(t, "cluster-ipv6-only-pool")
	v6, v4 := e.c.NodeName("node-b"), e.c.NodeName("node-a")
	o := e.options()
	o.Canary = true
	r := e.sweep(o)
	v := r.Verdict
	if v.Code != verdict.AddressFamilyUnusable || v.Failed != 1 || v.OK != 1 || !strings.Contains(v.Summary, "subnet-0b2e4d6f8a0c30006") {
		t.Errorf("verdict = %s %s (%d ok, %d failed): %q; want ADDRESS_FAMILY_UNUSABLE on the one IPv6-only node, its subnet named", v.Pattern, v.Code, v.OK, v.Failed, v.Summary)
	}
	if !strings.Contains(strings.Join(v.Advice, " "), "DNS64") {
		t.Errorf("advice = %q, want DNS64/NAT64 named", v.Advice)
	}
	if n := node(r, v6); n == nil || n.Pool != "ng-v6" || n.Status != report.SweepFail || n.Verdict.Code != verdict.AddressFamilyUnusable || n.Agreement != "agree-fail" {
		t.Errorf("IPv6-only node %s = %+v, want the probe's ADDRESS_FAMILY_UNUSABLE and the canary failing too (agree-fail)", v6, n)
	}
	if n := node(r, v4); n == nil || n.Status != report.SweepOK {
		t.Errorf("IPv4 node %s = %+v, want ok", v4, n)
	}
}

// TestLabIdentity: every node alike: identity, not network, one cause.
func TestLabIdentity(t *testing.T) {
	e := start(t, "every-node-no-pull-scope")
	r := e.sweep(e.options())
	v := r.Verdict
	if v.Pattern != "all-nodes" || v.Condition != verdict.ConditionTLSIdentity || !strings.Contains(v.Summary, "not the network") {
		t.Errorf("verdict = %s %s %q, want all-nodes tls-identity, not the network", v.Pattern, v.Condition, v.Summary)
	}
}

// TestLabSweepPullsTheNodeImage: the walk's Pods run pullpath's small
// node-side image, and each node's kubelet pulls it through the lab's
// registry (stored there, never imported): every node walks, lists that
// image by its digest in status.images, and holds no image of the CLI's.
func TestLabSweepPullsTheNodeImage(t *testing.T) {
	e := startBare(t, "cluster-healthy")
	_, img := labtest.NodeImage(t)
	named, err := reference.ParseNormalizedNamed(e.c.WorkloadImage())
	if err != nil {
		t.Fatal(err)
	}
	// The lab's registry serves RunDir/storage (internal/lab, prepare.go),
	// and its user may pull the workload's repository: the image goes there.
	repo := reference.Domain(named) + "/" + reference.Path(named)
	dig := labtest.StoreImage(t, filepath.Join(e.c.RunDir, "storage"), reference.Path(named), "pullpath-agent", img)
	o := e.options()
	if len(o.PullSecrets) == 0 {
		t.Fatal("cluster-healthy's node has no registry credentials: nothing could pull from the lab's registry")
	}
	o.ProbeImage = repo + ":pullpath-agent"
	r := e.sweep(o)
	if r.Verdict.Pattern != "all-ok" || r.Verdict.OK == 0 || len(r.Nodes) != len(e.c.NodeNames()) {
		t.Fatalf("sweep with the node image pulled from the lab's registry = %s (%d ok) over %d node(s), want every node of %v walking fully",
			r.Verdict.Summary, r.Verdict.OK, len(r.Nodes), e.c.NodeNames())
	}
	for _, n := range r.Nodes {
		if n.Probe == nil || n.Probe.Source == report.SourceProbeEvents {
			t.Errorf("node %s: %+v, want the probe's own report (the Pod ran)", n.Name, n.Probe)
		}
	}
	e.waitImageListed(o.ProbeImage, e.c.NodeNames()...)
	for _, name := range e.c.NodeNames() {
		nd, err := e.c.Client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var pulled bool
		for _, im := range nd.Status.Images {
			for _, n := range im.Names {
				if cli := strings.TrimSuffix(labtest.PullpathImageRef, ":lab"); strings.HasPrefix(n, cli+":") || strings.HasPrefix(n, cli+"@") {
					t.Errorf("node %s holds the CLI image (%v), want only the node-side one", name, im.Names)
				}
			}
			if slices.Contains(im.Names, o.ProbeImage) {
				pulled = slices.Contains(im.Names, repo+"@"+dig)
				t.Logf("node %s pulled %v (%d bytes)", name, im.Names, im.SizeBytes)
			}
		}
		if !pulled {
			t.Errorf("node %s lists %s without the stored digest %s", name, o.ProbeImage, dig)
		}
	}
}

// TestLabProbeImageUnpullable: one node lacks pullpath's image and cannot
// pull it: its Events are its verdict, and the run ends.
func TestLabProbeImageUnpullable(t *testing.T) {
	e := start(t, "cluster-healthy")
	host := e.c.Hosts()[1]
	sock := filepath.Join(filepath.Dir(e.c.Logs()), "nodes", host, "containerd", "containerd.sock")
	cmd, err := e.c.Exec(t.Context(), host, "ctr", "-a", sock, "-n", "k8s.io", "images", "rm", probeImage)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("remove the probe image from %s: %v: %s", host, err, out)
	}
	r := e.sweep(e.options())
	n := node(r, e.c.NodeName(host))
	if n == nil || n.Probe == nil || n.Probe.Source != report.SourceProbeEvents || n.Status != report.SweepFail || n.Verdict.Code == verdict.Other {
		t.Fatalf("node %s = %+v, want a verdict from the kubelet's Events about the probe image", host, n)
	}
	if ok := node(r, e.c.NodeName(e.c.Hosts()[0])); ok == nil || ok.Status != report.SweepOK {
		t.Errorf("the other node = %+v, want ok", ok)
	}
}

// TestLabCleanupAndReporting: the CLI as a process, as the ServiceAccount
// of deploy/sweep (through --as): Ctrl-C, SIGTERM and kill -9 leave
// nothing (after kill -9, the owner's deadline, the TTL controller and the
// garbage collector of the real kube-controller-manager remove it all); a
// cordoned node, a NotReady node and a pool scaled to zero are reported
// and the run ends.
func TestLabCleanupAndReporting(t *testing.T) {
	e := start(t, "cluster-healthy")
	_, bin := artifacts(t)
	ctx := t.Context()
	applyDeploy(t, e)
	hosts := e.c.Hosts()
	// A kubelet that is gone while its node still shows Ready: the Pod
	// aimed at it waits, so the run is in flight when the signal comes.
	if err := e.c.StopKubelet(ctx, hosts[1]); err != nil {
		t.Fatal(err)
	}
	args := []string{"sweep", e.c.WorkloadImage(), "--kubeconfig", e.c.Kubeconfig, "--image-for-probe", probeImage,
		"--as", "system:serviceaccount:pullpath-sweep:pullpath-sweep", "--as-group", "system:serviceaccounts",
		"--node-docker-certs-dir", "/etc/containerd/docker-certs.d", "--timeout", "20s", "--start-timeout", "20s"}
	if e.c.Scenario().Node.Credentials != nil {
		args = append(args, "--pull-secret", secretName)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			e.waitPods(t, 1, 30*time.Second)
			_ = cmd.Process.Signal(sig)
			err := cmd.Wait()
			t.Logf("%s: %v; stderr: %s", sig, err, errOut.String())
			if sig == syscall.SIGKILL {
				e.noLeftoversT(t, 2*time.Minute) // deadline 20s + 30s, then TTL and GC
				return
			}
			if !strings.Contains(errOut.String(), "sweep interrupted; every object of run") {
				t.Errorf("stderr = %q, want the interruption said", errOut.String())
			}
			e.noLeftoversT(t, 0)
		})
	}

	// Cordoned, NotReady, scaled to zero: reported, and the run ends.
	if err := e.c.Cordon(ctx, hosts[0]); err != nil {
		t.Fatal(err)
	}
	e.waitNotReady(e.c.NodeName(hosts[1]), 2*time.Minute)
	o := e.options()
	o.Plan.ExpectPools = []string{"ng-gpu"}
	r := e.sweep(o)
	if n := node(r, e.c.NodeName(hosts[0])); n == nil || !n.Cordoned || n.Status != report.SweepOK {
		t.Errorf("cordoned node = %+v, want probed anyway, marked cordoned", n)
	}
	skipped := map[string]string{}
	for _, s := range r.Plan.Skipped {
		skipped[s.Name] = s.Reason
	}
	if skipped[e.c.NodeName(hosts[1])] != report.SkipNotReady {
		t.Errorf("skipped = %v, want %s NotReady", skipped, e.c.NodeName(hosts[1]))
	}
	if len(r.Plan.EmptyPools) != 1 || r.Plan.EmptyPools[0].Pool != "ng-gpu" {
		t.Errorf("empty pools = %+v, want ng-gpu", r.Plan.EmptyPools)
	}
}

func (e *env) waitPods(t *testing.T, n int, d time.Duration) {
	t.Helper()
	kwait.Until(t.Context(), t, d, fmt.Sprintf("%d sweep Pod(s)", n), kwait.Pods(e.c.Client, ns, sweep.CleanupSelector),
		func(ps []*corev1.Pod) bool { return len(ps) >= n })
}

func (e *env) waitNotReady(name string, d time.Duration) {
	e.t.Helper()
	kwait.One(e.t.Context(), e.t, d, "node "+name+" not Ready", kwait.Node(e.c.Client, name),
		func(n *corev1.Node) bool { r := kwait.NodeReady(n); return r != "" && r != corev1.ConditionTrue })
}

func applyDeploy(t *testing.T, e *env) {
	t.Helper()
	if _, err := deploytest.ApplySweep(t.Context(), e.c.Client); err != nil {
		t.Fatal(err)
	}
}

// TestLabMirrorPool: the nodes' 443 to the registry is rejected; pool
// ng-cache's certs.d has a hosts.toml with the real pull-through cache,
// pool ng-new's node (same subnet and zone) has none. The sweep (with the
// canary, and --check-upstream as the CLI's default) names pool ng-new,
// the divergence names the mirror ng-new lacks, and ng-cache's OK carries
// MIRROR_HIDES_UPSTREAM: the cache hides the refused registry.
func TestLabMirrorPool(t *testing.T) {
	e := start(t, "cluster-mirror-pool-no-hosts-toml")
	o := e.options()
	o.Canary, o.CheckUpstream = true, true
	r := e.sweep(o)
	v := r.Verdict
	const mirror = "mirror.corp.example"
	if v.Pattern != "pool" || v.Code != verdict.ConnectRefused || v.OK != 1 || v.Failed != 1 || !strings.Contains(v.Summary, "ng-new") {
		t.Errorf("verdict = %s %s (ok %d, failed %d) %q, want pool ng-new failing CONNECT_REFUSED, ng-cache ok", v.Pattern, v.Code, v.OK, v.Failed, v.Summary)
	}
	if !strings.Contains(v.Summary, "A mirror hides a broken upstream on 1 node(s) ("+e.c.NodeName("node-a")+", MIRROR_HIDES_UPSTREAM): "+mirror+" served") {
		t.Errorf("summary = %q, want ng-cache's OK named as the cache's (MIRROR_HIDES_UPSTREAM)", v.Summary)
	}
	if len(v.Advice) == 0 || !strings.Contains(v.Advice[0], "The healthy nodes pull through hosts.toml mirror "+mirror+", which the failing nodes do not use") {
		t.Errorf("advice = %q, want first the mirror pool ng-new lacks (%s)", v.Advice, mirror)
	}
	cached, plain := node(r, e.c.NodeName("node-a")), node(r, e.c.NodeName("node-b"))
	if cached == nil || cached.Status != report.SweepOK || cached.Probe == nil || !slices.Contains(cached.Probe.Warnings, verdict.MirrorHidesUpstream) {
		t.Errorf("node-a (ng-cache) = %+v, want ok with MIRROR_HIDES_UPSTREAM", cached)
	} else if !cached.Probe.Mirror {
		t.Errorf("node-a's walk was not served by the mirror: %+v", cached.Probe)
	}
	if cached != nil && cached.Agreement != "agree-ok" {
		t.Errorf("node-a agreement = %q, want agree-ok (the canary's CRI pull through the cache)", cached.Agreement)
	}
	if plain == nil || plain.Status != report.SweepFail || plain.Agreement != "agree-fail" {
		t.Errorf("node-b (ng-new) = %+v, want failing, the canary agreeing", plain)
	}
}
