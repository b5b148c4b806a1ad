package pull

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// walkCRIO walks the pull the way CRI-O's image library does
// (containers/image: CRI-O's PullImage, shortnames.Resolve, then for each
// candidate copy.Image's docker source, newImageSource):
//
//  1. reference: a short name becomes its candidates (an alias, or each
//     unqualified-search registry), each pulled in turn until one works;
//  2. sources: the registries.conf entry with the longest matching prefix
//     gives its mirrors that apply to this pull (by digest or by tag), then
//     its location, each with the reference rewritten to it;
//  3. each source in order: refused if its own name is blocked; TLS from
//     its certs.d folder; credentials (the kubelet's for the image's own
//     registry, the auth files for any other); ping, token, and the
//     manifest GET. The first source whose manifest loads serves the whole
//     pull; a failure after that (an index entry, a blob) fails the pull
//     without trying another source;
//  4. every source failed: the pull fails with the last one's error (the
//     primary's), the mirrors' errors beside it.
func (w *walker) walkCRIO(ctx context.Context, n *runtimecfg.CRIONode) error {
	w.crio = n
	if err := n.RegistriesErr; err != nil {
		// containers/image refuses every pull it resolves through a
		// registries.conf it cannot use.
		at := site{stage: verdict.StageReference}
		return w.failed(stepReference, time.Now(), at.fail(verdict.RegistriesConfInvalid, err, "CRI-O cannot use its registries.conf: %v", err))
	}
	cands, f, err := w.crioReference()
	if err != nil || f != nil {
		if f != nil {
			return f
		}
		return err
	}
	c := &report.HostChain{Runtime: report.RuntimeCRIO, Hosts: []report.ChainHost{}, Notes: append([]string{}, n.Notes...)}
	w.rep.Chain = c
	var last *Error
	for _, cand := range cands {
		plan, err := n.Registries.PullPlan(cand)
		if err != nil {
			return err
		}
		if plan.Entry != nil && c.File == "" {
			c.File = plan.Entry.File
		}
		w.crioSkippedWarnings(plan)
		f := w.crioCandidate(ctx, c, plan)
		if f == nil {
			return nil
		}
		last = f
	}
	return last
}

// crioReference is step 1. The error is bad input (a *ConfigError).
func (w *walker) crioReference() ([]runtimecfg.Ref, *Error, error) {
	n := w.crio
	start := time.Now()
	at := site{stage: verdict.StageReference}
	res, err := n.Registries.ResolveShortName(w.opts.Image, n.ShortNameMode)
	var se *runtimecfg.ShortNameError
	var re *runtimecfg.ReferenceError
	switch {
	case errors.As(err, &se):
		f := at.fail(verdict.ShortNameUnresolved, err, "CRI-O cannot resolve the short name %s: %s (%s; short-name mode %s: %s)", w.opts.Image, se.Message, se.Reason, n.ShortNameMode, n.ShortNameModeWhy)
		return nil, w.failed(stepReference, start, f), nil
	case errors.As(err, &re):
		return nil, w.failed(stepReference, start, at.fail(verdict.ReferenceInvalid, err, "%v", err)), nil
	case err != nil:
		return nil, nil, err
	}
	ref := res.Candidates[0]
	w.ref = ref
	w.rep.Reference = report.Reference{Registry: ref.Registry, Host: ref.Host, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest}
	detail := ref.String()
	if res.Short {
		var names []string
		for _, r := range res.Candidates {
			names = append(names, r.String())
		}
		detail = fmt.Sprintf("short name %s: %s from %s (short-name mode %s: %s)", w.opts.Image, strings.Join(names, ", then "), res.Rationale, n.ShortNameMode, n.ShortNameModeWhy)
	}
	w.step(stepReference, "", report.StepPass, "", detail, since(start), 0)
	return res.Candidates, nil, nil
}

// crioSkippedWarnings names the mirrors this pull leaves out: a
// digest-only mirror on a pull by tag (the trap of OpenShift's
// ImageContentSourcePolicy and ImageDigestMirrorSet), a tag-only one on a
// pull by digest.
func (w *walker) crioSkippedWarnings(plan runtimecfg.PullPlan) {
	for _, s := range plan.Skipped {
		host := hostOfLocation(s.Location)
		if s.Only == runtimecfg.MirrorDigestOnly {
			w.warn(verdict.MirrorDigestOnly, host, fmt.Sprintf("the mirror %s (%s) is used for pulls by digest only (%s) and %s is a pull by tag: CRI-O goes to %s instead, not to the mirror", s.Location, s.At, s.Setting, plan.Ref.String(), plan.Sources[len(plan.Sources)-1].Ref.Host))
			continue
		}
		w.warn(verdict.MirrorTagOnly, host, fmt.Sprintf("the mirror %s (%s) is used for pulls by tag only (%s) and %s is a pull by digest: CRI-O skips it", s.Location, s.At, s.Setting, plan.Ref.String()))
	}
}

func hostOfLocation(loc string) string {
	h, _, _ := strings.Cut(loc, "/")
	return h
}

// crioCandidate is steps 2 to 4 for one candidate reference.
func (w *walker) crioCandidate(ctx context.Context, c *report.HostChain, plan runtimecfg.PullPlan) *Error {
	logical := plan.Ref
	if f := w.crioPolicy(c, logical); f != nil {
		return f
	}
	for _, s := range plan.Skipped {
		c.Hosts = append(c.Hosts, report.ChainHost{Host: hostOfLocation(s.Location), URL: "https://" + hostOfLocation(s.Location) + "/v2", Role: verdict.RoleMirror,
			Capabilities: []string{runtimecfg.CapPull}, Source: s.At, Steps: []report.ChainStep{}, Outcome: report.ChainSkipped, Code: skippedCode(s),
			Detail: fmt.Sprintf("%s: not used for this pull by %s", s.Setting, map[bool]string{true: "digest", false: "tag"}[logical.Digest != ""])})
	}
	var failures []*Error
	var rows []int
	for _, src := range plan.Sources {
		rows = append(rows, w.crioRow(c, src, logical))
	}
	for i, src := range plan.Sources {
		t := &hostTry{row: &c.Hosts[rows[i]]}
		s, b, mt, f := w.crioAttempt(ctx, t, src, logical)
		if f != nil {
			t.row.Outcome, t.row.Code, t.row.Detail = report.ChainFellThrough, f.Code, f.Summary
			failures = append(failures, f)
			continue
		}
		// The source that loaded the manifest serves the whole pull.
		t.row.Outcome = report.ChainServed
		host := src.Ref.Host
		c.ServedBy = report.ServedBy{Resolve: host, Manifest: host, Blobs: host}
		w.registryOK = true
		m, f := s.manifestFrom(ctx, time.Now(), b, mt)
		if f == nil {
			f = s.blobs(ctx, m)
		}
		if f != nil {
			t.row.Code, t.row.Detail = f.Code, f.Summary+" (containers/image does not try another source once one served the manifest)"
			return f
		}
		t.step("blobs", report.StepPass, 200, "", "config and layers", 0)
		return nil
	}
	// Every source failed: the last row is where the pull ends.
	c.Hosts[rows[len(rows)-1]].Outcome = report.ChainFailed
	return w.crioFailure(plan, failures)
}

// crioPolicy is the signature policy CRI-O holds the image to (on the
// image's own reference, whichever source serves it): a policy it cannot
// load fails every pull before any packet; a reject fails the pull once
// the manifest is read ("Source image rejected"), which the walk reports
// without going there; a requirement of signatures is noted (the probe
// does not verify signatures).
func (w *walker) crioPolicy(c *report.HostChain, ref runtimecfg.Ref) *Error {
	d := w.crio.Policy(ref)
	at := site{stage: verdict.StageReference}
	switch {
	case d.Err != nil:
		return w.failed(stepReference, time.Now(), at.fail(verdict.PolicyRejected, d.Err, "containers/image cannot load CRI-O's signature policy: %v", d.Err))
	case d.Rejects():
		return w.failed(stepReference, time.Now(), at.fail(verdict.PolicyRejected, nil,
			"the signature policy %s rejects %s (scope %q: %s): CRI-O refuses it once it has read the manifest (\"Source image rejected: Running image docker://%s is rejected by policy.\"), whatever the network does", d.File, ref.String(), d.Scope, strings.Join(d.Types, ", "), ref.CRIName()))
	case d.NeedsSignature():
		c.Notes = append(c.Notes, fmt.Sprintf("the signature policy %s (scope %q) requires %s for %s: an image without a valid signature fails after its manifest is read; the probe does not verify signatures", d.File, d.Scope, strings.Join(d.Types, ", "), ref.String()))
	}
	return nil
}

func skippedCode(s runtimecfg.SkippedMirror) verdict.Code {
	if s.Only == runtimecfg.MirrorDigestOnly {
		return verdict.MirrorDigestOnly
	}
	return verdict.MirrorTagOnly
}

// crioRow adds the chain's row for src and returns its index.
func (w *walker) crioRow(c *report.HostChain, src runtimecfg.PullSource, logical runtimecfg.Ref) int {
	role := verdict.RoleRegistry
	if src.Mirror {
		role = verdict.RoleMirror
	}
	row := report.ChainHost{
		Host: src.Ref.Host, URL: "https://" + src.Ref.Host + "/v2", Role: role, Server: !src.Mirror,
		Capabilities: []string{runtimecfg.CapPull, runtimecfg.CapResolve}, Resolves: true, Fetches: true,
		Source: src.At, Steps: []report.ChainStep{}, Outcome: report.ChainNotTried, SkipVerify: src.Insecure,
	}
	if src.Ref.Repository != logical.Repository || src.Ref.Registry != logical.Registry {
		row.Repository = src.Ref.Repository
	}
	c.Hosts = append(c.Hosts, row)
	return len(c.Hosts) - 1
}

// crioAttempt is newImageSourceAttempt for one source: the session and
// the root manifest's bytes and media type, or why this source fails.
// w.ref becomes the source's reference (rewritten for a mirror): the
// requests of the pull go to its repository.
func (w *walker) crioAttempt(ctx context.Context, t *hostTry, src runtimecfg.PullSource, logical runtimecfg.Ref) (*session, []byte, string, *Error) {
	n := w.crio
	role := verdict.RoleRegistry
	if src.Mirror {
		role = verdict.RoleMirror
	}
	at := site{stage: verdict.StageRegistry, role: role, host: src.Ref.Host}
	if b := src.Blocked; b != nil {
		f := site{stage: verdict.StageReference, role: role, host: src.Ref.Host}.fail(verdict.RegistryBlocked, nil,
			"registry %s is blocked in %s: CRI-O refuses %s before sending a packet", b.Prefix, b.At(), src.Ref.String())
		t.step("blocked", report.StepFail, 0, f.Code, "blocked = true ("+b.At()+")", 0)
		return nil, nil, "", f
	}
	h, notes, err := n.SourceHost(src, logical)
	w.rep.Chain.Notes = append(w.rep.Chain.Notes, notes...)
	if err != nil {
		f := at.fail(verdict.TLSHandshakeFailed, err, "%s: containers/image cannot load its TLS files: %v", src.Ref.Host, err)
		t.step("tls", report.StepFail, 0, f.Code, f.Summary, 0)
		return nil, nil, "", f
	}
	t.h = h
	creds, err := w.crioCredentials(ctx, src, logical)
	if err != nil {
		f := site{stage: verdict.StageAuth, role: role, host: src.Ref.Host}.fail(verdict.CredentialsError, err, "getting username and password for %s: %s", src.Ref.Name(), w.sec.String(err.Error()))
		t.step("credentials", report.StepFail, 0, f.Code, f.Summary, 0)
		return nil, nil, "", f
	}
	w.sec.AddBasic(creds.Username, creds.Password)
	w.sec.Add(creds.IdentityToken, creds.RegistryToken)
	w.creds = creds
	w.ref = src.Ref

	tlsCfg, err := h.TLSConfig(w.opts.ExtraCAs)
	if err != nil {
		f := at.fail(verdict.TLSHandshakeFailed, err, "%s: containers/image cannot load its TLS files: %v", src.Ref.Host, err)
		t.step("tls", report.StepFail, 0, f.Code, f.Summary, 0)
		return nil, nil, "", f
	}
	s, f := w.crioConnect(ctx, h, tlsCfg)
	w.chainNetSteps(t)
	if f != nil {
		return nil, nil, "", f
	}
	start := time.Now()
	if f := s.ping(ctx); f != nil {
		t.step("ping", report.StepFail, 0, f.Code, f.Summary, since(start))
		return nil, nil, "", f
	}
	w.registryOK = true
	if f := s.authorize(ctx); f != nil {
		t.step("token", report.StepFail, 0, f.Code, f.Summary, since(start))
		return nil, nil, "", f
	}
	start = time.Now()
	b, mt, f := s.fetchManifest(ctx, src.Ref.Reference(), src.Ref.Digest, acceptManifests)
	if f != nil {
		t.step("get", report.StepFail, 0, f.Code, f.Summary, since(start))
		return nil, nil, "", w.failed(stepManifest, start, f)
	}
	t.step("get", report.StepPass, 200, "", firstNonEmpty(mt, "no Content-Type")+" "+src.Ref.Reference(), since(start))
	return s, b, mt, nil
}

// crioConnect is steps 2 to 4 on a source's host. containers/image pings
// https first and, for an insecure source, plain http after any failure
// of it (docker_client.go detectPropertiesHelper).
func (w *walker) crioConnect(ctx context.Context, h runtimecfg.RegistryHost, tlsCfg *tls.Config) (*session, *Error) {
	role := hostRole(h)
	base := &url.URL{Scheme: "https", Host: h.Host, Path: h.Path}
	via := "image reference"
	if h.Mirror {
		via = "registries.conf mirror (" + h.Source + ")"
	}
	reg := w.reach(ctx, base, role, via, tlsCfg)
	if reg.err != nil && h.HTTPFallback {
		plain := *base
		plain.Scheme = "http"
		base, tlsCfg = &plain, nil
		reg = w.reach(ctx, base, role, via+", plain HTTP after HTTPS failed (insecure)", nil)
	}
	if reg.err != nil {
		return nil, reg.err
	}
	return &session{w: w, reg: reg, base: base, role: role, tlsCfg: tlsCfg}, nil
}

// crioCredentials are what CRI-O sends to src: the kubelet's credentials
// (the CRI request's auth: a pull secret, the kubelet's config.json or a
// credential provider; here the probe's flags, --pull-secret,
// --docker-config or the kubelet's identity) for a source in the image's
// own registry; for any other source, and when the kubelet has none,
// containers/image's own lookup for the source's reference (auth files,
// global_auth_file). containers/image never sends the kubelet's
// credentials to a mirror on another registry (newImageSourceAttempt).
func (w *walker) crioCredentials(ctx context.Context, src runtimecfg.PullSource, logical runtimecfg.Ref) (runtimecfg.Credentials, error) {
	if src.Ref.Registry == logical.Registry {
		var kc runtimecfg.Credentials
		var err error
		switch {
		case w.opts.Username != "" || w.opts.Password != "":
			kc = runtimecfg.Credentials{Username: w.opts.Username, Password: w.opts.Password, Source: "flags"}
		case w.opts.Credentials != nil:
			kc, err = w.opts.Credentials(ctx, logical.Host)
		case w.opts.DockerConfig != "":
			kc, err = runtimecfg.LoadCredentialsContext(ctx, w.opts.DockerConfig, logical.Host)
		}
		if err != nil {
			return kc, err
		}
		if kc.Username != "" {
			return kc, nil // CRI-O passes them on only with a username
		}
	}
	return runtimecfg.ContainersCredentials(ctx, w.crio.AuthOptions(), src.Ref)
}

// crioFailure is the pull's failure when every source failed: the last
// source's (containers/image returns the primary's error, the mirrors'
// beside it), unless the last is blocked by design and a mirror failed
// for a reason of its own: that mirror is then the broken link.
func (w *walker) crioFailure(plan runtimecfg.PullPlan, failures []*Error) *Error {
	last := failures[len(failures)-1]
	if last.Code == verdict.RegistryBlocked {
		for i := len(failures) - 2; i >= 0; i-- {
			if failures[i].Code != verdict.RegistryBlocked {
				f := *failures[i]
				f.Summary += "; the registry itself is blocked (" + last.Summary + "), so this mirror is the only way"
				return &f
			}
		}
	}
	f := *last
	if len(failures) > 1 {
		var also []string
		for _, m := range failures[:len(failures)-1] {
			also = append(also, m.Host+": "+string(m.Code))
		}
		f.Summary += " (mirrors also failed: " + strings.Join(also, ", ") + ")"
	}
	for _, s := range plan.Skipped {
		if s.Only == runtimecfg.MirrorDigestOnly {
			f.Summary += fmt.Sprintf("; the mirror %s (%s) would be used only for a pull by digest (%s): this pull is by tag", s.Location, s.At, s.Setting)
		}
	}
	return &f
}
