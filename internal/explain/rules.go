package explain

import (
	"regexp"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Rule is one line of the classifier's table: a small matcher on the
// message's innermost cause and the code it means. Rules are tried in order
// and the first that matches wins, so the specific ones come first (a DNS
// timeout before any timeout, S3's AccessDenied before any 403).
type Rule struct {
	ID string
	// Any: at least one of these lowercase substrings occurs (when set).
	Any []string
	// All: every one of these lowercase substrings occurs (when set).
	All []string
	// Not: none of these lowercase substrings occurs (when set).
	Not []string
	// Re: the regexp matches the normalized message (when set).
	Re *regexp.Regexp
	// Hint: lowercase phrases at least one of which occurs whenever Re
	// matches; a cheap test run before Re, never a condition of its own.
	Hint []string
	// Code is the finding; CodeFor, when set, refines it by pull step.
	Code    verdict.Code
	CodeFor func(step string) verdict.Code
	// Step forces the step when the message does not show it.
	Step string
	// Ambiguous: the message cannot tell two causes apart.
	Ambiguous bool
	// Says is the plain-language reading used in the summary.
	Says string
	// Advice is added after the code's own advice.
	Advice []string
	// Source names where the message shape comes from.
	Source string
}

func (r *Rule) match(v textView) bool {
	lower, msg := v.lower, v.msg
	if len(r.Any) > 0 {
		ok := false
		for _, s := range r.Any {
			if strings.Contains(lower, s) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, s := range r.All {
		if !strings.Contains(lower, s) {
			return false
		}
	}
	for _, s := range r.Not {
		if strings.Contains(lower, s) {
			return false
		}
	}
	if r.Re != nil && (len(r.Hint) > 0 && !v.may(r.Hint...) || !r.Re.MatchString(msg)) {
		return false
	}
	return len(r.Any) > 0 || len(r.All) > 0 || r.Re != nil
}

func (r *Rule) code(step string) verdict.Code {
	if r.CodeFor != nil {
		return r.CodeFor(step)
	}
	return r.Code
}

// Steps of a pull, as named in a Classification.
const (
	StepReference = "reference" // parsing the image name, pull policy
	StepPing      = "ping"      // GET /v2/
	StepResolve   = "resolve"   // HEAD/GET manifest by tag (containerd "failed to resolve reference")
	StepManifest  = "manifest"  // GET manifest (by digest, or CRI-O "reading manifest")
	StepToken     = "token"     // token service
	StepConfig    = "config"    // image config blob
	StepBlob      = "blob"      // layer blob, including redirect hosts
	StepUnpack    = "unpack"    // after the download, on the node
	StepRun       = "run"       // after the pull, starting the container
)

func unauthorizedFor(step string) verdict.Code {
	if step == StepToken {
		return verdict.AuthUnauthorized
	}
	return verdict.RegistryUnauthorized
}

func forbiddenFor(step string) verdict.Code {
	switch step {
	case StepToken:
		return verdict.AuthForbidden
	case StepBlob, StepConfig:
		return verdict.BlobForbidden
	}
	return verdict.RegistryForbidden
}

func notFoundFor(step string) verdict.Code {
	if step == StepBlob || step == StepConfig {
		return verdict.BlobNotFound
	}
	return verdict.ManifestNotFound
}

// progressTimeoutFor: a pull the runtime cancelled for lack of progress
// while a layer or the config was downloading is a stalled blob; at any
// other step (or when the message does not say) the runtime's progress
// timeout itself.
func progressTimeoutFor(step string) verdict.Code {
	if step == StepBlob || step == StepConfig {
		return verdict.BlobStalled
	}
	return verdict.PullProgressTimeout
}

func timeoutFor(step string) verdict.Code {
	if step == StepBlob || step == StepConfig {
		return verdict.BlobStalled
	}
	return verdict.HTTPTimeout
}

// proxyDialRe is a failed dial of the runtime's proxy as Go's net/http
// words it: net.OpError{Op: "proxyconnect"} since Go 1.9 ("proxyconnect
// tcp: dial tcp PROXY: ..."), fmt.Errorf("http: error connecting to proxy
// %s: %v") before (transport.go dialConn/getConn).
var (
	proxyDialRe   = regexp.MustCompile(`(?i)proxyconnect tcp|http: error connecting to proxy `)
	proxyDialHint = []string{"proxyconnect tcp", "error connecting to proxy "}
)

// interceptionRe is a certificate error whose text names a TLS-intercepting
// product (verdict.InterceptionProduct's names), on either side.
var interceptionRe = func() *regexp.Regexp {
	names := strings.Join(verdict.InterceptionNames(), "|")
	cert := `x509: |certificate signed by unknown authority|certificate is valid for|failed to verify certificate`
	return regexp.MustCompile(`(?i)(?:` + cert + `).*(?:` + names + `)|(?:` + names + `).*(?:` + cert + `)`)
}()

// Rules is the classifier's table, in the order it is tried. docs/explain.md
// lists it; every rule has table tests with real message shapes.
var Rules = []Rule{
	// --- kubelet's own reasons that carry no runtime cause
	{ID: "kubelet-never-pull", Any: []string{"is not present with pull policy of never", "errimageneverpull"},
		Code: verdict.NeverPull, Step: StepReference,
		Says:   "imagePullPolicy is Never and the image is not on this node",
		Source: "kubelet pkg/kubelet/images/image_manager.go (ErrImageNeverPull); hystax/optscale#701"},

	// --- the runtime's own refusals before any packet: containers/image (as
	// CRI-O, OpenShift and podman use it) resolves short names, applies its
	// image policy and its registries.conf before it dials anything. These
	// are the node's configuration of which images may come from where: the
	// image condition, never the network.
	//
	// pkg/shortnames Resolve: "short-name %q did not resolve to an alias and
	// no unqualified-search registries are defined in %q" (or "... and no
	// containers-registries.conf(5) was found"); CRI-O before 1.20 and
	// c/image 4: "no registries configured while trying to pull an
	// unqualified image".
	{ID: "short-name-no-search-registries", Any: []string{"did not resolve to an alias", "no unqualified-search registries", "no registries configured while trying to pull an unqualified image"},
		Code: verdict.ShortNameUnresolved, Step: StepReference,
		Says: "the runtime (containers/image: CRI-O, podman) refused a short image name: no alias names it and no unqualified-search registries are set, so it will not guess a registry",
		Advice: []string{
			"Write the registry into the image: field (docker.io/library/nginx:1.27, not nginx:1.27): containerd and Docker complete docker.io, CRI-O does not. Or give the node an alias ([aliases] \"nginx\" = \"docker.io/library/nginx\" in a registries.conf.d drop-in) or unqualified-search-registries = [\"docker.io\"] in /etc/containers/registries.conf, then restart CRI-O.",
		},
		Source: "containers/image pkg/shortnames/shortnames.go Resolve; CRI-O internal/storage (no registries configured while trying to pull an unqualified image)"},
	// pkg/shortnames Resolve with several search registries, enforcing mode
	// and no TTY: "short-name resolution enforced but cannot prompt without a
	// TTY"; CRI-O >= 1.34 rewords it (internal/storage
	// CandidatesForPotentiallyShortImageName): "short name mode is enforcing,
	// but image name %s returns ambiguous list".
	{ID: "short-name-ambiguous", Any: []string{"short-name resolution enforced", "short name mode is enforcing"},
		Code: verdict.ShortNameUnresolved, Step: StepReference,
		Says: "the runtime (containers/image: CRI-O, podman) refused a short image name: short-name-mode is enforcing and several unqualified-search registries could serve it, so it will not guess which",
		Advice: []string{
			"Write the registry into the image: field (docker.io/team/app:1, not team/app:1); CRI-O 1.34 and later enforce short names. Or give the node an alias for the name in a registries.conf.d drop-in, or keep one unqualified-search registry, or short-name-mode = \"permissive\" in /etc/containers/registries.conf (each trades away the protection against a squatted name on another registry).",
		},
		Source: "containers/image pkg/shortnames/shortnames.go Resolve (enforcing, no TTY); CRI-O internal/storage/image.go (returns ambiguous list, 1.34)"},
	// signature/policy_eval*.go: every refusal is a PolicyRequirementError
	// ("Running image %s is rejected by policy.", "A signature was
	// required, but no signature exists", "None of the signatures were
	// accepted, reasons: ...", "Signature for identity %q is not
	// accepted"), which copy/single.go wraps as "Source image rejected: %w";
	// CRI-O wraps it in the CRI's ErrSignatureValidationFailed
	// ("SignatureValidationFailed: ...", internal/storage
	// WrapSignatureCRIErrorIfNeeded) and the kubelet's evalCRIPullErr
	// rewords it "image pull failed for %s because the signature validation
	// failed: ..." with the reason SignatureValidationFailed.
	{ID: "image-policy-rejected", Any: []string{"source image rejected", "signaturevalidationfailed", "because the signature validation failed", "is rejected by policy", "are rejected by policy",
		"a signature was required, but no signature exists", "none of the signatures were accepted", "no signature verification policy found"},
		Code: verdict.PolicyRejected, Step: StepReference,
		Says: "the runtime's image policy (containers/image policy.json) refused the image: its registry is not allowed there, or a required signature is missing or does not verify",
		Advice: []string{
			"\"rejected by policy\" is a registry (or repository) the policy does not allow: on OpenShift, image.config.openshift.io/cluster registrySources.allowedRegistries (the Machine Config Operator writes it into /etc/containers/policy.json on every node). \"A signature was required\" or \"not accepted\" is the signature requirement for this scope: sign the image, or fix the key, Fulcio identity or Rekor key the policy requires (ClusterImagePolicy / ImagePolicy on OpenShift, CRI-O's signature_policy_dir per namespace).",
		},
		Source: "containers/image signature/policy_eval*.go (PolicyRequirementError), copy/single.go (Source image rejected); CRI-O internal/storage WrapSignatureCRIErrorIfNeeded; kubelet image_manager.go evalCRIPullErr (SignatureValidationFailed)"},
	// signature/policy_config.go: DefaultPolicy reads /etc/containers/
	// policy.json ("open ...: no such file or directory"), "invalid policy
	// in %q: %w": without a policy CRI-O refuses every pull.
	{ID: "image-policy-file", All: []string{"policy.json"}, Any: []string{"no such file or directory", "invalid policy in", "permission denied"},
		Code: verdict.PolicyRejected, Step: StepReference,
		Says: "the runtime cannot read its image policy file (containers/image policy.json), so it refuses every pull",
		Advice: []string{
			"Restore /etc/containers/policy.json on the node (the containers-common package ships {\"default\": [{\"type\": \"insecureAcceptAnything\"}]}), or point CRI-O's signature_policy at the file it should use, then restart CRI-O.",
		},
		Source: "containers/image signature/policy_config.go (DefaultPolicy, invalid policy in); clearlinux/distribution#160 (open /etc/containers/policy.json: no such file or directory)"},
	// docker/docker_client.go newDockerClient: "registry %s is blocked in
	// one of %s" (earlier "... is blocked in %s" and "%s or %s"): the
	// [[registry]] entry of registries.conf the reference falls under says
	// blocked = true, checked before any connection.
	{ID: "registry-blocked", Re: regexp.MustCompile(`(?i)registry \S+ is blocked in`),
		Hint: []string{"is blocked in"}, Code: verdict.RegistryBlocked, Step: StepReference,
		Says: "registries.conf blocks the image's registry (blocked = true): the runtime refused before any packet",
		Advice: []string{
			"On OpenShift the entry comes from image.config.openshift.io/cluster blockedRegistries, or from an ImageDigestMirrorSet with mirrorSourcePolicy: NeverContactSource: then only its mirrors may serve, and only pulls by digest are mirrored (a pull by tag needs an ImageTagMirrorSet). Elsewhere, the [[registry]] entry with blocked = true in /etc/containers/registries.conf or registries.conf.d.",
		},
		Source: "containers/image docker/docker_client.go newDockerClient (registry %s is blocked in one of %s); containers/image#2497"},
	// pkg/sysregistriesv2: "loading registries configuration %q: %w",
	// InvalidRegistries ("registries.conf must be in v2 format but is in
	// v1", "invalid condition: ...", "unsupported pull-from-mirror value"),
	// "invalid short-name mode: %q", "pull-from-mirror must not be set for
	// a non-mirror registry", "validating short-name aliases"; docker/
	// docker_client.go "loading registries: %w".
	{ID: "registries-conf-invalid", Any: []string{"loading registries configuration", "loading registries: ", "registries.conf must be in v2 format", "invalid short-name mode",
		"pull-from-mirror must not be set", "unsupported pull-from-mirror value", "validating short-name aliases", "both location and prefix are unset", "mirror location is unset"},
		Code: verdict.RegistriesConfInvalid, Step: StepReference,
		Says: "the runtime cannot use its registries.conf (containers/image): every pull it resolves through the file is refused",
		Advice: []string{
			"Fix the file the message names (/etc/containers/registries.conf or a registries.conf.d drop-in; on OpenShift the Machine Config Operator writes them from ImageDigestMirrorSet, ImageTagMirrorSet and image.config.openshift.io/cluster), then restart CRI-O. `pullpath probe IMAGE` on the node reads registries.conf as containers/image does and names the line.",
		},
		Source: "containers/image pkg/sysregistriesv2/system_registries_v2.go (loading registries configuration, InvalidRegistries, invalid short-name mode)"},

	{ID: "kubelet-invalid-name", Any: []string{"invalidimagename", "invalid reference format", "couldn't parse image reference", "couldn't parse image name", "failed to apply default image tag"},
		Code: verdict.ReferenceInvalid, Step: StepReference,
		Says:   "the image reference does not parse",
		Source: "kubelet applyDefaultImageTag (InspectFailed / InvalidImageName); jupyterhub/zero-to-jupyterhub-k8s#472, cloudfoundry-incubator/kubecf#63"},
	{ID: "kubelet-already-present", Any: []string{"already present on machine"},
		Code: verdict.OK, Says: "the image was already on the node (served from its cache)",
		Source: "kubelet image_manager.go (Pulled: Container image ... already present on machine)"},
	{ID: "kubelet-pulled", Any: []string{"successfully pulled image"},
		Code: verdict.OK, Says: "the image was pulled",
		Source: "kubelet image_manager.go (Pulled: Successfully pulled image)"},

	// --- the node could not produce credentials
	// The kubelet's credential providers (pkg/credentialprovider/plugin/
	// plugin.go): "failed to get credential from external registry
	// credential provider", "error execing credential provider plugin %s",
	// "credential provider plugin did not return a valid cacheKeyType",
	// "failed to validate credential provider config"; the kubelet then pulls
	// without credentials.
	{ID: "credential-helper", Any: []string{"error getting credentials", "docker-credential-", "credential helper", "credential provider"},
		Code:   verdict.CredentialsError,
		Says:   "the node's credential helper or the kubelet's credential provider failed: the pull went out without the node's credentials",
		Source: "docker/dockershim credential helpers; kubelet pkg/credentialprovider/plugin/plugin.go; kubernetes/cloud-provider-gcp#226 (did not return a valid cacheKeyType); k3s-io/k3s#14039 (failed to validate credential provider config)"},
	// GKE's credential provider (cloud-provider-gcp pkg/gcpcredential)
	// reads the node's token from the metadata server: without a storage or
	// cloud-platform scope it logs "Google container registry is disabled,
	// no storage scope is available", without a service account "'default'
	// service account does not exist" (the metadata server itself answers
	// "Service account not enabled on this instance"); with Workload
	// Identity for image pulls, "Workload Identity exchange failed".
	{ID: "gcp-node-credentials", Any: []string{"no storage scope is available", "google container registry is disabled", "'default' service account does not exist",
		"service account not enabled on this instance", "workload identity exchange failed", "workload identity opted-in but ksa token is unset"},
		Code: verdict.CredentialsError,
		Says: "GKE's credential provider has no token to give: the node has no service account, or its access scopes include neither devstorage.read_only nor cloud-platform, so every pull to gcr.io and pkg.dev goes out anonymously",
		Advice: []string{
			"A node pool's service account and scopes are fixed when the pool is created: create a pool with a service account that has roles/artifactregistry.reader and --scopes cloud-platform (or storage-ro), then move the workloads. The registry answers such anonymous pulls with 401 (Unauthenticated requests do not have permission) or 403.",
			verdict.GCPAuditScopesHint,
		},
		Source: "kubernetes/cloud-provider-gcp pkg/gcpcredential/gcpcredential.go (no storage scope is available, 'default' service account does not exist, Workload Identity exchange failed); jfrog/jfrog-credentials-provider#91"},

	// --- the image itself: platform and unpack (before any generic not-found)
	{ID: "exec-format-error", Any: []string{"exec format error"},
		Code: verdict.PlatformNotFound, Step: StepRun,
		Says: "the image was pulled, but its entrypoint is built for another CPU architecture than the node's (exec format error)",
		Advice: []string{
			"The pull worked: no route, resolver, certificate or credential is involved. Compare the platforms the image was built for (`docker buildx imagetools inspect IMAGE`) with the node's architecture (`kubectl get node NODE -o jsonpath='{.status.nodeInfo.architecture}'`): a single-platform image built on amd64 and run on an arm64 pool (or an index entry whose binaries are for another architecture) pulls fine and fails here.",
		},
		Source: "runc standard_init_linux.go (exec user process caused: exec format error); kubelet CrashLoopBackOff after Pulled"},
	{ID: "platform-no-match", Any: []string{"no match for platform in manifest", "no match for current platform", "no matching manifest for", "no image found in image index for architecture", "no image found in manifest list for architecture"},
		Code: verdict.PlatformNotFound, Step: StepManifest,
		Says:   "the image index has no manifest for the node's platform",
		Source: "containerd images/image.go (#2410); kubewarden/adm-controller#1378; moby/moby#46765; CRI-O c/image"},
	{ID: "mirror-html-media-type", Any: []string{"unexpected media type text/html"},
		Code: verdict.MirrorNotRegistry, Step: StepManifest,
		Says:   "a host of the registry's chain answered the manifest with a web page (text/html): a mirror, proxy or portal that is not a registry; containerd took the page for the image and failed to unpack it",
		Advice: []string{"Look at the mirrors of /etc/containerd/certs.d/REGISTRY/hosts.toml: `curl -sI https://MIRROR/v2/` should answer with Docker-Distribution-Api-Version, not a web page (`pullpath probe IMAGE` names the host)."},
		Source: "containerd 1.6.20 through the lab's html mirror (failed to unpack image on snapshotter overlayfs: unexpected media type text/html for sha256:...: not found)"},
	{ID: "unpack-on-node", Any: []string{"failed to unpack image", "failed to resolve rootfs", "failed to extract layer", "no space left on device", "error unpacking image"},
		Code: verdict.Other, Step: StepUnpack,
		Says:   "the download worked but unpacking on the node failed (disk space, snapshotter or a corrupt local content store)",
		Advice: []string{"This is not a network or identity problem: look at the node's disk (`df -h /var/lib/containerd`) and the runtime's logs."},
		Source: "containerd/containerd#3604; k3s-io/k3s#1094"},

	// --- the runtime's proxy (before DNS, connect and HTTP status rules: a
	// proxy's failures carry their words). Go's net/http (the runtime's
	// transport, Proxy: http.ProxyFromEnvironment) wraps a failed dial of
	// the proxy in "proxyconnect tcp: ", and fails a CONNECT the proxy did
	// not answer with 200 with the status text alone, after the request's
	// URL: `Head "https://HOST/...": Forbidden` (transport.go dialConn). A
	// registry's own status never reads that way: containerd says "failed
	// with status code ...: 403 Forbidden", CRI-O "StatusCode: 403",
	// docker "error parsing HTTP 403 response body".
	{ID: "proxy-auth-required", Any: []string{"proxy authentication required"},
		Code:   verdict.ProxyAuthRequired,
		Says:   "the runtime's proxy demands authentication (407) and the runtime's proxy URL has no, or wrong, credentials",
		Source: "Go net/http transport.go (CONNECT answered 407: the reason phrase alone); OpenShift CRI-O event (error pinging docker registry: Get \"https://registry-1.docker.io/v2/\": Proxy authentication required)"},
	// net/http connectMethodForRequest (Go 1.12-1.15): "invalid proxy URL
	// port %q"; x/net/http/httpproxy parseProxy: "invalid proxy address %q:
	// %v": the proxy value of the runtime's environment does not parse, and
	// every request fails before any dial.
	{ID: "proxy-url-invalid", Any: []string{"invalid proxy url port", "invalid proxy address"},
		Code:   verdict.ProxyURLInvalid,
		Says:   "the runtime's proxy setting is not a URL Go can use (a placeholder or a stray character in HTTPS_PROXY / HTTP_PROXY): every request failed before any dial",
		Source: "Go net/http transport.go connectMethodForRequest (invalid proxy URL port %q); golang.org/x/net/http/httpproxy parseProxy (invalid proxy address %q: %v)"},
	{ID: "proxyconnect-dns", Re: regexp.MustCompile(`(?i)(?:proxyconnect tcp|http: error connecting to proxy \S+): dial tcp: lookup `),
		Hint: proxyDialHint, Code: verdict.ProxyDNS,
		Says:   "the node cannot resolve the runtime's proxy's name (through a proxy the node resolves only the proxy)",
		Source: "Go net/http (net.OpError proxyconnect around the dial); cri-o/cri-o#2331 (lookup http: a mangled proxy URL); crictl through an invalid proxy (lookup invalidproxy: Temporary failure in name resolution)"},
	{ID: "proxyconnect-refused", Re: proxyDialRe, Hint: proxyDialHint, Any: []string{"connection refused", "actively refused it"},
		Code:   verdict.ProxyRefused,
		Says:   "nothing accepts connections at the runtime's proxy (proxyconnect ... connection refused): the proxy is down or its URL is wrong; the registry was never contacted",
		Source: "containerd/nerdctl#1193 (proxyconnect tcp: dial tcp 127.0.0.1:7890: connect: connection refused); docker/for-win#7935"},
	{ID: "proxyconnect-timeout", Re: proxyDialRe, Hint: proxyDialHint, Any: []string{"i/o timeout", "connection timed out", "did not properly respond"},
		Code:   verdict.ProxyTimeout,
		Says:   "the runtime's proxy does not answer (the connect to it timed out)",
		Source: "Go net/http (proxyconnect tcp: dial tcp PROXY: i/o timeout)"},
	{ID: "proxyconnect-unreachable", Re: proxyDialRe, Hint: proxyDialHint, Any: []string{"no route to host", "network is unreachable", "host is unreachable"},
		Code:   verdict.ProxyUnreachable,
		Says:   "the node has no route to the runtime's proxy",
		Source: "docker/for-win#4607 (proxyconnect tcp: dial tcp 192.168.65.83:8080: connect: no route to host)"},
	{ID: "proxyconnect-other", Re: proxyDialRe, Hint: proxyDialHint,
		Code:   verdict.ProxyConnectError,
		Says:   "the connection to the runtime's proxy failed (reset, closed, or not an HTTP proxy: an https:// proxy URL for a plain proxy reads \"first record does not look like a TLS handshake\")",
		Source: "Go net/http (proxyconnect tcp: EOF, tls: first record does not look like a TLS handshake)"},
	{ID: "proxy-connect-refused-upstream", Re: regexp.MustCompile(`(?i)(?:get|head|post|put) "?https://[^\s"]+"?: (?:internal server error|bad gateway|service unavailable|gateway timeout)\s*(?:["')\]]|$)`),
		Hint: []string{"internal server error", "bad gateway", "service unavailable", "gateway timeout"}, Code: verdict.ProxyUpstreamFailed,
		Says: "the runtime's proxy answered the CONNECT with a 5xx: it could not reach or resolve the host (the far side of the proxy, or an internal host NO_PROXY should send direct)",
		Advice: []string{
			"This is the proxy's answer, not the registry's: only a CONNECT refusal reads as the bare status text after the URL. Look at the proxy's logs for this host; for an internal registry, add it to NO_PROXY of the runtime (containerd's systemd drop-in) and restart the runtime.",
			"Run `pullpath probe IMAGE` on the node: it walks each host through the same proxy and names the proxy's answer per host.",
		},
		Source: "Go net/http transport.go dialConn (errors.New(status text)); kubernetes-sigs/cri-tools#1608 (OpenShift, internal Nexus: Get \"https://HOST/v2/\": Internal Server Error); Docker behind a corporate proxy (Get \"https://registry-1.docker.io/v2/\": Service Unavailable)"},
	{ID: "proxy-connect-refused", Re: regexp.MustCompile(`(?i)(?:get|head|post|put) "?https://[^\s"]+"?: (?:forbidden|bad request|method not allowed|not found|unauthorized|request header fields too large|too many requests|unknown status code)\s*(?:["')\]]|$)`),
		Hint: []string{"forbidden", "bad request", "method not allowed", "not found", "unauthorized", "request header", "too many requests", "unknown status code"}, Code: verdict.ProxyDenied,
		Says: "the runtime's proxy refused to open a tunnel to this host (its ACL): this is not the registry's 403",
		Advice: []string{
			"Only a CONNECT the proxy refused reads as the bare status text after the URL: the registry never saw the request. Allow the host (and every host the registry redirects to: token and blob hosts) in the proxy's ACL, or add them to NO_PROXY of the runtime.",
		},
		Source: "Go net/http transport.go dialConn (errors.New(status text)); kubernetes/registry.k8s.io#273 (Head \"https://europe-west3-docker.pkg.dev/...\": Forbidden: registry.k8s.io answered, its pkg.dev redirect host was refused); OpenShift egress proxy whitelist (Get https://registry-1.docker.io/v2/: Forbidden)"},
	{ID: "proxy-tls-interception", Re: interceptionRe, Hint: []string{"x509", "certificate"},
		Code:   verdict.ProxyTLSIntercepted,
		Says:   "the certificate the runtime got names a TLS-intercepting product: a proxy or gateway re-signs TLS with a CA the node does not trust",
		Source: "Go crypto/x509 UnknownAuthorityError (candidate authority certificate \"NAME\"); aws/eks-anywhere-packages#926 (Zscaler chain: CN = Zscaler Intermediate Root CA (zscaler.net)); Juniper/nita#39"},

	// --- name resolution (Go's resolver, cgo's getaddrinfo)
	{ID: "dns-nameserver-timeout", Re: regexp.MustCompile(`lookup \S+(?: on \S+)?: (?:(?:read|dial|write) udp \S+: )?i/o timeout`),
		Hint: []string{"lookup "}, Code: verdict.DNSTimeout,
		Says: "no nameserver answered the lookup (DNS timeout)", Source: "containerd-in-netns notes (nameserver black-holed); bazelbuild/rules_docker#1585"},
	{ID: "dns-nameserver-refused", Re: regexp.MustCompile(`lookup \S+(?: on \S+)?: (?:read|dial|write) (?:udp|tcp) \S+: (?:read: |connect: )?connection refused`),
		Hint: []string{"lookup "}, Code: verdict.DNSTimeout,
		Says: "the nameserver refused the query connection (nothing answers DNS on that address)", Source: "docker-archive-public/docker.kitematic#3427"},
	{ID: "dns-nxdomain", Any: []string{"no such host", "name or service not known", "nodename nor servname provided"},
		Code: verdict.DNSNXDomain,
		Says: "the node's resolver says the name does not exist (NXDOMAIN)", Source: "containerd-in-netns notes (NXDOMAIN); containerd/containerd#4231"},
	{ID: "dns-servfail", Any: []string{"server misbehaving"},
		Code: verdict.DNSServFail,
		Says: "the node's resolver failed the lookup (SERVFAIL or REFUSED)", Source: "docker/for-mac#1340; docker.kitematic#3914"},
	{ID: "dns-temporary", Any: []string{"temporary failure in name resolution", "no dns servers", "no address associated with hostname"},
		Code: verdict.DNSError,
		Says: "name resolution failed (temporary failure: no usable answer from the resolver)", Source: "cri-o/cri-o#2331 (comment); glibc EAI_AGAIN"},

	{ID: "dns-other", Re: regexp.MustCompile(`lookup \S+(?: on \S+)?: `),
		Hint: []string{"lookup "}, Code: verdict.DNSError,
		Says: "name resolution failed", Source: "cri-o/cri-o#3612 (held-out set: lookup HOST: device or resource busy)"},

	// --- connecting (Go's dialer) and TLS handshake timing
	{ID: "tls-handshake-timeout", Any: []string{"tls handshake timeout"},
		Code: verdict.TLSHandshakeTimeout,
		Says: "TCP connected but the TLS handshake did not finish", Source: "docker-archive-public/docker.kitematic#2771; NVIDIA/nvidia-docker#684"},
	// The kernel's errno for an address family the node cannot use (see
	// family.go): an IPv6 address with ENETUNREACH (no IPv6 route at all) or
	// EADDRNOTAVAIL (no IPv6 source address), EAFNOSUPPORT from socket() for
	// either family, and Go's errNoSuitableAddress (net/ipsock.go
	// filterAddrList: no address of a family the dial may use). An IPv4
	// address with ENETUNREACH stays connect-unreachable (a node without a
	// default route reads the same), with the family's hint.
	{ID: "dial-family-unusable", Re: regexp.MustCompile(`(?i)dial tcp \[[0-9a-f:.]+(?:%[\w.-]+)?\]:\d+: connect: (?:network is unreachable|cannot assign requested address)|dial tcp \S*: socket: address family not supported by protocol|no suitable address found`),
		Hint: []string{"network is unreachable", "cannot assign requested address", "address family not supported", "no suitable address found"}, Code: verdict.AddressFamilyUnusable,
		Says:   "the node cannot use the address's family: the kernel refused the dial at once (no route for the family, no source address in it, or the family disabled)",
		Source: "Go net.OpError around the kernel's ENETUNREACH / EADDRNOTAVAIL / EAFNOSUPPORT, net/ipsock.go errNoSuitableAddress; spantaleev/matrix-docker-ansible-deploy#2860, docker/hub-feedback#2349, moby/moby#17252"},
	// Go on Windows prints the Winsock errno text from FormatMessage after
	// "connectex: " / "wsarecv: ": WSAETIMEDOUT "A connection attempt failed
	// because the connected party did not properly respond after a period of
	// time...", WSAECONNREFUSED "No connection could be made because the
	// target machine actively refused it.", WSAECONNRESET "An existing
	// connection was forcibly closed by the remote host.", WSAENETUNREACH /
	// WSAEHOSTUNREACH "A socket operation was attempted to an unreachable
	// network|host." (moby/moby#37127).
	{ID: "connect-timeout", Re: regexp.MustCompile(`(?i)dial tcp (?:\S+: )?(?:connect: )?(?:i/o timeout|connection timed out)|request canceled while waiting for connection|connect: connection timed out|connected party did not properly respond after a period of time`),
		Hint: []string{"dial tcp ", "request canceled while waiting for connection", "connect: connection timed out", "did not properly respond"}, Code: verdict.ConnectTimeout,
		Says: "the TCP connection timed out (packets leave, nothing comes back)", Source: "containerd-in-netns notes (registry and blob host black-holed); cri-o/cri-o#2723"},
	{ID: "connect-refused", Any: []string{"connection refused", "actively refused it"},
		Code: verdict.ConnectRefused,
		Says: "the TCP connection was refused", Source: "containerd-in-netns notes (refused)"},
	{ID: "connect-unreachable", Any: []string{"no route to host", "network is unreachable", "host is unreachable", "host unreachable", "attempted to an unreachable network", "attempted to an unreachable host"},
		Code: verdict.ConnectUnreachable,
		Says: "the node has no route to the address", Source: "containerd-in-netns notes (unused address on the node's subnet)"},
	{ID: "connect-reset", Any: []string{"connection reset by peer", "broken pipe", "forcibly closed by the remote host"},
		Code: verdict.ConnectReset,
		Says: "the connection was reset", Source: "Go syscall ECONNRESET in net.OpError"},
	// Go's dialer wraps every other socket errno the same way
	// (net.OpError "dial tcp ADDR: " + os.SyscallError "connect: "/"connectex: "/
	// "socket: "/"getsockopt: "), e.g. EINVAL from a nonsense proxy address.
	{ID: "connect-other", Re: regexp.MustCompile(`(?i)dial tcp \S*: (?:connect|connectex|getsockopt|socket|bind): `),
		Hint: []string{"dial tcp "}, Code: verdict.ConnectError,
		Says: "the TCP connection failed with a socket error other than refused, reset, unreachable or timed out", Source: "Go net.OpError/os.SyscallError; docker-archive-public/docker.kitematic#1838 (connect: invalid argument)"},

	// --- TLS verification (Go's crypto/x509 texts, with or without the Go >= 1.20 "tls: failed to verify certificate:" prefix)
	{ID: "tls-unknown-authority", Any: []string{"certificate signed by unknown authority", "unable to get local issuer certificate", "self signed certificate in certificate chain", "self-signed certificate"},
		Code: verdict.TLSUnknownAuthority,
		Says: "the server's certificate is signed by an authority the runtime does not trust", Source: "containerd-in-netns notes (TLS unknown CA); kubernetes/kubernetes#43924, #93556; goharbor/harbor#5066"},
	{ID: "tls-name-mismatch", Any: []string{"x509: certificate is valid for", "certificate is not valid for any names", "doesn't contain any ip sans", "relies on legacy common name field"},
		Code: verdict.TLSNameMismatch,
		Says: "the server's certificate is not valid for the name the node connects to", Source: "moby/moby#38787; k3s-io/k3s#2429; kubernetes/registry.k8s.io#264; containerd/containerd#6141"},
	{ID: "tls-not-yet-valid", All: []string{"certificate has expired or is not yet valid", "is before"},
		Code: verdict.TLSNotYetValid,
		Says: "the server's certificate is not valid yet (or the node's clock is behind)", Source: "Go crypto/x509 CertificateInvalidError (Expired, current time is before)"},
	{ID: "tls-expired", Any: []string{"certificate has expired"},
		Code: verdict.TLSExpired,
		Says: "the server's certificate has expired (or the node's clock is ahead)", Source: "Kong/charts#257"},
	{ID: "tls-plain-http", Any: []string{"server gave http response to https client"},
		Code: verdict.TLSHandshakeFailed,
		Says: "the server answered plain HTTP where the runtime expected TLS", Source: "Go net/http ErrSchemeMismatch text; docker insecure-registries"},
	{ID: "tls-handshake-failed", Any: []string{"tls: handshake failure", "first record does not look like a tls handshake", "remote error: tls", "tls: failed to verify certificate", "x509: "},
		Code: verdict.TLSHandshakeFailed,
		Says: "the TLS handshake failed", Source: "Go crypto/tls alert texts"},

	// --- blob storage that answers with its own error document
	// Google Cloud Storage's XML error (Container Registry's layers):
	// <Error><Code>AccessDenied</Code><Message>Access denied.</Message>
	// <Details>Anonymous caller does not have storage.objects.get access to
	// the Google Cloud Storage object. ...</Details></Error>
	{ID: "gcs-access-denied", Any: []string{"google cloud storage object", "storage.objects.get"},
		Code: verdict.BlobForbidden, Step: StepBlob,
		Says: "Cloud Storage refused the layer download (AccessDenied on storage.objects.get)",
		Advice: []string{
			"\"Anonymous caller\" means the node sent no credential: the node pool's access scopes lack devstorage.read_only or cloud-platform, so the kubelet's credential provider had no token to give; otherwise grant the node service account Storage Object Viewer on the registry's bucket (or Artifact Registry Reader on the gcr.io repository).",
			verdict.GCPAuditScopesHint,
		},
		Source: "actions/runner-images#7659 (Anonymous caller does not have storage.objects.get access); hayorov/helm-gcs#162"},
	{ID: "s3-access-denied", Any: []string{"<code>accessdenied</code>", "accessdenied"},
		Code: verdict.BlobForbidden, Step: StepBlob,
		Says:   "the blob storage (S3) refused the download: AccessDenied",
		Advice: []string{"S3 AccessDenied on a layer while the registry host works is usually the S3 gateway endpoint's policy: it must allow s3:GetObject on arn:aws:s3:::prod-REGION-starport-layer-bucket/* for ECR, or the redirect bucket of another registry."},
		Source: "moby/moby#34185; docker/hub-feedback#1318; awsdocs/amazon-ecr-user-guide#8"},
	{ID: "azure-authorization-failure", Any: []string{"authorizationfailure", "authorizationpermissionmismatch", "this request is not authorized to perform this operation"},
		Code: verdict.BlobForbidden, Step: StepBlob,
		Says:   "the Azure storage or data endpoint refused the download: AuthorizationFailure",
		Advice: []string{"Azure AuthorizationFailure from a storage or data endpoint means its firewall or network rules do not admit the node's path: the request did not come through the private endpoint (check that NAME.REGION.data.azurecr.io resolves to a private address on the node)."},
		Source: "microsoft/AzureStorageExplorer#3594, #8504 (AuthorizationFailure XML and its firewall meaning)"},
	{ID: "acr-firewall", All: []string{"client with ip", "is not allowed access"},
		Code:   verdict.RegistryForbidden,
		Says:   "the registry's firewall refused the node's public address",
		Advice: []string{"ACR saw the node's PUBLIC address: the pull did not go through the private endpoint. Check that the node resolves the registry (and its data endpoints) to private addresses through the privatelink.azurecr.io zone."},
		Source: "ACR 403 denied: client with IP is not allowed access (aka.ms/acr/firewall)"},

	// --- Google Cloud: VPC Service Controls and Artifact Registry's IAM
	{ID: "gcp-vpc-service-controls", Any: []string{"vpcservicecontrolsuniqueidentifier", "request is prohibited by organization's policy"},
		CodeFor: forbiddenFor,
		Says:    "VPC Service Controls refused the request: the registry's project and the nodes' network are on two sides of a service perimeter",
		Advice: []string{
			"A perimeter that restricts artifactregistry.googleapis.com (or containerregistry/storage for gcr.io) must hold the nodes' project (and the Shared VPC host project) beside the registry's, or admit them by an ingress rule; the identifier in the message finds the denial in the audit logs.",
			verdict.GCPAuditPerimeterHint,
		},
		Source: "GoogleCloudPlatform/cloud-sql-proxy#1686 (denied: Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier); GoogleCloudPlatform/terraform-google-cloud-functions#109"},
	{ID: "gar-unauthenticated", All: []string{"unauthenticated requests do not have permission", "artifactregistry."},
		CodeFor: unauthorizedFor,
		Says:    "Artifact Registry saw no credential: the pull went out anonymously",
		Advice: []string{
			"On GKE the kubelet's credential provider sends the node's token only when the node pool's access scopes include devstorage.read_only or cloud-platform; a pool without them pulls anonymously. Scopes of an existing pool cannot change: create a pool with --scopes cloud-platform.",
		},
		Source: "google/fuzzbench#1981 (Unauthenticated requests do not have permission \"artifactregistry.repositories.downloadArtifacts\")"},
	{ID: "gar-download-denied", Any: []string{"artifactregistry.repositories.downloadartifacts"},
		CodeFor: forbiddenFor,
		Says:    "Artifact Registry refused the pull: the identity lacks artifactregistry.repositories.downloadArtifacts on the repository",
		Advice: []string{
			"Grant the node pool's service account Artifact Registry Reader on the repository: `gcloud artifacts repositories add-iam-policy-binding REPO --location LOCATION --project PROJECT --member=serviceAccount:SA --role=roles/artifactregistry.reader` (new organizations no longer give the default compute account Editor). The message says \"(or it may not exist)\": check the repository path too.",
		},
		Source: "terraform-google-modules/terraform-google-kubernetes-engine#1779; crossplane/crossplane#3023; fluxcd/source-controller#798"},

	// --- the clouds' pull-through caches: the node reached the cache, and the
	// cache's own way to its upstream failed (its credentials, its rate
	// limit, its upstream's answer). The words are the caches': ACR cache
	// rules ("... with source registry for cache rule 'NAME'", "request to
	// fetch ... from source ... for cache rule 'NAME' returned status code
	// N"), Artifact Registry remote repositories ("failed to fetch bearer
	// token ... this typically means your upstream credentials are
	// invalid"), ECR pull-through cache rules ("The authentication to the
	// upstream registry failed. Verify that the credentials provided in the
	// pull through cache rule are correct", UnableToGetUpstreamImage).
	{ID: "cache-upstream-unauthorized", Any: []string{"authentication required with source registry for cache rule", "upstream credentials are invalid",
		"authentication to the upstream registry failed", "credentials provided in the pull through cache rule"},
		Code: verdict.CacheUpstreamUnauthorized,
		Says: "the registry's pull-through cache could not authenticate to its upstream: the node's path and identity are fine, the cache rule's upstream credentials are not",
		Advice: []string{
			"ACR: the cache rule's credential set (az acr credential-set show) and its Key Vault secrets, and the registry's identity's get permission on them (Key Vault Secrets User or an access policy); Artifact Registry: the remote repository's upstreamCredentials secret and the Artifact Registry service agent's roles/secretmanager.secretAccessor on it; ECR: the ecr-pullthroughcache/ Secrets Manager secret of the rule. Only images the cache has not stored yet fail: a cached tag still pulls.",
		},
		Source: "Azure/acr#599 (authentication required with source registry for cache rule); hashicorp/terraform-provider-google#17589 (Artifact Registry remote: upstream credentials are invalid); aws/containers-roadmap#2354 (ECR: The authentication to the upstream registry failed)"},
	{ID: "cache-upstream-rate-limited", Any: []string{"too many requests to source registry for cache rule"},
		Code: verdict.CacheUpstreamRateLimited,
		Says: "the registry's pull-through cache was rate-limited by its upstream on a cache miss",
		Advice: []string{
			"Give the cache rule upstream credentials (an authenticated Docker Hub account has a higher limit than the cache's anonymous address), and pull new tags through it before the nodes need them; Azure/acr#754.",
		},
		Source: "Azure/acr#754 (too many requests to source registry for cache rule)"},
	{ID: "cache-upstream-failed", Any: []string{"for cache rule '", "unable to be pulled using the pull through cache rule", "unabletogetupstreamimage"},
		Code:   verdict.CacheUpstreamFailed,
		Says:   "the registry's pull-through cache could not get the image from its upstream (the cache's request to the upstream failed)",
		Source: "Azure/acr#891 (request to fetch referrers from source ... for cache rule 'ghcr-io' returned status code 303); ECR UnableToGetUpstreamImageException"},
	// --- registry answers
	{ID: "http-408", Any: []string{"408 request time-out", "408 request timeout", "408 (request timeout)", "fetching blob: statuscode: 408"},
		Code: verdict.HTTPTimeout,
		Says: "the server gave up waiting for the request (408)", Source: "ClassmateLin/dm-ticket#94 (held-out set)"},
	// distribution's registry client: UnexpectedHTTPResponseError says the
	// status it could not parse a body for ("error parsing HTTP 403
	// response body: ..."): the status decides, not the body.
	{ID: "docker-parse-401", Any: []string{"error parsing http 401 response body"}, CodeFor: unauthorizedFor,
		Says: "the request was refused as unauthenticated (401, with a body that is not a registry error)", Source: "distribution registry/client/errors.go UnexpectedHTTPResponseError"},
	{ID: "docker-parse-403", Any: []string{"error parsing http 403 response body"}, CodeFor: forbiddenFor,
		Says: "the request was refused as forbidden (403, with a body that is not a registry error: often a proxy or firewall page)", Source: "distribution registry/client/errors.go UnexpectedHTTPResponseError"},
	{ID: "docker-parse-404", Any: []string{"error parsing http 404 response body"}, CodeFor: notFoundFor,
		Says: "the server has no such path (404, with a body that is not a registry error)", Source: "distribution registry/client/errors.go UnexpectedHTTPResponseError"},
	{ID: "docker-parse-429", Any: []string{"error parsing http 429 response body"}, Code: verdict.RateLimited,
		Says: "the registry rate-limited the pull (429)", Source: "distribution registry/client/errors.go UnexpectedHTTPResponseError"},
	{ID: "docker-parse-5xx", Any: []string{"error parsing http 500 response body", "error parsing http 502 response body", "error parsing http 503 response body", "error parsing http 504 response body"}, Code: verdict.RegistryServerError,
		Says: "the server answered with an error (5xx, with a body that is not a registry error)", Source: "distribution registry/client/errors.go UnexpectedHTTPResponseError"},
	{ID: "kubelet-pull-qps", Any: []string{"pull qps exceeded"},
		Code:   verdict.RateLimited,
		Says:   "the kubelet's own pull rate limit (registryPullQPS) was exceeded",
		Advice: []string{"This limit is the kubelet's, not the registry's: registryPullQPS / registryBurst in the kubelet configuration."},
		Source: "kubelet pkg/kubelet/images/puller.go (pull QPS exceeded)"},
	{ID: "rate-limited", Any: []string{"toomanyrequests", "too many requests", "pull rate limit", "rate exceeded", "status 429", "fetching blob: statuscode: 429"},
		Code: verdict.RateLimited,
		Says: "the registry rate-limited the pull", Source: "kata-containers/kata-containers#10109; dell/csi-baremetal#391; ceph/ceph-csi#2029"},
	{ID: "anonymous-token-refused", All: []string{"fetch anonymous token", "unexpected status"},
		Not:  []string{"500 internal server error", "502 bad gateway", "503 service unavailable", "504 gateway timeout", "internal server error", "service unavailable"},
		Code: verdict.AuthUnauthorized, Step: StepToken,
		Says: "the token service refused an anonymous token: the registry wants credentials the node did not send",
		Advice: []string{
			"containerd asked for an anonymous token, so it had no credentials for this host: whatever the status (401, 403, 404), give the runtime credentials (imagePullSecrets, the node's credential provider, or CRI auth for a mirror host) rather than changing the identity's permissions.",
		},
		Source: "containerd remotes/docker/authorizer.go (failed to fetch anonymous token); kubernetes/kubernetes#66162, containerd/cri#848"},
	// The kubelet of dockershim days (kubernetes#17086) decorated a failed
	// pull of an explicit registry for which it held no credentials: "image
	// pull failed for %s, this may be because there are no credentials on
	// this request.  details: (%v)"; with a not-found inside, the anonymous
	// pull cannot tell a missing image from a private one.
	{ID: "kubelet-no-credentials", All: []string{"there are no credentials on this request", "not found"},
		Code: verdict.AuthAmbiguous, Ambiguous: true,
		Says: "the kubelet held no credentials for this registry and the anonymous pull found nothing: a missing image, or a private one the node may not read",
		Advice: []string{
			"Check the name (registry, repository, tag) and the node's credentials for the registry: on GKE the node pool's scopes and service account, elsewhere an imagePullSecret.",
		},
		Source: "kubelet dockertools (image pull failed for %s, this may be because there are no credentials on this request); kubernetes/kubernetes#17086"},
	{ID: "pull-access-denied", Any: []string{"repository does not exist or may require", "requested access to the resource is denied", "insufficient_scope", "does not exist or no pull access"},
		// containerd wraps every ErrInvalidAuthorization in "pull access
		// denied": the inner cause, when it names missing or rejected
		// credentials, is not ambiguous.
		Not:  []string{"no basic auth credentials", "invalid_token"},
		Code: verdict.AuthAmbiguous, Ambiguous: true,
		Says: "the registry says the repository does not exist or needs authorization, and will not tell which",
		Advice: []string{
			"Check the name: the exact registry, repository path and tag in the Pod spec against what was pushed.",
			"Check the identity: whether the imagePullSecret or node identity may read this repository.",
		},
		Source: "docker pull access denied (moby distribution errors); cri-o/cri-o#2331; docker-archive/compose-cli#853"},
	{ID: "ecr-token-expired", Any: []string{"authorization token has expired"},
		Code: verdict.RegistryUnauthorized,
		Says: "the registry credentials have expired", Source: "ECR 403 'Your authorization token has expired'"},
	{ID: "token-rejected", Any: []string{"server message: invalid_token", "invalid_token"},
		Code: verdict.RegistryUnauthorized,
		Says: "the registry rejected the token it was given (invalid_token: expired or not for this registry)", Source: "containerd remotes/docker/authorizer.go invalidAuthorization (server message: invalid_token); RFC 6750 error codes"},
	{ID: "no-basic-auth-credentials", Any: []string{"no basic auth credentials"},
		Code: verdict.RegistryUnauthorized,
		Says: "the runtime had no credentials for this registry", Source: "aws/containers-roadmap#132 (ECR: no basic auth credentials)"},
	{ID: "unauthorized", Any: []string{"401 unauthorized", "unauthorized", "status code 401", "status: 401", "unauthenticated", "fetching blob: statuscode: 401", "authentication required", "invalid username or password"},
		CodeFor: unauthorizedFor,
		Says:    "the request was refused as unauthenticated (401)", Source: "containerd-in-netns notes (401); containerd/containerd#6141; distribution registry/api/errcode (UNAUTHORIZED: authentication required); Docker's error from registry: ... wording"},
	{ID: "forbidden", Any: []string{"403 forbidden", "forbidden", "denied: ", `"code":"denied"`, "status code 403", "status: 403", "fetching blob: statuscode: 403"},
		CodeFor: forbiddenFor,
		Says:    "the request was refused as forbidden (403)", Source: "aws-samples/bedrock-access-gateway#114, #127; aws/aws-cdk#14457; docker/sbx-releases#525"},
	{ID: "manifest-unknown", Any: []string{"manifest unknown", "manifest_unknown", "unknown manifest"},
		Code: verdict.ManifestNotFound, Step: StepManifest,
		Says: "the registry has no manifest for this tag or digest", Source: "teleproxy/teleproxy#49; distribution spec MANIFEST_UNKNOWN"},
	{ID: "manifest-not-found-docker", Re: regexp.MustCompile(`(?i)manifest for \S+ not found`),
		Hint: []string{"manifest for "}, Code: verdict.ManifestNotFound, Step: StepManifest,
		Says: "the registry has no manifest for this tag or digest", Source: "CybercentreCanada/assemblyline-docker-compose#50 (docker: manifest for X not found)"},
	{ID: "name-unknown", Any: []string{"name unknown", "name_unknown", "repository name not known to registry", "unknown repository"},
		Code: verdict.RepositoryNotFound,
		Says: "the repository does not exist in this registry", Source: "distribution spec NAME_UNKNOWN"},
	{ID: "repository-not-found", Re: regexp.MustCompile(`(?i)\b(?:repository|project) \S+ not found`),
		Hint: []string{" not found"}, Code: verdict.RepositoryNotFound,
		Says: "the registry says the repository (or its project) does not exist", Source: "moby distribution errors (repository %s not found: name unknown); Harbor (unknown: project/repository X not found)"},
	{ID: "blob-unknown", Any: []string{"blob unknown", "blob_unknown", "unknown blob"},
		Code: verdict.BlobNotFound, Step: StepBlob,
		Says: "a blob the manifest names is missing from the registry", Source: "distribution spec BLOB_UNKNOWN"},
	{ID: "digest-mismatch", Any: []string{"digest mismatch", "unexpected commit digest", "does not match digest", "digest did not match", "filesystem layer verification failed"},
		Code: verdict.BlobDigestMismatch, Step: StepBlob,
		Says: "a blob's bytes did not match its digest", Source: "containerd content.Commit (unexpected commit digest); moby distribution/pull_v2.go (filesystem layer verification failed for digest %s)"},
	{ID: "size-mismatch", Any: []string{"unexpected commit size", "size mismatch"},
		Code: verdict.BlobSizeMismatch, Step: StepBlob,
		Says: "a blob's length did not match the manifest", Source: "containerd content.Commit (unexpected commit size)"},
	{ID: "manifest-descriptor-not-found", Re: regexp.MustCompile(`(?i)could not fetch content descriptor \S+ \(application/vnd\.[^)]*manifest`),
		Hint: []string{"could not fetch content descriptor "}, Code: verdict.ManifestNotFound, Step: StepManifest,
		Says: "the registry would not serve a manifest the reference points to", Source: "munnerz/kube-plex#46 (held-out set)"},
	// containerd 1.5-1.7's resolver logs a host of the chain that answered
	// 404 as "trying next host - response was http.StatusNotFound" (later
	// "trying next host after status: 404 Not Found", commit 700b90618).
	{ID: "containerd-not-found", Re: regexp.MustCompile(`(?i)404 not found|404 \(not found\)|fetching blob: statuscode: 404|: not found\b|could not fetch content descriptor|response was http\.statusnotfound`),
		Hint: []string{"404 not found", "404 (not found)", "fetching blob: statuscode: 404", ": not found", "could not fetch content descriptor", "response was http.statusnotfound"}, CodeFor: notFoundFor,
		Says:   "the registry has no such image (the tag, or the whole repository, is missing)",
		Advice: []string{"containerd cannot tell a missing tag from a missing repository (the HEAD answer has no body): check both the repository path and the tag."},
		Source: "containerd-in-netns notes (unknown repository: REF: not found); kubernetes-sigs/provider-aws-test-infra#281; containerd remotes/docker/resolver.go (trying next host - response was http.StatusNotFound, k0sproject/k0s#5478)"},
	{ID: "server-error", Any: []string{"500 internal server error", "502 bad gateway", "503 service unavailable", "504 gateway timeout", "internal server error", "bad gateway", "service unavailable", "gateway timeout", "fetching blob: statuscode: 500", "fetching blob: statuscode: 502", "fetching blob: statuscode: 503", "fetching blob: statuscode: 504"},
		Code: verdict.RegistryServerError,
		Says: "the server answered with an error (5xx)", Source: "kubernetes-sigs/cri-tools#1608 (pinging container registry: Internal Server Error)"},
	{ID: "bad-response", Any: []string{"invalid character '<' looking for beginning of value", "malformed http response", "unexpected end of json input", "error parsing http", "400 bad request", "400 (bad request)", "fetching blob: statuscode: 400"},
		Code: verdict.HTTPBadResponse,
		Says: "the server answered something that is not a registry response", Source: "ClassmateLin/dm-ticket#94 (error parsing HTTP 408 response body)"},

	// --- timeouts after the connection was made, and bare deadlines
	{ID: "http-timeout", Any: []string{"client.timeout exceeded while awaiting headers", "timeout awaiting response headers"},
		CodeFor: timeoutFor,
		Says:    "the server accepted the connection but did not answer in time", Source: "Go net/http Client.Timeout text"},
	{ID: "read-timeout", Re: regexp.MustCompile(`read tcp \S+: i/o timeout`),
		Hint: []string{"read tcp "}, CodeFor: timeoutFor,
		Says: "the connection was made but the answer stopped coming (read timeout)", Source: "docker.kitematic (read tcp ... i/o timeout); docker/hub-feedback#554"},
	{ID: "io-timeout", Any: []string{"i/o timeout"},
		Code: verdict.ConnectTimeout,
		Says: "a connection timed out", Source: "xorbitsai/inference#1601 (download failed after attempts=6: dial tcp ...: i/o timeout)"},
	// The runtime gave up on a pull that made no progress (progress.go):
	// containerd's reporter logs "cancel pulling image REF because of no
	// progress in D", dockershim "Cancel pulling image "REF" because of no
	// progress for D, latest progress: "...", CRI-O "Timed out on waiting up
	// to D for image pull progress updates".
	{ID: "pull-progress-timeout", Re: regexp.MustCompile(`(?i)cancel pulling image \S+ because of no progress|timed out on waiting up to \S+ for image pull progress`),
		Hint: []string{"because of no progress", "for image pull progress"}, CodeFor: progressTimeoutFor,
		Says: "the runtime cancelled the pull because no byte arrived for its progress timeout: a stalled transfer on a slow or lossy path, a path MTU black hole, or a mirror or proxy that accepts and never answers",
		Advice: []string{
			"The host that stalled is in the runtime's log just before this line (containerd: the last request of the pull, `journalctl -u containerd`); `pullpath probe IMAGE` on the node times every host of the pull and proves an MTU black hole. Raise image_pull_progress_timeout only for a path that is slow but moving: a stalled one fails later instead.",
		},
		Source: "containerd internal/cri/server/images/image_pull.go (cancel pulling image %s because of no progress in %v); kubelet dockershim kube_docker_client.go (kubernetes#26677); CRI-O server/image_pull.go consumeImagePullProgress"},
	// The CRI answers a pull the runtime cancelled with codes.Canceled and
	// "context canceled": the kubelet's PullImage has no deadline (cri-client
	// remote_image.go: context.WithCancel) and never cancels a pull it is
	// waiting on, so on the node that is the runtime's progress timeout
	// (containerd >= 1.7), unless the kubelet itself stopped.
	{ID: "pull-cancelled", All: []string{"context canceled"}, Any: []string{"code = canceled", "failed to pull and unpack image", "pullimage \""},
		CodeFor: progressTimeoutFor,
		Says:    "the runtime cancelled the pull (code Canceled, context canceled): on a node that is containerd's image_pull_progress_timeout, no byte for that long",
		Advice: []string{
			"The line before it in the node's containerd log says so (cancel pulling image ... because of no progress in ...) with the timeout; `pullpath probe IMAGE` on the node times every host of the pull. A pod deleted while its image was pulling ends the same way: then nothing is wrong.",
		},
		Source: "containerd internal/cri/server/images/image_pull.go (the progress reporter cancels the pull's context); k8s.io/cri-client remote_image.go (no deadline on PullImage); kubernetes/kubernetes#131521, spegel-org/spegel#1159"},
	{ID: "deadline-exceeded", Any: []string{"context deadline exceeded", "deadlineexceeded", "context canceled", "request canceled"},
		CodeFor: timeoutFor, Ambiguous: true,
		Says: "the pull ran out of time without naming a cause (the runtime hit the kubelet's deadline)",
		Advice: []string{
			"A bare deadline hides the cause: a black-holed endpoint (route, security group, missing return path) and a server that accepts but never answers look the same here.",
			"Run `pullpath probe IMAGE` on the failing node to see which endpoint hangs.",
		},
		Source: "kubernetes/minikube#15626; moby/moby#36385"},
	{ID: "eof", Re: regexp.MustCompile(`(?i)(?:: |\b)(?:unexpected )?EOF\s*$|: EOF\b|unexpected EOF`),
		Hint: []string{"eof"}, Code: verdict.ConnectReset,
		Says: "the connection was closed before the answer was complete (EOF)", Source: "Go io.EOF / io.ErrUnexpectedEOF in net/http"},

	// --- a pull failure whose cause is not in this message
	{ID: "kubelet-backoff", Any: []string{"back-off pulling image", "imagepullbackoff", "error: errimagepull"},
		Code: verdict.Other,
		Says: "the kubelet reports the pull failed or is backing off; the cause is in the Failed event that carries the runtime's message", Source: "kubelet image_manager.go (BackOff: Back-off pulling image; Failed: Error: ErrImagePull)"},
	{ID: "unclassified-pull-failure", Any: []string{"errimagepull", "failed to pull image", "failed to pull and unpack image", "pulling image failed", "error pulling image", "error while pulling image", "failed to resolve reference", "failed to copy"},
		Code: verdict.Other,
		Says: "the pull failed for a reason this classifier does not know", Source: "kubelet ErrImagePull"},
}
