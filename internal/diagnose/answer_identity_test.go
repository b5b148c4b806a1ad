package diagnose

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const ecrRegistry = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com"

// explainIdentity: every replica of shop/web fails 401 at the registry.
func explainIdentity() *report.ExplainReport {
	return &report.ExplainReport{Scope: "deployment shop/web", Groups: []report.ExplainGroup{{
		Image: ecrImage, Code: verdict.RegistryUnauthorized, Condition: verdict.ConditionTLSIdentity, Cause: verdict.CauseUnauthorized,
		Endpoint: ecrRegistry, Findings: 2, FailingPods: []string{"shop/web-a", "shop/web-b"}, Pattern: "all-nodes",
		Verdict: "Every node fails the same way. Identity or the registry, not the network.",
		Nodes: []report.ExplainNode{
			{Name: "node-a", Status: report.NodeStatusFailed},
			{Name: "node-b", Status: report.NodeStatusFailed},
		},
	}}}
}

// walk is a sweep of node-a and node-b, each ok or failing with v.
func walk(ns string, creds []string, fail *verdict.Verdict) *report.SweepReport {
	ok := verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}
	sw := &report.SweepReport{Namespace: ns, Groups: []report.SweepGroup{{Key: "a"}, {Key: "b"}}}
	for _, n := range []string{"node-a", "node-b"} {
		node := report.SweepNode{PlannedNode: report.PlannedNode{Name: n}, Status: report.SweepOK, Verdict: ok,
			Probe: &report.SweepResult{Status: report.SweepOK, Verdict: ok, Credentials: creds}}
		if fail != nil {
			node.Status, node.Verdict = report.SweepFail, *fail
			node.Probe = &report.SweepResult{Status: report.SweepFail, Verdict: *fail, Credentials: creds,
				Hops: []report.SweepHop{{Host: fail.Endpoint, Role: fail.Role, Status: report.StepFail, Step: "manifest", Code: fail.Code}}}
		}
		sw.Nodes = append(sw.Nodes, node)
	}
	if fail != nil {
		sw.Verdict = report.SweepVerdict{Status: verdict.StatusFail, Pattern: "all-nodes", Condition: fail.Condition, Code: fail.Code,
			Endpoint: fail.Endpoint, Role: fail.Role, Summary: "every node fails " + string(fail.Code), Failed: 2}
	} else {
		sw.Verdict = report.SweepVerdict{Status: verdict.StatusOK, Pattern: "all-ok", Summary: "every node pulls", OK: 2}
	}
	return sw
}

func unauthorized() *verdict.Verdict {
	return &verdict.Verdict{Status: verdict.StatusFail, Code: verdict.RegistryUnauthorized, Condition: verdict.ConditionTLSIdentity,
		Cause: verdict.CauseUnauthorized, Endpoint: ecrRegistry, Role: verdict.RoleRegistry, Summary: ecrRegistry + " (registry) refused the credentials (401)"}
}

func shopIdentity() *report.PullIdentity {
	return &report.PullIdentity{Namespace: "shop", ServiceAccount: "default", From: "pod",
		Secrets: []report.PullSecretRef{{Name: "web-pull"}}, Pods: []string{"shop/web-a", "shop/web-b"},
		WalkUsed: "secret pullpath-sweep/registry-creds"}
}

// The walk with the Pods' own secret is refused on every node while the
// walk with another identity pulls fully from the same nodes: the answer
// names the secret (namespace/name), says the network is fine, and asks
// to renew that secret, with the proof a walk with the Pods' identity.
func TestAnswerTheWorkloadsOwnSecretIsStale(t *testing.T) {
	id := shopIdentity()
	id.Walked = true
	r := &report.DiagnoseReport{Scope: "deployment shop/web", Image: ecrImage, Explain: explainIdentity(),
		Sweep: walk("pullpath-sweep", []string{"secret registry-creds"}, nil), Identity: id,
		IdentityWalk: walk("shop", []string{"secret web-pull"}, unauthorized())}
	// the probe's advice for an identity failure on AWS, as on the lab cluster
	r.IdentityWalk.Verdict.Advice = []string{"The pull identity: imagePullSecret or node credentials.",
		verdict.AWSAuditHint}
	a := Answer(r, []cloudNeed{{Cloud: nodeplace.AWS, Nodes: 2, Next: byHand(nodeplace.AWS)}})
	if a.Status != report.AnswerBroken || a.Source != "walk" || a.Code != verdict.RegistryUnauthorized || a.Condition != verdict.ConditionTLSIdentity {
		t.Fatalf("Answer = %s from %s: %s %s, want broken from the walk: REGISTRY_UNAUTHORIZED tls-identity", a.Status, a.Source, a.Code, a.Condition)
	}
	for _, want := range []string{"secret shop/web-pull", "the network is fine", "secret pullpath-sweep/registry-creds", "same 2 nodes"} {
		if !strings.Contains(a.Where, want) {
			t.Errorf("Where = %q, want %q", a.Where, want)
		}
	}
	if len(a.Changes) != 1 || a.Changes[0].Resource != "secret shop/web-pull" || a.Changes[0].Check != CheckPullIdentity ||
		!strings.Contains(a.Changes[0].Action, "renew") || !strings.Contains(a.Changes[0].Command, "kubectl -n shop create secret generic web-pull") {
		t.Errorf("Changes = %+v, want secret shop/web-pull to renew, with the command", a.Changes)
	}
	if l := strings.Join(a.Look, " "); strings.Contains(l, "pullpath aws collect") || strings.Contains(l, "pullpath aws audit") || !strings.Contains(l, "The pull identity") {
		t.Errorf("Look = %q: an identity answer needs no cloud audit", a.Look)
	}
	if len(a.Prove) == 0 || a.Prove[0] != "pullpath diagnose deployment web -n shop --use-pull-secrets --canary" {
		t.Errorf("Prove = %q, want the walk with the Pods' own identity", a.Prove)
	}
	if a.Link == nil || a.Link.Host != ecrRegistry || len(a.Link.Nodes) != 2 {
		t.Errorf("Link = %+v, want the registry on both nodes", a.Link)
	}
}

// Not walked with the Pods' identity: the events say 401 and the walk
// with another identity pulls fully; the answer names the secret the
// kubelet uses beside the one the walk used, and offers --use-pull-secrets.
func TestAnswerIdentityNotWalked(t *testing.T) {
	id := shopIdentity()
	r := &report.DiagnoseReport{Scope: "deployment shop/web", Image: ecrImage, Explain: explainIdentity(),
		Sweep: walk("pullpath-sweep", []string{"secret registry-creds"}, nil), Identity: id}
	a := Answer(r, nil)
	if a.Status != report.AnswerBroken || a.Source != "read" || a.Condition != verdict.ConditionTLSIdentity {
		t.Fatalf("Answer = %s from %s %s, want broken from the events, tls-identity", a.Status, a.Source, a.Condition)
	}
	for _, want := range []string{"The kubelet pulls with secret shop/web-pull", "the walk used secret pullpath-sweep/registry-creds", "the network is fine"} {
		if !strings.Contains(a.Where, want) {
			t.Errorf("Where = %q, want %q", a.Where, want)
		}
	}
	look := strings.Join(a.Look, "\n")
	if !strings.Contains(look, "--use-pull-secrets") || strings.Contains(look, "pulls fully now") {
		t.Errorf("Look = %q, want --use-pull-secrets offered and the generic walk-pulls note gone", a.Look)
	}
	if len(a.Changes) != 1 || a.Changes[0].Resource != "secret shop/web-pull" {
		t.Errorf("Changes = %+v, want secret shop/web-pull", a.Changes)
	}
}

// The other identity problems, each named by the object to change.
func TestAnswerIdentityChanges(t *testing.T) {
	forbidden := &verdict.Verdict{Status: verdict.StatusFail, Code: verdict.AuthForbidden, Condition: verdict.ConditionTLSIdentity,
		Cause: verdict.CauseForbidden, Endpoint: ecrRegistry, Role: verdict.RoleAuth, Summary: "insufficient_scope"}
	for _, tc := range []struct {
		name    string
		secrets []report.PullSecretRef
		creds   []string
		fail    *verdict.Verdict
		want    string // the first change's resource
		action  string
	}{
		{"anonymous: no entry for the registry", []report.PullSecretRef{{Name: "other-registry"}}, []string{"anonymous"}, unauthorized(), "secret shop/other-registry", "holds no credentials for " + ecrRegistry},
		{"no secret at all", nil, []string{"anonymous"}, unauthorized(), "serviceaccount shop/default", "have no imagePullSecret"},
		{"valid identity, no pull right", []report.PullSecretRef{{Name: "web-pull"}}, []string{"secret web-pull"}, forbidden, "secret shop/web-pull", "may not pull shop/web"},
		{"two secrets, the second tried", []report.PullSecretRef{{Name: "gone", Missing: true}, {Name: "web-pull"}}, []string{"secret web-pull"}, unauthorized(), "secret shop/web-pull", "refuses its credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := shopIdentity()
			id.Secrets, id.Walked = tc.secrets, true
			r := &report.DiagnoseReport{Scope: "deployment shop/web", Image: ecrImage, Explain: explainIdentity(),
				Sweep: walk("pullpath-sweep", nil, nil), Identity: id, IdentityWalk: walk("shop", tc.creds, tc.fail)}
			a := Answer(r, nil)
			if len(a.Changes) == 0 || a.Changes[0].Resource != tc.want || !strings.Contains(a.Changes[0].Action, tc.action) {
				t.Fatalf("Changes = %+v, want %s first: %q", a.Changes, tc.want, tc.action)
			}
			for _, s := range tc.secrets {
				if s.Missing && !strings.Contains(strings.Join(a.Look, " "), "Secret shop/"+s.Name+" named by the Pods' imagePullSecrets cannot be read") {
					t.Errorf("Look = %q, want the missing secret %s named", a.Look, s.Name)
				}
			}
		})
	}
}

// A network failure stays the answer: the Pods' own walk failing the same
// way adds nothing, and nothing names a secret.
func TestAnswerNetworkBeatsIdentity(t *testing.T) {
	id := shopIdentity()
	id.Walked = true
	r := &report.DiagnoseReport{Scope: "deployment shop/web", Image: ecrImage, Explain: explainScaleUp(), Sweep: sweepScaleUp(), Identity: id,
		IdentityWalk: sweepScaleUp()}
	a := Answer(r, nil)
	if a.Condition != verdict.ConditionEndpointSet || a.Code != verdict.ConnectTimeout {
		t.Fatalf("Answer = %s %s, want the network's CONNECT_TIMEOUT endpoint-set", a.Code, a.Condition)
	}
	for _, c := range a.Changes {
		if c.Check == CheckPullIdentity {
			t.Errorf("change %+v names the identity for a network failure", c)
		}
	}
}

func TestMissingSecrets(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"Unable to retrieve some image pull secrets (regcred); attempting to pull the image may not succeed.", "regcred"},
		{"Unable to retrieve some image pull secrets (a, b-2); attempting to pull the image may not succeed.", "a,b-2"},
		{"something else", ""},
	} {
		if got := strings.Join(MissingSecrets(tc.msg), ","); got != tc.want {
			t.Errorf("MissingSecrets(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
