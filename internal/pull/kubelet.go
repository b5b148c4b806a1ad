package pull

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ProbeAsKubelet walks the pull with the kubelet's identity: the
// credentials the kubelet would hand the runtime for the image (pull
// secrets, then credential provider plugins), one walk per credential in
// the kubelet's order until one pulls, or one anonymous walk when there is
// none (pkg/kubelet/kuberuntime PullImage). The report is the walk that
// pulled, else the one that got furthest, with every attempt and every
// plugin run in Identity. A plugin that fails is its own finding
// (CREDENTIALS_ERROR, stage auth) when no credential pulls: the kubelet
// goes on without it, so the pull is refused for credentials the plugin
// should have given. The error is for bad input only.
func ProbeAsKubelet(ctx context.Context, opts Options, id *runtimecfg.KubeletIdentity, ident report.ProbeIdentity) (*report.ProbeReport, error) {
	sec := redact.NewSecrets()
	if id.Plugins != nil {
		// This walk's secrets hook, for this walk only: a long-running
		// caller (the node agent) keeps one runner across walks, and a
		// hook left chained would grow with every walk.
		prev := id.Plugins.Secrets
		id.Plugins.Secrets = func(v ...string) {
			sec.Add(v...)
			if prev != nil {
				prev(v...)
			}
		}
		defer func() { id.Plugins.Secrets = prev }()
		for _, p := range id.Plugins.Config.Providers {
			for _, e := range p.Env {
				if secretEnv(e) {
					sec.Add(e.Value)
				}
			}
		}
	}
	ev, err := id.Credentials(ctx, opts.Image)
	if err != nil {
		return nil, err
	}
	for _, ps := range id.PullSecrets {
		ident.PullSecrets = append(ident.PullSecrets, ps.File)
		for _, e := range ps.Entries {
			sec.AddBasic(e.Creds.Username, e.Creds.Password)
		}
	}
	for _, r := range ev.Plugins {
		p := report.ProbePlugin{Name: r.Provider, Path: r.Path, OK: true, Cached: r.Cached, CacheKey: r.CacheKey, Patterns: r.Keys}
		if r.TTL > 0 {
			p.CacheTTL = r.TTL.String()
		}
		ident.Plugins = append(ident.Plugins, p)
	}
	for _, pe := range ev.PluginErrs {
		ident.Plugins = append(ident.Plugins, report.ProbePlugin{Name: pe.Plugin, Path: pe.Path, Error: pe.Error(), Stderr: pe.Stderr})
	}
	if id.Plugins != nil {
		for _, p := range id.Plugins.Config.Providers {
			if len(p.TokenAttributes) > 0 && p.Matches(mustRepo(opts.Image)) {
				ident.Notes = append(ident.Notes, fmt.Sprintf("provider %s asks for the Pod's service account token (tokenAttributes): the probe runs it without one, as for a Pod without a service account", p.Name))
			}
		}
		if gaps := id.Plugins.Config.ECRDualStackGaps(mustRepo(opts.Image)); len(gaps) > 0 {
			registry, _, _ := strings.Cut(mustRepo(opts.Image), "/")
			ident.Notes = append(ident.Notes, fmt.Sprintf("%s is ECR's dual-stack name and the matchImages of %s do not cover it (add *.dkr-ecr.*.on.aws): the kubelet runs no credential provider for it and pulls without credentials, while the IPv4 name %s would get them", registry, strings.Join(gaps, ", "), verdict.ECRIPv4Name(registry)))
		}
	}

	creds := ev.Credentials
	if len(creds) == 0 {
		creds = []runtimecfg.Credentials{{Source: "anonymous: the kubelet has no credential for this image"}}
	}
	var best *report.ProbeReport
	bestN := 0
	for i, c := range creds {
		sec.AddBasic(c.Username, c.Password)
		o := opts
		c := c
		o.Username, o.Password, o.DockerConfig = "", "", ""
		o.Credentials = func(context.Context, string) (runtimecfg.Credentials, error) { return c, nil }
		rep, err := Probe(ctx, o)
		if err != nil {
			return nil, err
		}
		from := c.Origin
		if c.Anonymous() {
			from = "anonymous"
		}
		ident.Attempts = append(ident.Attempts, report.ProbeAttempt{N: i + 1, Credentials: c.String(), From: from, Code: rep.Verdict.Code, Summary: rep.Verdict.Summary})
		if best == nil || rep.Verdict.Status == verdict.StatusOK || walkProgress(rep.Verdict) > walkProgress(best.Verdict) {
			best, bestN = rep, i
		}
		if rep.Verdict.Status == verdict.StatusOK || ctx.Err() != nil {
			break
		}
	}
	ident.Attempts[bestN].Chosen = true
	if len(ev.PluginErrs) > 0 {
		pe := ev.PluginErrs[0]
		if best.Verdict.Status != verdict.StatusOK {
			best.Verdict = verdict.Decide(verdict.Outcome{Code: verdict.CredentialsError, Stage: verdict.StageAuth, Host: best.Reference.Host,
				Summary: fmt.Sprintf("%s: the kubelet pulls without the credentials it should have given (then: %s, %s)", pe.Error(), best.Verdict.Code, best.Verdict.Summary)})
			best.Verdict.Advice = append(best.Verdict.Advice,
				"Run the plugin as the kubelet does and read its stderr (identity.plugins in -o json): ECR's ecr-credential-provider needs the node role's ecr:GetAuthorizationToken and the instance metadata service; ACR's acr-credential-provider needs the kubelet identity of /etc/kubernetes/azure.json and Microsoft Entra ID.")
		} else {
			best.Warnings = append(best.Warnings, report.Warning{Code: verdict.CredentialsError, Message: pe.Error() + ": the pull worked with other credentials"})
		}
	}
	best.Identity = &ident
	sec.Scrub(best)
	return best, nil
}

// walkProgress ranks how far a walk got, as explain ranks the attempts of
// the kubelet's aggregate.
func walkProgress(v verdict.Verdict) int {
	info, _ := verdict.Lookup(v.Code)
	switch {
	case v.Status == verdict.StatusOK:
		return 100
	case v.Stage == verdict.StageBlob:
		return 60
	case info.Cause == verdict.CauseNotFound, info.Cause == verdict.CausePlatform:
		return 50
	case info.Cause == verdict.CauseForbidden:
		return 40
	case info.Cause == verdict.CauseRateLimit, v.Code == verdict.RegistryServerError, v.Code == verdict.HTTPBadResponse:
		return 30
	case info.Cause == verdict.CauseUnauthorized && v.Stage != verdict.StageAuth:
		return 22
	case info.Cause == verdict.CauseUnauthorized:
		return 20
	}
	return 15
}

// secretEnv: a plugin env variable whose value is kept out of every
// output (a client secret, a token, a key). Every env value is also
// scrubbed from the plugin's stderr (runtimecfg).
func secretEnv(e runtimecfg.ExecEnvVar) bool {
	return reSecretEnv.MatchString(e.Name) || len(e.Value) >= 20
}

var reSecretEnv = regexp.MustCompile(`(?i)secret|token|pass|key|cred|auth|cert`)

func mustRepo(image string) string {
	r, _ := runtimecfg.KubeletImage(image)
	return r
}
