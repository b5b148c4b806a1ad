package diagnose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// maxIdentityLookups bounds the Pod Gets made to learn the failing Pods'
// pull identity.
const maxIdentityLookups = 16

// missingSecretReason is the kubelet's event when a Pod's imagePullSecret
// cannot be read (pkg/kubelet getPullSecretsForPod): it pulls without it.
const missingSecretReason = "FailedToRetrieveImagePullSecret"

// identity reads the pull identity the kubelet builds for the failing
// Pods, as it builds it (pkg/kubelet getPullSecretsForPod,
// pkg/credentialprovider, the ServiceAccount admission plugin):
//
//  1. the Pod's spec.imagePullSecrets, in order; the ServiceAccount
//     admission copied its ServiceAccount's there when the Pod named none
//     at creation, so the Pod's list is the kubelet's whole list;
//  2. a secret the kubelet cannot read is skipped, with the Pod's event
//     FailedToRetrieveImagePullSecret naming it;
//  3. then the nodes' credential provider plugins (matched by image),
//     which the walk's probe finds on each node.
//
// The failing Pods are grouped by identity (namespace, ServiceAccount,
// secrets); the one most of them share is the answer's. Nothing is read of
// a Secret: only names.
func (d *diagnosis) identity(ctx context.Context) {
	g := d.group
	if g == nil || len(g.FailingPods) == 0 {
		return
	}
	start := time.Now()
	type key struct{ ns, sa, secrets string }
	var order []key
	pods := map[key][]*corev1.Pod{}
	var firstErr error
	for i, ref := range g.FailingPods {
		if i >= maxIdentityLookups {
			break
		}
		ns, name, ok := strings.Cut(ref, "/")
		if !ok {
			continue
		}
		p, err := d.o.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		var names []string
		for _, s := range p.Spec.ImagePullSecrets {
			if s.Name != "" { // the kubelet ignores an empty name
				names = append(names, s.Name)
			}
		}
		k := key{p.Namespace, serviceAccountOf(p), strings.Join(names, ",")}
		if _, seen := pods[k]; !seen {
			order = append(order, k)
		}
		pods[k] = append(pods[k], p)
	}
	if len(order) == 0 {
		s := d.step("identity", report.DiagnoseFailed, "the failing Pods' pull identity could not be read", time.Since(start))
		if firstErr != nil {
			s.Reason = units.OneLine(firstErr.Error())
		}
		s.Next = "kubectl get pod POD -n NAMESPACE -o jsonpath='{.spec.imagePullSecrets}'"
		return
	}
	best := order[0]
	for _, k := range order[1:] {
		if len(pods[k]) > len(pods[best]) {
			best = k
		}
	}
	ps := pods[best]
	id := &report.PullIdentity{Namespace: best.ns, ServiceAccount: best.sa}
	for _, p := range ps {
		id.Pods = append(id.Pods, p.Namespace+"/"+p.Name)
	}
	for k, x := range pods {
		if k != best {
			id.Others += len(x)
		}
	}
	for _, n := range strings.Split(best.secrets, ",") {
		if n != "" {
			id.Secrets = append(id.Secrets, report.PullSecretRef{Name: n})
		}
	}
	d.missingSecrets(ctx, id, ps[0])
	d.serviceAccountSecrets(ctx, id)
	d.r.Identity = id
	d.step("identity", report.DiagnoseRan, identityWords(id), time.Since(start))
}

func serviceAccountOf(p *corev1.Pod) string {
	if p.Spec.ServiceAccountName != "" {
		return p.Spec.ServiceAccountName
	}
	return "default"
}

// missingSecrets marks the secrets the kubelet said it could not read for
// the Pod (its FailedToRetrieveImagePullSecret events).
func (d *diagnosis) missingSecrets(ctx context.Context, id *report.PullIdentity, p *corev1.Pod) {
	if len(id.Secrets) == 0 {
		return
	}
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": p.Name, "reason": missingSecretReason}.AsSelector().String()
	l, err := d.o.Client.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return
	}
	for _, e := range l.Items {
		if e.InvolvedObject.UID != "" && e.InvolvedObject.UID != p.UID {
			continue
		}
		for _, n := range MissingSecrets(e.Message) {
			for i := range id.Secrets {
				if id.Secrets[i].Name == n {
					id.Secrets[i].Missing = true
				}
			}
		}
	}
}

// MissingSecrets reads the secret names of the kubelet's message "Unable
// to retrieve some image pull secrets (a, b); attempting to pull the image
// may not succeed."
func MissingSecrets(msg string) []string {
	_, rest, ok := strings.Cut(msg, "image pull secrets (")
	if !ok {
		return nil
	}
	list, _, ok := strings.Cut(rest, ")")
	if !ok {
		return nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// serviceAccountSecrets says where the Pod's secrets came from: its
// ServiceAccount's list (the admission copied it, or the Pod names the
// same), or the Pod's own; and when the ServiceAccount lists secrets the
// Pod does not have (it was created before they were added), a new Pod
// would pull with them. A ServiceAccount that cannot be read leaves From
// empty.
func (d *diagnosis) serviceAccountSecrets(ctx context.Context, id *report.PullIdentity) {
	sa, err := d.o.Client.CoreV1().ServiceAccounts(id.Namespace).Get(ctx, id.ServiceAccount, metav1.GetOptions{})
	if err != nil {
		return
	}
	var saNames, podNames []string
	for _, s := range sa.ImagePullSecrets {
		saNames = append(saNames, s.Name)
	}
	for _, s := range id.Secrets {
		podNames = append(podNames, s.Name)
	}
	switch {
	case len(podNames) > 0 && slices.Equal(saNames, podNames):
		id.From = "serviceaccount"
	case len(podNames) == 0 && len(saNames) > 0:
		id.From = "pod"
		id.Notes = append(id.Notes, fmt.Sprintf("ServiceAccount %s/%s lists %s, but the Pods were created before: they pull without them; a new Pod gets them (kubectl rollout restart)",
			id.Namespace, id.ServiceAccount, quoteList(saNames)))
	default:
		id.From = "pod"
	}
}

// identityWords is the identity step's summary: what the kubelet pulls
// with, and what the walk uses.
func identityWords(id *report.PullIdentity) string {
	var b strings.Builder
	verb := "pull"
	if len(id.Pods) == 1 {
		verb = "pulls"
	}
	fmt.Fprintf(&b, "%s %s with %s", plural(len(id.Pods), "failing pod", "failing pods"), verb, secretsWords(id))
	b.WriteString(", then the nodes' credential providers")
	if id.Others > 0 {
		fmt.Fprintf(&b, "; %s with another identity", plural(id.Others, "pod", "pods"))
	}
	return b.String()
}

// secretsWords names the identity's secrets and where they came from.
func secretsWords(id *report.PullIdentity) string {
	if len(id.Secrets) == 0 {
		return "no imagePullSecret"
	}
	var names []string
	for _, s := range id.Secrets {
		n := "secret " + id.Namespace + "/" + s.Name
		if s.Missing {
			n += " (missing: the kubelet skips it)"
		}
		names = append(names, n)
	}
	w := strings.Join(names, ", ")
	switch id.From {
	case "serviceaccount":
		w += " (from ServiceAccount " + id.ServiceAccount + ")"
	case "pod":
		w += " (the Pod's imagePullSecrets)"
	}
	return w
}

func quoteList(xs []string) string { return strings.Join(xs, ", ") }
