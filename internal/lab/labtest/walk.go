package labtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/selfimage"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

// PullpathImageRef is the tag pullpath's own image (the CLI) has on the
// lab's nodes.
const PullpathImageRef = "ghcr.io/pullpath/pullpath:lab"

// NodeImageRef is the tag the node-side image (pullpath-agent: probe,
// version, the agent), what sweep's and diagnose's Pods run, has on the
// lab's nodes.
const NodeImageRef = "ghcr.io/pullpath/pullpath-agent:lab"

var (
	imageOnce sync.Once
	imageTar  string
	imageErr  error

	nodeOnce sync.Once
	nodeTar  string
	nodeImg  v1.Image
	nodeErr  error
)

// PullpathImage builds pullpath's own image (the CLI, for kubectl debug)
// once per test binary, as a tarball for Cluster.ImportImage, tagged
// PullpathImageRef.
func PullpathImage(t testing.TB) string {
	t.Helper()
	imageOnce.Do(func() {
		dir, err := TempDir("pullpath-labimage-")
		if err != nil {
			imageErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
		defer cancel()
		imageTar, imageErr = selfimage.LabTarball(ctx, ModuleRoot(t), dir, PullpathImageRef)
	})
	if imageErr != nil {
		t.Fatalf("build pullpath's image: %v", imageErr)
	}
	return imageTar
}

// NodeImage builds the node-side image (what sweep's and diagnose's Pods
// run) once per test binary: a tarball for Cluster.ImportImage tagged
// NodeImageRef, and the image itself (to store in a lab registry).
func NodeImage(t testing.TB) (string, v1.Image) {
	t.Helper()
	nodeOnce.Do(func() {
		dir, err := TempDir("pullpath-nodeimage-")
		if err != nil {
			nodeErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
		defer cancel()
		nodeTar, nodeImg, nodeErr = agentimage.Program.LabTarball(ctx, ModuleRoot(t), dir, NodeImageRef)
	})
	if nodeErr != nil {
		t.Fatalf("build the node-side image: %v", nodeErr)
	}
	return nodeTar, nodeImg
}

// ModuleRoot is the folder of the go.mod above the test.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	d, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// WalkNamespace readies ns for Pods that walk the pull (sweep's, diagnose's):
// the Pod Security label hostNetwork and hostPath need, its default
// ServiceAccount (the controller-manager makes it a moment after the
// namespace; a Pod created before is refused), and, when the scenario's
// node has registry credentials, a kubernetes.io/dockerconfigjson Secret
// named secret holding them. It reports whether it made the Secret.
func WalkNamespace(t testing.TB, c *cluster.Cluster, ns, secret string) bool {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(), "serviceaccounts", ns, fields.OneTermEqualSelector("metadata.name", "default"))
	kwait.One(ctx, t, 60*time.Second, "the default ServiceAccount of "+ns, sa, func(*corev1.ServiceAccount) bool { return true })
	cr := c.Scenario().Node.Credentials
	if cr == nil {
		return false
	}
	named, err := reference.ParseNormalizedNamed(c.WorkloadImage())
	if err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(cr.Username + ":" + cr.Password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{reference.Domain(named): map[string]string{"auth": auth}}})
	if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: cfg}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return true
}

// StoreImage stores img in the registry storage at storageRoot (a lab
// run's RunDir/storage) tagged repository:tag, so that the lab's registry
// serves it and a node's kubelet pulls it through the lab's network. It
// returns the manifest's digest.
func StoreImage(t testing.TB, storageRoot, repository, tag string, img v1.Image) string {
	t.Helper()
	d, err := selfimage.StoreInLab(t.Context(), storageRoot, repository, tag, img)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// BuildTimeout bounds a build of one of pullpath's images for a test. It
// is kept apart from the test's own deadline for what it checks: with a
// cold Go cache, beside the compiles of other test binaries, a build of the
// CLI took more than the 6 minutes a helm install test gives its cluster.
const BuildTimeout = 15 * time.Minute

// ImportAgentImage builds the node-side image tagged as deploy/ names it
// (agentimage.LabTarball, within BuildTimeout, not ctx) and imports it
// into every node of c (within ctx).
func ImportAgentImage(ctx context.Context, t testing.TB, c *cluster.Cluster) {
	t.Helper()
	bctx, cancel := context.WithTimeout(t.Context(), BuildTimeout)
	defer cancel()
	tar, _, err := agentimage.LabTarball(bctx, ModuleRoot(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, tar); err != nil {
		t.Fatal(err)
	}
}
