// Package explain reads what the kubelet and the container runtime say about
// a failed pull and maps it to pullpath's vocabulary (internal/verdict): the
// stage, cause, code and repair direction, with the endpoint that failed.
//
// Classify is pure and bounded: it reads at most MaxMessage bytes, runs an
// ordered table of small matchers (Rules) over the message, and never panics.
// Parse reads offline input (kubectl get events -o json, kubectl describe pod
// text, or one message per line); Correlate groups findings by image and
// compares failing and healthy nodes. The cluster view lives in
// internal/explain/cluster.
package explain

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Classification is what one message says about a pull.
type Classification struct {
	Image      string            `json:"image,omitempty"`
	Registry   string            `json:"registry,omitempty"`   // registry host of the image (docker.io for Docker Hub)
	Host       string            `json:"host,omitempty"`       // the endpoint that failed (may be an auth or blob host)
	Address    string            `json:"address,omitempty"`    // ip:port of a failed dial
	Nameserver string            `json:"nameserver,omitempty"` // the nameserver of a failed lookup
	Method     string            `json:"method,omitempty"`
	URL        string            `json:"url,omitempty"` // redacted
	Step       string            `json:"step,omitempty"`
	Role       verdict.Role      `json:"role,omitempty"`
	Stage      verdict.Stage     `json:"stage,omitempty"`
	Cause      verdict.Cause     `json:"cause,omitempty"`
	Code       verdict.Code      `json:"code,omitempty"`
	Condition  verdict.Condition `json:"condition,omitempty"`
	Summary    string            `json:"summary,omitempty"`
	Advice     []string          `json:"advice,omitempty"`
	Ambiguous  bool              `json:"ambiguous,omitempty"`
	Rule       string            `json:"rule,omitempty"` // the id of the rule that matched; "" when nothing did
	// Progress is what a runtime that gave up on a stalled pull says of it:
	// its timeout and the last progress it saw (progress.go).
	Progress string `json:"progress,omitempty"`
	// Attempts are the attempts of a multi-attempt message (the kubelet's
	// aggregate over its credentials, CRI-O's mirrors), each classified;
	// the classification is the one marked Chosen.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// Failed reports whether the message is a pull failure.
func (c Classification) Failed() bool { return c.Rule != "" && c.Code != verdict.OK }

// Verdict returns the classification as a verdict (what probe reports).
func (c Classification) Verdict() verdict.Verdict {
	if c.Rule == "" {
		return verdict.Verdict{Status: verdict.StatusOK, Cause: verdict.CauseOther, Code: "", Summary: "no pull failure recognized"}
	}
	if c.Code == verdict.OK {
		return verdict.Verdict{Status: verdict.StatusOK, Cause: verdict.CauseOK, Code: verdict.OK, Summary: c.Summary}
	}
	return verdict.Verdict{
		Status: verdict.StatusFail, Stage: c.Stage, Cause: c.Cause, Condition: c.Condition,
		Code: c.Code, Endpoint: c.Host, Role: c.Role, Summary: c.Summary, Advice: c.Advice,
	}
}

// Classify reads one kubelet event message or runtime log line. A message
// that says nothing about a pull has Rule "". It never panics.
func Classify(msg string) (c Classification) {
	defer func() {
		// The classifier must never take a process down; a bug here
		// degrades to "not recognized". FuzzClassify calls classify
		// directly so that such a bug is still found.
		if r := recover(); r != nil {
			c = Classification{}
		}
	}()
	return classify(msg)
}

func classify(msg string) (c Classification) {
	m := normalize(msg)
	if m == "" {
		return c
	}
	lower := strings.ToLower(m)
	if strings.Contains(lower, "failed to push") && !strings.Contains(lower, "pull") {
		return c // a push, not a pull
	}
	if strings.HasPrefix(m, "[") || strings.Contains(m, ": [") {
		if head, items := splitAggregate(m, lower); len(items) > 1 {
			return classifyAttempts(head, items, nil, true)
		}
	}
	if strings.Contains(lower, "(mirrors also failed: ") {
		if head, items, sources := splitMirrors(m, lower); len(items) > 1 {
			return classifyAttempts(head, items, sources, false)
		}
	}
	return classifyOne(m, credentialsOf(lower, false))
}

// classifyOne classifies one attempt (normalized text); cred says whether
// it presented credentials, for the scope rule.
func classifyOne(m, cred string) (c Classification) {
	lower := strings.ToLower(m)
	tv := newTextView(m, lower)
	var rule *Rule
	for i := range Rules {
		if Rules[i].match(tv) {
			rule = &Rules[i]
			break
		}
	}
	if rule == nil {
		return c
	}

	c.Rule = rule.ID
	c.Image = extractImage(tv)
	c.Registry = registryOf(c.Image)
	req := extractRequest(tv)
	c.Method = req.Method
	if req.URL != nil {
		c.URL = redact.URL(req.URL)
	}
	c.Address = extractDial(m)
	lookupHost, ns := extractLookup(m)
	c.Nameserver = ns

	// The endpoint: the host of the innermost request, else the name that
	// failed to resolve, else the registry.
	switch {
	case req.Host != "":
		c.Host = req.Host
	case lookupHost != "":
		c.Host = lookupHost
	default:
		c.Host = c.Registry
	}
	if c.Registry == "" && req.Path != "" && req.Path != "blobs" && req.Path != "token" {
		c.Registry = req.Host
	}

	// The step the message shows wins over a rule's default, except for
	// the reference and unpack steps, which no request can contradict.
	c.Step = stepOf(lower, req)
	if c.Step == "" || rule.Step == StepReference || rule.Step == StepUnpack || rule.Step == StepRun {
		c.Step = rule.Step
	}
	code := rule.code(c.Step)
	c.Code = code
	c.Ambiguous = rule.Ambiguous
	if code == verdict.OK {
		c.Cause = verdict.CauseOK
		c.Summary = rule.Says
		return c
	}

	stage, role := stageOf(c.Step, code)
	c.Role = role
	// Reaching the token service or a blob means the registry host answered.
	registryOK := stage == verdict.StageAuth || stage == verdict.StageBlob
	if c.Host != "" && c.Registry != "" && sameHost(c.Host, c.Registry) && role != verdict.RoleRegistry {
		// The registry's own host serves tokens or blobs too: a network
		// failure there is the registry's path, not another endpoint's.
		registryOK = false
	}
	v := verdict.Decide(verdict.Outcome{Code: code, Stage: stage, Role: role, Host: c.Host, RegistryOK: registryOK})
	c.Stage, c.Cause, c.Condition = v.Stage, v.Cause, v.Condition
	c.Progress = progressOf(tv)
	c.Summary = summarize(rule.Says, c)
	c.Advice = append(v.Advice, rule.Advice...)
	if hint := publicAddressHint(c); hint != "" {
		c.Advice = append(c.Advice, hint)
	}
	if hint := familyHint(c, lower); hint != "" {
		c.Advice = append(c.Advice, hint)
	}
	if hint := resolverFamilyHint(c, lower); hint != "" {
		c.Advice = append(c.Advice, hint)
	}
	if hint := ecrPullThroughHint(c); hint != "" {
		c.Advice = append(c.Advice, hint)
	}
	if up := mirrorOf(req); up != "" {
		c.Role = verdict.RoleMirror
		c.Advice = append(c.Advice, mirrorHint(c.Host, up, lower))
	}
	if rule.ID != "acr-firewall" {
		applyScope(&c, cred)
	}
	return c
}

// publicAddressHint: a route failure to a public address of a cloud
// registry is often a DNS problem in disguise. The runtime's message cannot
// tell (it only shows the dial), so the advice says what would.
func publicAddressHint(c Classification) string {
	if c.Condition != verdict.ConditionRoute && c.Condition != verdict.ConditionEndpointSet || c.Address == "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(c.Address)
	if err != nil || addrscope.Of(ap.Addr()) != "public" {
		return ""
	}
	switch verdict.DetectPlatform(c.Host) {
	case verdict.PlatformECR, verdict.PlatformS3, verdict.PlatformACR, verdict.PlatformACRData:
		return fmt.Sprintf("%s is a public address: if %s should be reached through a private endpoint (VPC interface endpoint, private link), the node's resolver answered the public record, so private DNS is off or the private zone is not linked; `pullpath probe --expect-private IMAGE` on the node tells.", ap.Addr(), c.Host)
	case verdict.PlatformGAR, verdict.PlatformGCR, verdict.PlatformGCS:
		if pfx := netip.MustParsePrefix("199.36.153.4/29"); pfx.Contains(ap.Addr()) {
			return fmt.Sprintf("%s is a Private Google Access VIP: the private zone answered it; the subnet needs Private Google Access, a route for the /30 to the default internet gateway and an egress rule allowing TCP 443 to it.", ap.Addr())
		}
		return fmt.Sprintf("%s is one of Google's public addresses: no private zone bound to the network answered %s, so a node without an external IP needs Private Google Access or Cloud NAT on its subnet.", ap.Addr(), c.Host)
	}
	return ""
}

// ecrPullThroughHint: an ECR repository under a pull-through cache rule's
// prefix is created and filled on the first pull of each image, and that
// pull needs ecr:BatchImportUpstreamImage (and ecr:CreateRepository when no
// repository or creation template exists) on the identity that pulls, the
// node role (Amazon ECR user guide, IAM permissions for pull-through
// cache). Without them the first pull of an uncached image is refused
// while cached ones pull: the message cannot tell, so the advice says what
// would.
func ecrPullThroughHint(c Classification) string {
	if verdict.DetectPlatform(c.Host) != verdict.PlatformECR {
		return ""
	}
	switch c.Code {
	case verdict.ManifestNotFound, verdict.RepositoryNotFound, verdict.AuthAmbiguous, verdict.RegistryForbidden, verdict.AuthForbidden:
		return "If the repository falls under an ECR pull-through cache rule's prefix (`aws ecr describe-pull-through-cache-rules`), the first pull of an image the cache has not stored needs ecr:BatchImportUpstreamImage, and ecr:CreateRepository unless a repository creation template applies, on the node role; images already cached pull without them. `pullpath aws audit` checks the rule, the role and the upstream secret."
	}
	return ""
}

// mirrorOf is the registry a request's host mirrors, or "": containerd's
// request.addNamespace (core/remotes/docker) adds ?ns=REGISTRY only when
// the host is not the reference's own (a hosts.toml mirror).
func mirrorOf(req request) string {
	if req.URL == nil {
		return ""
	}
	ns := strings.ToLower(req.URL.Query().Get("ns"))
	if ns == "" || sameHost(ns, req.Host) {
		return ""
	}
	return ns
}

// mirrorHint says what a mirror's failure in containerd's message means.
// containerd's resolver and fetcher try the chain's hosts in order, log
// "trying next host" for each that fails, and when none serves return the
// FIRST non-404 error: the message names the first host that failed, and
// every later host (the registry itself too, unless hosts.toml has no
// server) failed as well or answered 404.
func mirrorHint(host, registry, lower string) string {
	if strings.Contains(lower, "trying next host") {
		return fmt.Sprintf("%s is a hosts.toml mirror of %s, and this line is containerd moving on to the next host of the chain, not the pull's result: the pull failed only if every host failed (its error then names the first that did). Each unreachable mirror costs its full timeout before the next is tried. `pullpath probe IMAGE` on the node walks every host of /etc/containerd/certs.d/%s/hosts.toml.", host, registry, registry)
	}
	return fmt.Sprintf("%s is a hosts.toml mirror of %s (containerd adds ?ns=%s only to a mirror's requests). containerd tries the chain's hosts in order and, when none serves, reports the first host that failed: every later host, %s itself too unless hosts.toml has no server, also failed or answered 404, and each one's error is in the node's containerd log (\"trying next host\"). `pullpath probe IMAGE` on the node walks every host of /etc/containerd/certs.d/%s/hosts.toml and names each one's verdict.", host, registry, registry, registry, registry)
}

// stepOf reads which step of the pull failed, innermost evidence first.
func stepOf(lower string, req request) string {
	switch {
	case strings.Contains(lower, "failed to authorize"), strings.Contains(lower, "fetch oauth token"),
		strings.Contains(lower, "fetch anonymous token"), strings.Contains(lower, "failed to fetch token"),
		strings.Contains(lower, "unable to retrieve auth token"), // containers/image ErrUnauthorizedForCredentials
		strings.Contains(lower, "requesting bearer token"),       // containers/image getBearerToken
		req.Path == "token":
		return StepToken
	case strings.Contains(lower, "error pulling image configuration"):
		return StepConfig
	case req.Path == "blobs":
		// containerd's Resolve of a digest reference falls back from HEAD
		// /manifests/DIGEST to HEAD /blobs/DIGEST (core/remotes/docker/
		// resolver.go): under "failed to resolve" that blobs URL is the
		// reference lookup on the registry host, not a layer download.
		if strings.Contains(lower, "failed to resolve") && !strings.Contains(lower, "failed to copy") &&
			!strings.Contains(lower, "httpreadseeker") && !strings.Contains(lower, "httpreaderseeker") {
			return StepResolve
		}
		return StepBlob
	case req.Path == "manifests":
		if strings.Contains(lower, "failed to resolve") {
			return StepResolve
		}
		return StepManifest
	case req.Path == "ping":
		return StepPing
	case strings.Contains(lower, "copying config"): // containers/image copy/single.go
		return StepConfig
	case strings.Contains(lower, "httpreadseeker"), strings.Contains(lower, "httpreaderseeker"),
		strings.Contains(lower, "failed to copy"), strings.Contains(lower, "fetching blob"),
		strings.Contains(lower, "reading blob"), strings.Contains(lower, "writing blob"),
		// containers/image: storage_dest.go "storing blob to file", copy/
		// blob.go "happened during read", copy/single.go "copying layer";
		// moby: xfer/download.go "Download failed, retrying", pull_v2.go
		// "filesystem layer verification failed".
		strings.Contains(lower, "storing blob to file"), strings.Contains(lower, "happened during read"),
		strings.Contains(lower, "copying layer"), strings.Contains(lower, "download failed, retrying"),
		strings.Contains(lower, "filesystem layer verification failed"):
		return StepBlob
	case strings.Contains(lower, "failed to resolve reference"), strings.Contains(lower, "failed to resolve image"):
		return StepResolve
	case strings.Contains(lower, "pinging container registry"), strings.Contains(lower, "pinging docker registry"):
		return StepPing
	case strings.Contains(lower, "reading manifest"), strings.Contains(lower, "manifest unknown"):
		return StepManifest
	}
	return ""
}

// stageOf maps a step (and, without one, the code) to the stage and the
// role of the endpoint.
func stageOf(step string, code verdict.Code) (verdict.Stage, verdict.Role) {
	switch step {
	case StepReference:
		return verdict.StageReference, ""
	case StepToken:
		return verdict.StageAuth, verdict.RoleAuth
	case StepBlob, StepConfig:
		return verdict.StageBlob, verdict.RoleBlob
	case StepUnpack, StepRun:
		return verdict.StageBlob, ""
	}
	switch code {
	case verdict.NeverPull, verdict.ReferenceInvalid, verdict.CredentialsError:
		return verdict.StageReference, ""
	case verdict.AuthUnauthorized, verdict.AuthForbidden:
		return verdict.StageAuth, verdict.RoleAuth
	case verdict.BlobForbidden, verdict.BlobNotFound, verdict.BlobDigestMismatch, verdict.BlobSizeMismatch, verdict.BlobStalled:
		return verdict.StageBlob, verdict.RoleBlob
	}
	return verdict.StageRegistry, verdict.RoleRegistry
}

var stepPhrase = map[string]string{
	StepPing:     "on the registry ping (GET /v2/)",
	StepResolve:  "while resolving the reference (manifest request)",
	StepManifest: "while fetching the manifest",
	StepToken:    "while fetching a token from the auth service",
	StepConfig:   "while downloading the image config blob",
	StepBlob:     "while downloading a layer blob",
	StepUnpack:   "while unpacking on the node",
	StepRun:      "after the pull, when the container started",
}

func summarize(says string, c Classification) string {
	var b strings.Builder
	b.WriteString(says)
	if c.Host != "" && c.Step != StepReference {
		fmt.Fprintf(&b, ": %s", c.Host)
		switch {
		case c.Address != "":
			fmt.Fprintf(&b, " (%s)", c.Address)
		case c.Nameserver != "":
			fmt.Fprintf(&b, " (nameserver %s)", c.Nameserver)
		}
		if c.Role == verdict.RoleAuth || c.Role == verdict.RoleBlob {
			if c.Registry != "" && !sameHost(c.Host, c.Registry) {
				fmt.Fprintf(&b, ", a %s host other than the registry %s", c.Role, c.Registry)
			}
		}
	}
	if p := stepPhrase[c.Step]; p != "" {
		b.WriteString(", ")
		b.WriteString(p)
	}
	if c.Progress != "" {
		b.WriteString(" (")
		b.WriteString(c.Progress)
		b.WriteString(")")
	}
	return redact.String(b.String())
}
