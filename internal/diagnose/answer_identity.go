package diagnose

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CheckPullIdentity is the check id of the changes the failing Pods' own
// pull identity asks for.
const CheckPullIdentity = "pull-identity"

// identityAnswer refines the answer with the failing Pods' own pull
// identity, and reports whether the identity decided it. It is pure.
//
//  1. The walk with the Pods' identity failed on identity (401, 403, no
//     credential) while the main walk pulled, or failed on identity too:
//     the Pods' identity is the broken link; its secret is named (never
//     read), and the network is said fine when the main walk pulled.
//  2. It was not walked, the answer is identity, and the main walk pulled
//     fully from the same nodes with another identity: the secret the
//     kubelet uses is named beside the one the walk used, and the network
//     is said fine.
//  3. Whatever the answer, a secret the kubelet could not read is named.
func identityAnswer(a *report.DiagnoseAnswer, r *report.DiagnoseReport) bool {
	id := r.Identity
	if id == nil {
		return false
	}
	sw, iw := r.Sweep, r.IdentityWalk
	mainPulls := sw != nil && sw.Verdict.Status == verdict.StatusOK && sw.Verdict.OK > 0
	decided := false
	switch {
	case iw != nil && iw.Verdict.Status == verdict.StatusFail && iw.Verdict.Condition == verdict.ConditionTLSIdentity &&
		(sw == nil || mainPulls || sw.Verdict.Condition == verdict.ConditionTLSIdentity):
		var b report.DiagnoseAnswer
		fromWalk(&b, iw)
		b.Where = fmt.Sprintf("Only the Pods' own pull identity fails: the registry refuses %s (%s) %s.", secretsWords(id), b.Code, onNodes(b.Link))
		if mainPulls {
			b.Where += fmt.Sprintf(" The walk with %s pulls fully from the same %s: the network is fine.", id.WalkUsed, plural(sw.Verdict.OK, "node", "nodes"))
		}
		b.Changes = identityChanges(id, walkCredentials(iw), b.Code, r.Image)
		*a = b
		decided = true
	case iw != nil && iw.Verdict.Status == verdict.StatusOK && a.Condition == verdict.ConditionTLSIdentity:
		a.Look = append(a.Look, fmt.Sprintf("The walk with the Pods' own identity (%s) pulls fully from %s now: the identity was repaired since the events, or it differs by node (the nodes' credential providers).", secretsWords(id), plural(iw.Verdict.OK, "node", "nodes")))
	case iw == nil && !id.Walked && a.Status == report.AnswerBroken && a.Condition == verdict.ConditionTLSIdentity && mainPulls:
		a.Look = dropWalkPullsNote(a.Look, sw)
		a.Where = fmt.Sprintf("The kubelet pulls with %s; the walk used %s and pulls fully from %s: the network is fine, and the registry refuses the Pods' own identity (the events: %s).",
			secretsWords(id), id.WalkUsed, plural(sw.Verdict.OK, "node", "nodes"), a.Code)
		a.Changes = identityChanges(id, nil, a.Code, r.Image)
		a.Look = append(a.Look, fmt.Sprintf("Walk with the Pods' own identity to see it refused step by step: --use-pull-secrets (Pods in namespace %s with its imagePullSecrets; no Secret leaves it).", id.Namespace))
		decided = true
	}
	if decided && mainPulls {
		// The network is fine: the advice to audit the cloud's network
		// (its subnets and routes) is beside the point.
		for _, cloud := range nodeplace.Clouds {
			a.Look = withoutAuditHint(a.Look, cloud)
		}
	}
	for _, s := range id.Secrets {
		if s.Missing {
			a.Look = append(a.Look, fmt.Sprintf("Secret %s/%s named by the Pods' imagePullSecrets cannot be read by the kubelet (its event %s): it pulls without it.", id.Namespace, s.Name, missingSecretReason))
		}
	}
	a.Look = append(a.Look, id.Notes...)
	return decided
}

// identityProve is the proof of an identity fix: the kubelet pulling with
// the Pods' own identity on every group, then the workload restarted (the
// kubelet retries only when its back-off expires).
func identityProve(r *report.DiagnoseReport) []string {
	target := "-n " + r.Identity.Namespace
	if kind, name, ok := strings.Cut(r.Scope, " "); ok && kind != "namespace" && kind != "all" {
		if _, n, ok := strings.Cut(name, "/"); ok {
			target = kind + " " + n + " " + target
		}
	}
	return []string{
		"pullpath diagnose " + target + " --use-pull-secrets --canary",
		"then restart the workload (kubectl rollout restart): the kubelet retries a pull in back-off only when the back-off ends",
	}
}

// walkCredentials are where the identity walk's failing probes got their
// credentials, in the kubelet's order, without repeats.
func walkCredentials(iw *report.SweepReport) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range iw.Nodes {
		if n.Probe == nil || n.Status == report.SweepOK {
			continue
		}
		for _, c := range n.Probe.Credentials {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// identityChanges are the objects to change for an identity the registry
// refuses: the secrets whose credentials were tried (all the Pods'
// readable ones when the walk did not say), by name and namespace.
func identityChanges(id *report.PullIdentity, creds []string, code verdict.Code, image string) []report.Change {
	reg, repo := registryOf(image)
	info, _ := verdict.Lookup(code)
	var tried []string
	for _, c := range creds {
		if name, ok := strings.CutPrefix(c, "secret "); ok {
			tried = append(tried, name)
		}
	}
	if len(creds) == 0 {
		for _, s := range id.Secrets {
			if !s.Missing {
				tried = append(tried, s.Name)
			}
		}
	}
	renew := func(name string) string {
		return fmt.Sprintf("kubectl -n %s create secret generic %s --type=kubernetes.io/dockerconfigjson --from-file=.dockerconfigjson=CONFIG.json --dry-run=client -o yaml | kubectl apply -f -", id.Namespace, name)
	}
	var out []report.Change
	switch {
	case len(tried) == 0 && len(id.Secrets) == 0:
		out = append(out, report.Change{Resource: "serviceaccount " + id.Namespace + "/" + id.ServiceAccount, Kind: "ServiceAccount", Check: CheckPullIdentity,
			Action:  fmt.Sprintf("the Pods have no imagePullSecret and the nodes' credential providers give none for %s (%s): name a pull secret for %s in the Pod template or the ServiceAccount", reg, code, reg),
			Command: fmt.Sprintf(`kubectl -n %s patch serviceaccount %s -p '{"imagePullSecrets":[{"name":"SECRET"}]}'`, id.Namespace, id.ServiceAccount)})
	case len(tried) == 0:
		for _, s := range id.Secrets {
			out = append(out, report.Change{Resource: "secret " + id.Namespace + "/" + s.Name, Kind: "Secret", Check: CheckPullIdentity,
				Action:  fmt.Sprintf("it holds no credentials for %s (or the kubelet cannot read it): the kubelet pulls anonymously (%s); add an entry for %s", reg, code, reg),
				Command: renew(s.Name)})
		}
	case info.Cause == verdict.CauseForbidden:
		for _, n := range tried {
			out = append(out, report.Change{Resource: "secret " + id.Namespace + "/" + n, Kind: "Secret", Check: CheckPullIdentity,
				Action: fmt.Sprintf("its identity is valid but may not pull %s (%s): grant it pull on the repository at the registry, or name a secret whose identity may", repo, code)})
		}
	default:
		for _, n := range tried {
			out = append(out, report.Change{Resource: "secret " + id.Namespace + "/" + n, Kind: "Secret", Check: CheckPullIdentity,
				Action:  fmt.Sprintf("the registry refuses its credentials for %s (%s): renew them (an expired token, a rotated password)", reg, code),
				Command: renew(n)})
		}
	}
	return out
}

// registryOf is the image's registry host and repository path.
func registryOf(image string) (string, string) {
	n, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "the registry", image
	}
	return reference.Domain(n), reference.Path(n)
}

// onNodes is "on N nodes" of a link.
func onNodes(l *report.BrokenLink) string {
	if l == nil || len(l.Nodes) == 0 {
		return "on the nodes walked"
	}
	return "on " + plural(len(l.Nodes), "node", "nodes")
}

// walkPullsNote is the generic note that the walk pulls fully while the
// events fail.
func walkPullsNote(sw *report.SweepReport) string {
	return fmt.Sprintf("The walk from %s pulls fully now: either the path was repaired since the events, or the failure is the kubelet's own (its identity, the runtime's config or proxy); run the walk with --canary to have the real kubelet pull beside the probe.", plural(sw.Verdict.OK, "node", "nodes"))
}

// dropWalkPullsNote drops walkPullsNote (the identity says why).
func dropWalkPullsNote(look []string, sw *report.SweepReport) []string {
	note := walkPullsNote(sw)
	var out []string
	for _, l := range look {
		if l != note {
			out = append(out, l)
		}
	}
	return out
}
