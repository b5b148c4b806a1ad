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

	"github.com/pullpath/pullpath/internal/sweep/simkubelet"
	"github.com/pullpath/pullpath/internal/testenv/deploytest"
)

const (
	deployNS = deploytest.SweepNamespace
	deploySA = deploytest.SweepUser
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
	role, err := deploytest.ApplySweep(t.Context(), admin)
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

// TestRBACWorkloadIdentity: the walk with a workload's own pull identity
// runs in the workload's namespace as the ServiceAccount with exactly
// deploy/sweep/workload-identity.yaml's ClusterRole, bound there; its
// probe Pods mount the workload's pull secrets by name. Unbound, the run
// stops with one line naming the verb. No verb on secrets is granted.
func TestRBACWorkloadIdentity(t *testing.T) {
	admin := need(t)
	if _, err := deploytest.ApplySweep(t.Context(), admin); err != nil {
		t.Fatal(err)
	}
	cr, err := admin.RbacV1().ClusterRoles().Get(t.Context(), "pullpath-sweep-workload-identity", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deploy/sweep/workload-identity.yaml's ClusterRole: %v", err)
	}
	w := newWorld(t, "wlid")
	w.node(nodeSpec{name: "a", pool: "web", zone: "z1", subnet: "s1"})
	w.node(nodeSpec{name: "b", pool: "web", zone: "z2", subnet: "s2"})
	secretsSeen := make(chan string, 16)
	w.sim(func(p *corev1.Pod) simkubelet.Action {
		if role(p) == RoleProbe {
			var names []string
			for _, v := range p.Spec.Volumes {
				if v.Secret != nil {
					names = append(names, v.Secret.SecretName)
				}
			}
			secretsSeen <- strings.Join(names, ",")
		}
		return okProbe
	})
	cfg := rest.CopyConfig(shared.CP.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: deploySA, Groups: deploytest.SweepGroups}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := w.options()
	o.PullSecrets = []string{"web-pull", "web-pull-2"}

	waitAllowed(t, admin, "create", "pods", "", w.ns, false)
	_, err = Run(t.Context(), sa, o)
	if want := fmt.Sprintf("is missing in namespace %s", w.ns); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Run in %s unbound = %v, want one line containing %q", w.ns, err, want)
	}

	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pullpath-sweep-workload-identity", Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cr.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "pullpath-sweep", Namespace: deployNS}}}
	if _, err := admin.RbacV1().RoleBindings(w.ns).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range cr.Rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				waitAllowed(t, admin, v, res, r.APIGroups[0], w.ns, true)
			}
		}
	}
	for _, v := range []string{"get", "list", "watch"} {
		waitAllowed(t, admin, v, "secrets", "", w.ns, false)
	}
	r, err := Run(t.Context(), sa, o)
	if err != nil {
		t.Fatalf("Run in %s with the ClusterRole bound = %v", w.ns, err)
	}
	if r.Verdict.OK != 2 {
		t.Errorf("ok nodes = %d, want 2: %s", r.Verdict.OK, r.Verdict.Summary)
	}
	for i := 0; i < 2; i++ {
		if got := <-secretsSeen; got != "web-pull,web-pull-2" {
			t.Errorf("probe Pod's secret volumes = %q, want the workload's pull secrets in order", got)
		}
	}
	w.noLeftovers()
}
