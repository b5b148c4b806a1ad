package sweep

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/sweep/deploytest"
	"github.com/pullpath/pullpath/internal/sweep/simkubelet"
)

const (
	deployNS = deploytest.Namespace
	deploySA = deploytest.User
)

// waitAllowed waits (bounded) until the authorizer answers allowed for
// the service account, verb and resource: RBAC learns new rules a moment
// after they are written.
func waitAllowed(t *testing.T, c kubernetes.Interface, verb, resource, group, ns string, want bool) {
	t.Helper()
	res, sub, _ := strings.Cut(resource, "/")
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, err := c.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: deploySA, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + deployNS, "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Resource: res, Subresource: sub, Group: group, Namespace: ns},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s for %s: allowed=%v after 15s, want %v", verb, resource, deploySA, r.Status.Allowed, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRBACExactlyDeploySweep: a sweep runs as the ServiceAccount with
// exactly deploy/sweep/'s verbs; each verb a run needs, taken away, gives a
// one-line error naming it.
func TestRBACExactlyDeploySweep(t *testing.T) {
	admin := need(t)
	role, err := deploytest.Apply(t.Context(), admin)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, c: admin, ns: deployNS, prefix: "rbac-deploy"}
	w.node(nodeSpec{name: "a", pool: "web", zone: "z1", subnet: "s1"})
	w.node(nodeSpec{name: "b", pool: "web", zone: "z2", subnet: "s2"})
	w.sim(func(p *corev1.Pod) simkubelet.Action { return okProbe })

	cfg := rest.CopyConfig(shared.CP.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: deploySA, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + deployNS, "system:authenticated"}}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				waitAllowed(t, admin, v, res, r.APIGroups[0], deployNS, true)
			}
		}
	}
	waitAllowed(t, admin, "list", "nodes", "", "", true)
	o := w.options()
	o.Namespace = deployNS
	r, err := Run(t.Context(), sa, o)
	if err != nil {
		t.Fatalf("Run as %s with deploy/sweep's RBAC = %v", deploySA, err)
	}
	if r.Verdict.OK != 2 {
		t.Errorf("ok nodes = %d, want 2: %s", r.Verdict.OK, r.Verdict.Summary)
	}
	w.noLeftovers()

	for _, miss := range []struct{ verb, resource, group string }{
		{"create", "pods", ""}, {"watch", "pods", ""}, {"delete", "pods", ""}, {"create", "jobs", "batch"}, {"delete", "jobs", "batch"},
	} {
		t.Run(miss.verb+" "+miss.resource, func(t *testing.T) {
			cut := role.DeepCopy()
			for i, rule := range cut.Rules {
				if rule.Resources[0] == miss.resource && rule.APIGroups[0] == miss.group {
					var keep []string
					for _, v := range rule.Verbs {
						if v != miss.verb {
							keep = append(keep, v)
						}
					}
					cut.Rules[i].Verbs = keep
				}
			}
			setRules(t, admin, cut.Rules)
			defer func() {
				setRules(t, admin, role.Rules)
				waitAllowed(t, admin, miss.verb, miss.resource, miss.group, deployNS, true)
				if _, err := Cleanup(context.Background(), admin, deployNS); err != nil {
					t.Error(err)
				}
			}()
			waitAllowed(t, admin, miss.verb, miss.resource, miss.group, deployNS, false)
			_, err := Run(t.Context(), sa, o)
			want := fmt.Sprintf("RBAC verb %q on %q is missing in namespace %s", miss.verb, miss.resource, deployNS)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Run without %s %s = %v, want one line containing %q", miss.verb, miss.resource, err, want)
			}
		})
	}
}

func setRules(t *testing.T, c kubernetes.Interface, rules []rbacv1.PolicyRule) {
	t.Helper()
	r, err := c.RbacV1().Roles(deployNS).Get(t.Context(), "pullpath-sweep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Rules = rules
	if _, err := c.RbacV1().Roles(deployNS).Update(t.Context(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
