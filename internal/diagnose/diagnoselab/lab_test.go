// Package diagnoselab_test runs pullpath diagnose on the lab cluster: real
// kubelets and containerd in network namespaces (internal/lab) whose
// network holds one of the scenarios' faults, the real kubelet's Events, the walk as
// Pods running pullpath's own image (built without Docker, imported into
// every node), and for the AWS story the saved AWS CLI folder that matches
// the scenario. They need root; under CI=true they fail when they cannot run.
package diagnoselab_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/diagnose"
	explaincluster "github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
	"github.com/pullpath/pullpath/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestMain(m *testing.M) { labtest.Main(m) }

const (
	probeImage = labtest.NodeImageRef // the node-side image, what diagnose's walk runs
	sweepNS    = "pullpath-sweep"
	secretName = "registry-creds"
	s3Host     = "prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com"
)

// story brings the scenario's cluster up, runs its workload's story (the
// pre-pull, the Deployment, the scale-up) until the kubelets have said
// what they say, and readies the walk: the node-side image on every node
// (unless withProbe is false), the sweep namespace, the registry
// credentials as a pull secret.
func story(t *testing.T, scenario string, withProbe bool) *cluster.Cluster {
	c := labtest.Require(t, scenario)
	ctx := t.Context()
	if withProbe {
		tar, _ := labtest.NodeImage(t)
		if err := c.ImportImage(ctx, tar); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.RunWorkload(ctx); err != nil {
		t.Fatalf("the scenario's story: %v", err)
	}
	labtest.WalkNamespace(t, c, sweepNS, secretName)
	return c
}

func options(c *cluster.Cluster, budget time.Duration) diagnose.Options {
	ns, name := c.WorkloadName()
	o := diagnose.Options{
		Client: c.Client,
		Target: explaincluster.Target{Kind: "deployment", Name: name, Namespace: ns},
		Budget: budget,
	}
	o.Sweep.ProbeImage = probeImage
	o.Sweep.Namespace = sweepNS
	o.Sweep.RunID = "diaglab"
	o.Sweep.ProbeArgs = []string{"--connect-timeout", "3s"}
	// The lab's nodes keep an empty docker certs.d beside their certs.d
	// (docs/lab.md): the machine has no /etc/docker.
	o.Sweep.DockerCerts = "/etc/containerd/docker-certs.d"
	if c.Scenario().Node.Credentials != nil {
		o.Sweep.PullSecrets = []string{secretName}
	}
	return o
}

// run diagnoses, checks the budget and that the walk left nothing, and
// returns the report and its text transcript.
func run(t *testing.T, c *cluster.Cluster, o diagnose.Options) (*report.DiagnoseReport, string) {
	t.Helper()
	start := time.Now()
	r, err := diagnose.Run(t.Context(), o)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("diagnose = %v", err)
	}
	if took > o.Budget+10*time.Second {
		t.Errorf("diagnose took %s, over its %s budget", took.Round(time.Second), o.Budget)
	}
	var b bytes.Buffer
	if err := printers.Print(&b, "text", r, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnose in %s:\n%s", took.Round(100*time.Millisecond), b.String())
	pods, err := c.Client.CoreV1().Pods(sweepNS).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("the walk left %d Pod(s) in %s (err %v), want none", len(pods.Items), sweepNS, err)
	}
	return r, b.String()
}

// answer is the transcript's answer: everything before STEPS, which holds
// no timing; the golden file keeps it.
func answer(transcript string) string {
	a, _, _ := strings.Cut(transcript, "\nSTEPS")
	return a + "\n"
}

var (
	runIDs = regexp.MustCompile(`pullpath-(probe|canary)-[a-z0-9-]+`)
	millis = regexp.MustCompile(`\b\d+ms\b`)
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = runIDs.ReplaceAllString(got, "pullpath-$1-RUN")
	got = millis.ReplaceAllString(got, "Nms") // "timeout in 3001ms"
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/diagnose/diagnoselab -update as root)", err)
	}
	if got != string(want) {
		t.Errorf("the answer differs from %s (rerun with -update and review the diff):\n%s", path, got)
	}
}

// The ECR subnet scenario on real kubelets: a scale-up puts a replica on node-c in subnet
// C, whose route table lacks the S3 gateway endpoint. The answer names the
// S3 layer host, CONNECT_TIMEOUT from the walk on node-c only, and, from
// the scenario's saved AWS CLI folder, the endpoint and route table to
// change with the command; the proof is a canary sweep of every pool.
func TestDiagnoseScaleUpNewSubnet(t *testing.T) {
	t.Parallel()
	c := story(t, "scale-up-new-subnet", true)
	o := options(c, 2*time.Minute)
	o.Auditors = map[nodeplace.Cloud]diagnose.Auditor{nodeplace.AWS: awsaudit.Provider.Folder("../testdata/aws-scale-up-new-subnet")}
	r, text := run(t, c, o)
	a := r.Answer
	newNode := c.NodeName("node-c")
	if a.Status != report.AnswerBroken || a.Source != "walk" || a.Code != verdict.ConnectTimeout || a.Condition != verdict.ConditionEndpointSet {
		t.Fatalf("answer = %s from %s: %s %s, want broken from the walk: CONNECT_TIMEOUT endpoint-set", a.Status, a.Source, a.Code, a.Condition)
	}
	if l := a.Link; l == nil || l.Host != s3Host || l.Role != verdict.RoleBlob || len(l.Nodes) != 1 || l.Nodes[0] != newNode {
		t.Errorf("link = %+v, want the S3 layer host (blob) failing on %s only", a.Link, newNode)
	}
	if len(a.Changes) == 0 || a.Changes[0].Resource != "vpce-05335335335335335" || !strings.Contains(a.Changes[0].Command, "rtb-0c0c0c0c0c0c0c0c0") {
		t.Errorf("changes = %+v, want the S3 gateway endpoint to take subnet C's route table", a.Changes)
	}
	if r.Sweep == nil || r.Sweep.Verdict.OK != 2 || r.Sweep.Verdict.Failed != 1 {
		t.Errorf("walk = %+v, want 2 groups ok and subnet C failing", r.Sweep)
	}
	if !strings.HasPrefix(text, "BROKEN   "+s3Host) {
		t.Errorf("the transcript does not open with the broken link:\n%s", text)
	}
	golden(t, "scale-up-new-subnet", answer(text))
}

// The AKS private-network scenario's identity rule: every node fails alike; the answer says
// identity, not network.
func TestDiagnoseEveryNodeNoPullScope(t *testing.T) {
	t.Parallel()
	c := story(t, "every-node-no-pull-scope", true)
	r, text := run(t, c, options(c, 2*time.Minute))
	a := r.Answer
	if a.Status != report.AnswerBroken || a.Condition != verdict.ConditionTLSIdentity {
		t.Fatalf("answer = %s %s %s, want broken tls-identity", a.Status, a.Code, a.Condition)
	}
	if !strings.Contains(a.Where, "not the network") {
		t.Errorf("where = %q, want every node alike: identity, not the network", a.Where)
	}
	if l := a.Link; l == nil || len(l.Nodes) != len(c.NodeNames()) {
		t.Errorf("link = %+v, want every node (%v)", a.Link, c.NodeNames())
	}
	golden(t, "every-node-no-pull-scope", answer(text))
}

// A healthy cluster: nothing is broken, and the answer says what was
// checked. Then the budget: with the probe's image absent from the nodes
// and unreachable, the walk's Pods cannot start; the diagnosis still ends
// within its budget, with that as the finding.
func TestDiagnoseHealthy(t *testing.T) {
	t.Parallel()
	c := story(t, "cluster-healthy", true)
	o := options(c, 2*time.Minute)
	o.Image = c.WorkloadImage()
	r, text := run(t, c, o)
	if a := r.Answer; a.Status != report.AnswerOK || r.Sweep == nil || r.Sweep.Verdict.OK != len(c.NodeNames()) {
		t.Fatalf("answer = %+v, want ok after walking every node", a)
	}
	golden(t, "cluster-healthy", answer(text))

	o = options(c, 45*time.Second)
	o.Image = c.WorkloadImage()
	o.Sweep.ProbeImage = "ghcr.io/pullpath/pullpath:not-on-any-node"
	o.Sweep.RunID = "diaglab-budget"
	r, _ = run(t, c, o)
	if a := r.Answer; a.Status != report.AnswerUnknown || !strings.Contains(strings.Join(a.Look, " "), "--image-for-probe") {
		t.Errorf("answer = %+v, want unknown: the probe's own image cannot be pulled, with how to ship it", a)
	}
}

// dockerConfig is a kubernetes.io/dockerconfigjson Secret for the lab
// registry of c with user:password.
func dockerConfig(t *testing.T, c *cluster.Cluster, ns, name, user, password string) *corev1.Secret {
	t.Helper()
	named, err := reference.ParseNormalizedNamed(c.WorkloadImage())
	if err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{reference.Domain(named): map[string]string{"auth": auth}}})
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: cfg}}
}

// One workload's own imagePullSecret is stale (yesterday's ECR token)
// while another workload, with a good secret, runs on the same nodes. With
// --use-pull-secrets the walk runs a second set of Pods in shop with
// shop/checkout-pull, the registry refuses it on both nodes, and the walk
// with the sweep's good secret pulls fully from the same nodes: the answer
// names the secret, says the network is fine, and the change is to renew
// it. Without the flag, the answer names the secret the kubelet uses
// beside the one the walk used, from the events. No Secret is read or
// copied: the walk's Pods in shop mount it by name.
func TestDiagnoseWorkloadStalePullSecret(t *testing.T) {
	t.Parallel()
	c := labtest.Require(t, "workload-stale-pull-secret")
	ctx := t.Context()
	tar, _ := labtest.NodeImage(t) // the walk's Pods run the node-side image
	if err := c.ImportImage(ctx, tar); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunWorkload(ctx); err != nil {
		t.Fatalf("the scenario's story: %v", err)
	}
	ns, name := c.WorkloadName()
	users := c.Scenario().Registry.Auth.Users
	if len(users) != 1 {
		t.Fatalf("registry users %d, want the one current token", len(users))
	}
	good := users[0]
	// The walk's own secret holds the current token, not the nodes' stale one.
	labtest.WalkNamespace(t, c, sweepNS, secretName)
	if _, err := c.Client.CoreV1().Secrets(sweepNS).Update(ctx, dockerConfig(t, c, sweepNS, secretName, good.Name, good.Password), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Beside it, on the same nodes, a workload whose secret is good runs.
	labtest.WalkNamespace(t, c, "web", "cart-pull")
	if _, err := c.Client.CoreV1().Secrets("web").Update(ctx, dockerConfig(t, c, "web", "cart-pull", good.Name, good.Password), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var zero int64
	for _, node := range c.NodeNames() {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cart-" + strings.ReplaceAll(node, ".", "-"), Namespace: "web", Labels: map[string]string{"app": "cart"}},
			Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: &zero, AutomountServiceAccountToken: new(bool),
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "cart-pull"}},
				Containers:       []corev1.Container{{Name: "cart", Image: c.WorkloadImage(), ImagePullPolicy: corev1.PullAlways}}}}
		if _, err := c.Client.CoreV1().Pods("web").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	running := func(ps []*corev1.Pod) bool {
		n := 0
		for _, p := range ps {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Running != nil {
					n++
				}
			}
		}
		return n == len(c.NodeNames())
	}
	if _, err := kwait.Wait(ctx, 90*time.Second, "web/cart running on every node with its good secret", kwait.Pods(c.Client, "web", "app=cart"), running); err != nil {
		c.SaveLogs("")
		t.Fatal(err)
	}

	o := options(c, 2*time.Minute)
	o.UsePullSecrets = true
	r, text := run(t, c, o)
	a := r.Answer
	if a.Status != report.AnswerBroken || a.Condition != verdict.ConditionTLSIdentity || a.Code != verdict.RegistryUnauthorized {
		t.Fatalf("answer = %s %s %s, want broken tls-identity REGISTRY_UNAUTHORIZED", a.Status, a.Code, a.Condition)
	}
	stale := "secret " + ns + "/" + name + "-pull"
	if !strings.Contains(a.Where, stale) || !strings.Contains(a.Where, "the network is fine") {
		t.Errorf("where = %q, want %s named and the network said fine", a.Where, stale)
	}
	if len(a.Changes) != 1 || a.Changes[0].Resource != stale || !strings.Contains(a.Changes[0].Action, "renew") {
		t.Errorf("changes = %+v, want %s to renew", a.Changes, stale)
	}
	if r.Sweep == nil || r.Sweep.Verdict.OK != len(c.NodeNames()) {
		t.Errorf("the walk with the good secret = %+v, want every node ok", r.Sweep)
	}
	if iw := r.IdentityWalk; iw == nil || iw.Namespace != ns || iw.Verdict.Failed != len(c.NodeNames()) {
		t.Errorf("the walk with the Pods' identity = %+v, want every node failing, in %s", iw, ns)
	}
	for _, leak := range []string{good.Password, c.Scenario().Node.Credentials.Password} {
		if strings.Contains(text, leak) {
			t.Errorf("the transcript holds a secret value")
		}
	}
	left, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sweep.CleanupSelector})
	if err != nil || len(left.Items) != 0 {
		t.Errorf("the identity walk left %d Pod(s) in %s (err %v), want none", len(left.Items), ns, err)
	}
	golden(t, "workload-stale-pull-secret", answer(text))

	// Without --use-pull-secrets: from the events, the secret the kubelet
	// uses beside the one the walk used.
	o = options(c, 2*time.Minute)
	o.Sweep.RunID = "diaglab-noid"
	r, _ = run(t, c, o)
	if a := r.Answer; !strings.Contains(a.Where, "The kubelet pulls with "+stale) || !strings.Contains(a.Where, "the network is fine") || r.IdentityWalk != nil {
		t.Errorf("answer without --use-pull-secrets: where %q, identity walk %v: want the secret named, the network fine, no identity walk", a.Where, r.IdentityWalk != nil)
	}
}
