package verdict

// Code names one exact finding. Codes are stable: scripts may match on them.
type Code string

// Info describes a code: its cause, its default condition, what it means and
// where to look. docs/verdicts.md is this table, kept equal by a test.
type Info struct {
	Code      Code
	Cause     Cause
	Condition Condition // the default; a network failure on an auth or blob host while the registry host works becomes endpoint-set
	Warning   bool      // a finding that does not stop the pull
	Meaning   string
	Where     string
}

const (
	OK Code = "OK"

	// reference and local configuration
	ReferenceInvalid Code = "REFERENCE_INVALID"
	NeverPull        Code = "NEVER_PULL"
	CredentialsError Code = "CREDENTIALS_ERROR"

	// CRI-O's registries.conf mirrors (containers/image), issue 37
	MirrorDigestOnly Code = "MIRROR_DIGEST_ONLY"
	MirrorTagOnly    Code = "MIRROR_TAG_ONLY"

	// name resolution
	DNSNXDomain     Code = "DNS_NXDOMAIN"
	DNSServFail     Code = "DNS_SERVFAIL"
	DNSRefused      Code = "DNS_REFUSED"
	DNSTimeout      Code = "DNS_TIMEOUT"
	DNSNoAnswer     Code = "DNS_NO_ANSWER"
	DNSNoNameserver Code = "DNS_NO_NAMESERVER"
	DNSPublicAnswer Code = "DNS_PUBLIC_ANSWER"
	DNSError        Code = "DNS_ERROR"

	// connection
	ConnectTimeout     Code = "CONNECT_TIMEOUT"
	ConnectRefused     Code = "CONNECT_REFUSED"
	ConnectUnreachable Code = "CONNECT_UNREACHABLE"
	ConnectReset       Code = "CONNECT_RESET"
	ConnectError       Code = "CONNECT_ERROR"

	// TLS
	TLSUnknownAuthority Code = "TLS_UNKNOWN_AUTHORITY"
	TLSNameMismatch     Code = "TLS_NAME_MISMATCH"
	TLSExpired          Code = "TLS_EXPIRED"
	TLSNotYetValid      Code = "TLS_NOT_YET_VALID"
	TLSHandshakeTimeout Code = "TLS_HANDSHAKE_TIMEOUT"
	TLSHandshakeFailed  Code = "TLS_HANDSHAKE_FAILED"
	// a path MTU black hole, proved with clamped connections (issue 38)
	PathMTUBlackHole Code = "PATH_MTU_BLACKHOLE"
	// a pull that works but takes longer than --pull-budget (issue 38)
	PullSlow Code = "PULL_SLOW"

	// HTTP exchanges with the registry, token service and blob hosts
	HTTPTimeout          Code = "HTTP_TIMEOUT"
	HTTPBadResponse      Code = "HTTP_BAD_RESPONSE"
	RegistryUnauthorized Code = "REGISTRY_UNAUTHORIZED"
	RegistryForbidden    Code = "REGISTRY_FORBIDDEN"
	RegistryServerError  Code = "REGISTRY_SERVER_ERROR"
	RateLimited          Code = "RATE_LIMITED"
	ChallengeInvalid     Code = "CHALLENGE_INVALID"
	AuthUnauthorized     Code = "AUTH_UNAUTHORIZED"
	AuthForbidden        Code = "AUTH_FORBIDDEN"
	AuthAmbiguous        Code = "AUTH_OR_NOT_FOUND"

	// manifest
	ManifestNotFound   Code = "MANIFEST_NOT_FOUND"
	RepositoryNotFound Code = "REPOSITORY_NOT_FOUND"
	ManifestInvalid    Code = "MANIFEST_INVALID"
	ManifestTooLarge   Code = "MANIFEST_TOO_LARGE"
	PlatformNotFound   Code = "PLATFORM_NOT_FOUND"

	// blobs
	BlobNotFound       Code = "BLOB_NOT_FOUND"
	BlobForbidden      Code = "BLOB_FORBIDDEN"
	BlobDigestMismatch Code = "BLOB_DIGEST_MISMATCH"
	BlobSizeMismatch   Code = "BLOB_SIZE_MISMATCH"
	BlobStalled        Code = "BLOB_STALLED"
	RedirectLoop       Code = "REDIRECT_LOOP"
	RedirectInvalid    Code = "REDIRECT_INVALID"

	// warnings: the pull works today, but will bite later
	HostsFileEntry     Code = "HOSTS_FILE_ENTRY"
	HostsFileLine      Code = "HOSTS_FILE_LINE_SKIPPED"
	AddressUnreachable Code = "ADDRESS_UNREACHABLE"
	MirrorFailed       Code = "MIRROR_FAILED"
	TLSVerifySkipped   Code = "TLS_VERIFY_SKIPPED"
	PlainHTTP          Code = "PLAIN_HTTP"
	QuickCheck         Code = "QUICK_CHECK"

	// the runtime's proxy (HTTP(S)_PROXY, NO_PROXY): failures, then warnings
	ProxyDNS             Code = "PROXY_DNS"
	ProxyRefused         Code = "PROXY_REFUSED"
	ProxyTimeout         Code = "PROXY_TIMEOUT"
	ProxyUnreachable     Code = "PROXY_UNREACHABLE"
	ProxyConnectError    Code = "PROXY_CONNECT_ERROR"
	ProxyAuthRequired    Code = "PROXY_AUTH_REQUIRED"
	ProxyDenied          Code = "PROXY_DENIED"
	ProxyUpstreamFailed  Code = "PROXY_UPSTREAM_FAILED"
	ProxyNoProxyMiss     Code = "PROXY_NO_PROXY_MISS"
	ProxyTLSIntercepted  Code = "PROXY_TLS_INTERCEPTED"
	ProxyEnvCaseConflict Code = "PROXY_ENV_CASE_CONFLICT"
	ProxyURLNoScheme     Code = "PROXY_URL_NO_SCHEME"
	ProxyURLInvalid      Code = "PROXY_URL_INVALID"
	ProxyHTTPSMissing    Code = "PROXY_HTTPS_MISSING"
	ProxyRestartPending  Code = "PROXY_RESTART_PENDING"
	ProxyFromFiles       Code = "PROXY_FROM_FILES"
	ProxyNoProxyCIDR     Code = "PROXY_NO_PROXY_CIDR"
	ProxyTLSInterception Code = "PROXY_TLS_INTERCEPTION"
	// the proxy's far side: a tunnel it accepted and broke (issue 38)
	ProxyTunnelBroken Code = "PROXY_TUNNEL_BROKEN"
	ProxyTunnelNotTLS Code = "PROXY_TUNNEL_NOT_TLS"
	ProxyAuthScheme   Code = "PROXY_AUTH_SCHEME_UNSUPPORTED"

	// mirrors and pull-through caches (hosts.toml chains, issue 23)
	MirrorStalled       Code = "MIRROR_STALLED"
	MirrorChainTimeout  Code = "MIRROR_CHAIN_TIMEOUT"
	MirrorNotRegistry   Code = "MIRROR_NOT_REGISTRY"
	MirrorChainSlow     Code = "MIRROR_CHAIN_SLOW"
	MirrorHidesUpstream Code = "MIRROR_HIDES_UPSTREAM"
	MirrorHeadMismatch  Code = "MIRROR_HEAD_GET_MISMATCH"
	MirrorRateLimited   Code = "MIRROR_RATE_LIMITED"

	// the runtime's own configuration files (issue 37)
	RuntimeConfigIgnored  Code = "RUNTIME_CONFIG_IGNORED"
	RuntimeConfigRefused  Code = "RUNTIME_CONFIG_REFUSED"
	RuntimeRestartPending Code = "RUNTIME_RESTART_PENDING"

	// address families (IPv4, IPv6, dual-stack)
	AddressFamilyUnusable Code = "ADDRESS_FAMILY_UNUSABLE"
	IPv6PathBroken        Code = "IPV6_PATH_BROKEN"
	IPv4PathBroken        Code = "IPV4_PATH_BROKEN"

	// the runtime's own refusals before any packet (containers/image: CRI-O, OpenShift, podman)
	ShortNameUnresolved   Code = "SHORT_NAME_UNRESOLVED"
	PolicyRejected        Code = "POLICY_REJECTED"
	RegistryBlocked       Code = "REGISTRY_BLOCKED"
	RegistriesConfInvalid Code = "REGISTRIES_CONF_INVALID"

	// the runtime gave up on a pull that made no progress
	PullProgressTimeout Code = "PULL_PROGRESS_TIMEOUT"

	// the clouds' pull-through caches (ACR cache rules, Artifact Registry
	// remote repositories, ECR pull-through cache rules): the node reached
	// the cache, the cache's own way to its upstream failed
	CacheUpstreamUnauthorized Code = "CACHE_UPSTREAM_UNAUTHORIZED"
	CacheUpstreamRateLimited  Code = "CACHE_UPSTREAM_RATE_LIMITED"
	CacheUpstreamFailed       Code = "CACHE_UPSTREAM_FAILED"

	Other Code = "OTHER"
)

const (
	whereRoute = "The node subnet's route table and effective routes, security groups / NSGs and NACLs on both sides, the firewall, and the return path from the registry network to the node subnet"
	whereDNS   = "The resolver the node actually uses (/etc/resolv.conf on the node, VNet/VPC DNS settings) and whether the private zone is linked to the node's network"
	whereTLS   = "The server certificate's names and issuer, and the CA the node's runtime trusts (/etc/containerd/certs.d/HOST/, the node's system trust store)"
	whereID    = "The pull identity: imagePullSecret or node credentials, and its read permission on this repository"
	wherePxURL = "The proxy URL of the runtime's environment (HTTPS_PROXY / HTTP_PROXY of the containerd process: its systemd drop-ins, /etc/environment, k3s/rke2 CONTAINERD_*_PROXY)"
)

// Codes is the one table of every code, in documentation order.
var Codes = []Info{
	{OK, CauseOK, ConditionNone, false, "The whole pull succeeded: every endpoint resolved, connected, passed TLS and authorization, and every byte matched its digest.", "Nothing to fix from this node. If Pods still fail, check other nodes and pools (`pullpath explain`)."},

	{ReferenceInvalid, CauseInvalidName, ConditionImage, false, "The image reference does not parse the way the kubelet and containerd parse it.", "The `image:` field of the Pod spec."},
	{NeverPull, CauseNeverPull, ConditionImage, false, "imagePullPolicy is Never and the image is not on the node.", "The Pod's imagePullPolicy, or pre-load the image on every node of the pool."},
	{CredentialsError, CauseUnauthorized, ConditionTLSIdentity, false, "The node's credentials could not be produced (credential helper failed or is missing).", "The credential helper named in the docker config and the identity it uses (instance role, kubelet identity)."},
	{MirrorDigestOnly, CauseOther, ConditionImage, true, "A mirror of the image's registry is used for pulls by digest only (`mirror-by-digest-only = true`, or `pull-from-mirror = \"digest-only\"`: what OpenShift's ImageContentSourcePolicy and ImageDigestMirrorSet render) and this pull is by tag: CRI-O goes to the source registry, not the mirror. In a disconnected cluster the source is unreachable.", "Pull by digest (`image@sha256:...`), add an ImageTagMirrorSet (`pull-from-mirror = \"tag-only\"`) or set `pull-from-mirror = \"all\"` on the mirror in the registries.conf file named in the warning."},
	{MirrorTagOnly, CauseOther, ConditionImage, true, "A mirror of the image's registry is used for pulls by tag only (`pull-from-mirror = \"tag-only\"`, what OpenShift's ImageTagMirrorSet renders) and this pull is by digest: CRI-O skips that mirror.", "An ImageDigestMirrorSet for the digest pulls, or `pull-from-mirror = \"all\"` on the mirror in the registries.conf file named in the warning."},

	{DNSNXDomain, CauseDNS, ConditionDNS, false, "The node's resolver says the name does not exist (NXDOMAIN).", whereDNS + "; for private endpoints, the private zone (privatelink.azurecr.io, VPC endpoint private DNS) and its link to the node's VNet/VPC."},
	{DNSServFail, CauseDNS, ConditionDNS, false, "The node's resolver failed to resolve the name (SERVFAIL): a forwarder or the zone's servers are broken or unreachable from the resolver.", whereDNS + "; the resolver's forwarders and conditional forwarding rules."},
	{DNSRefused, CauseDNS, ConditionDNS, false, "The node's resolver refused the query (REFUSED): it does not serve this zone or this client.", whereDNS + "."},
	{DNSTimeout, CauseDNS, ConditionDNS, false, "No nameserver of the node answered in time.", "The path from the node to its nameservers (routes, security rules on UDP/TCP 53) and the nameservers themselves."},
	{DNSNoAnswer, CauseDNS, ConditionDNS, false, "The name exists but has no address record (for example a CNAME into a private zone that has no record for it).", whereDNS + "; the A records in the private zone for this exact name."},
	{DNSNoNameserver, CauseDNS, ConditionDNS, false, "The node's resolv.conf names no nameserver.", "The node's /etc/resolv.conf and the DHCP options of its network."},
	{DNSPublicAnswer, CauseDNS, ConditionDNS, false, "The name resolved to a public address where a private one was expected: private DNS is off or the private zone is not linked, so the node tries the internet.", "Private DNS on the interface endpoint (PrivateDnsEnabled), or the privatelink zone's link to the node's VNet and its A records."},
	{DNSError, CauseDNS, ConditionDNS, false, "Name resolution failed in another way (malformed answer, truncated and unusable).", whereDNS + "."},

	{ConnectTimeout, CauseTimeout, ConditionRoute, false, "The TCP connection timed out: packets leave but nothing comes back (no route, a security rule that drops, or no return path).", whereRoute + "."},
	{ConnectRefused, CauseRefused, ConditionRoute, false, "The TCP connection was refused: something answered with a reset (nothing listens on that port, or a firewall rejects).", "The address and port the name resolves to, the service behind it, and firewalls that reject rather than drop."},
	{ConnectUnreachable, CauseUnreachable, ConditionRoute, false, "The node has no route to the address (network or host unreachable).", "The node's own routes (`ip route get ADDR` on the node), the subnet's route table, and for addresses on the node's own subnet whether that host exists (an endpoint ENI missing in this subnet)."},
	{ConnectReset, CauseReset, ConditionRoute, false, "The connection was reset by a middlebox or the server.", whereRoute + "; proxies and TLS-inspecting firewalls."},
	{ConnectError, CauseOther, ConditionRoute, false, "The connection failed in another way.", whereRoute + "."},

	{TLSUnknownAuthority, CauseTLS, ConditionTLSIdentity, false, "The server's certificate is signed by an authority the node's runtime does not trust.", whereTLS + "."},
	{TLSNameMismatch, CauseTLS, ConditionTLSIdentity, false, "The server's certificate is not valid for the name the node connects to.", whereTLS + "; the names (SANs) the certificate lists."},
	{TLSExpired, CauseTLS, ConditionTLSIdentity, false, "The server's certificate has expired.", whereTLS + "; renew it."},
	{TLSNotYetValid, CauseTLS, ConditionTLSIdentity, false, "The server's certificate is not valid yet (or the node's clock is wrong).", whereTLS + "; the node's clock (NTP)."},
	{TLSHandshakeTimeout, CauseTimeout, ConditionRoute, false, "TCP connected but the TLS handshake did not finish in time: often an MTU problem or a middlebox that drops large packets.", whereRoute + "; path MTU and TLS-inspecting firewalls."},
	{PathMTUBlackHole, CauseTimeout, ConditionRoute, false, "A path MTU black hole, proved: TCP connected but the TLS handshake or a body stalled, and the same exchange completed on a new connection whose MSS was clamped (TCP_MAXSEG) while the node's own MSS stalled again. A tunnel, VPN or gateway on the path carries smaller packets than the node sends, and the ICMP \"fragmentation needed\" (type 3 code 4) that would tell the sender never arrives. The summary names the MSS that works and the one that does not (so the path MTU), and the node's interface and route MTU toward the address.", "MSS clamping on the tunnel or gateway to the path MTU less 40 (IPv4) or 60 (IPv6): Azure VPN gateway, clamp TCP MSS at 1350 on the on-premises device; AWS Site-to-Site VPN, the customer gateway's tcp adjust-mss 1379; Linux routers, nftables `tcp flags syn tcp option maxseg size set rt mtu` in the forward chain. Or let ICMP type 3 code 4 back to the node through every firewall and security group on the return path; or lower the node's MTU (or the route's advmss) toward the registry network."},
	{TLSHandshakeFailed, CauseTLS, ConditionTLSIdentity, false, "The TLS handshake failed (protocol error, the port does not speak TLS, or a client certificate is required).", whereTLS + "; whether the port speaks TLS at all."},

	{HTTPTimeout, CauseTimeout, ConditionRegistry, false, "The server accepted the connection but did not answer the request in time.", "The server's health and anything between (proxies, load balancers)."},
	{HTTPBadResponse, CauseOther, ConditionRegistry, false, "The server answered something that is not a valid registry response.", "What actually listens at that address: a proxy, a captive portal, the wrong service."},
	{RegistryUnauthorized, CauseUnauthorized, ConditionTLSIdentity, false, "The registry refused the request as unauthenticated (401): no credentials, or wrong ones.", whereID + "; routes and DNS are fine if this is the answer."},
	{RegistryForbidden, CauseForbidden, ConditionTLSIdentity, false, "The registry refused the request as forbidden (403 / DENIED): the identity lacks read on this repository.", whereID + "."},
	{RegistryServerError, CauseOther, ConditionRegistry, false, "The registry answered with a server error (5xx).", "The registry's own health and status page."},
	{RateLimited, CauseRateLimit, ConditionRegistry, false, "The registry rate-limited the pull (429 / TOOMANYREQUESTS).", "Authenticate pulls, use a pull-through cache or mirror, or wait out the window."},
	{ChallengeInvalid, CauseOther, ConditionRegistry, false, "The registry's 401 challenge (WWW-Authenticate) is missing or malformed.", "The registry or a proxy in front of it that strips or rewrites headers."},
	{AuthUnauthorized, CauseUnauthorized, ConditionTLSIdentity, false, "The token service refused the node's credentials (401).", whereID + "."},
	{AuthForbidden, CauseForbidden, ConditionTLSIdentity, false, "The token service refused the requested scope (403 / insufficient_scope): the identity cannot read this repository.", whereID + "; for ACR the AcrPull role of the kubelet identity, for ECR the node role's ecr:BatchGetImage and ecr:GetDownloadUrlForLayer."},
	{AuthAmbiguous, CauseUnauthorized, ConditionTLSIdentity, false, "The registry says the repository does not exist or needs authorization: it will not tell which.", "Both: the exact repository name and tag, and the pull identity's read permission."},

	{ManifestNotFound, CauseNotFound, ConditionImage, false, "The repository exists but this tag or digest does not.", "The tag or digest in the Pod spec, and what was pushed."},
	{RepositoryNotFound, CauseNotFound, ConditionImage, false, "The repository does not exist in this registry (NAME_UNKNOWN).", "The repository name in the Pod spec, and the registry it was pushed to."},
	{ManifestInvalid, CauseOther, ConditionRegistry, false, "The manifest could not be parsed or has an unknown media type.", "How the image was pushed, and the registry's support for its media type."},
	{ManifestTooLarge, CauseOther, ConditionRegistry, false, "The manifest is larger than any sane manifest (a runtime would refuse it too).", "What the registry serves at that address."},
	{PlatformNotFound, CausePlatform, ConditionImage, false, "The image index has no manifest for the node's platform.", "The platforms the image was built for (`docker buildx imagetools inspect`), and the node pool's architecture."},

	{BlobNotFound, CauseNotFound, ConditionRegistry, false, "A blob the manifest names is missing from the registry or its storage.", "The registry's storage; push the image again."},
	{BlobForbidden, CauseForbidden, ConditionEndpointSet, false, "The blob storage host refused the download (S3 AccessDenied, Azure AuthorizationFailure): typically an endpoint policy or storage firewall that the registry host does not have.", "The S3 gateway endpoint policy (it must allow the registry's layer bucket), or the storage account / data endpoint firewall for ACR."},
	{BlobDigestMismatch, CauseDigest, ConditionRegistry, false, "A blob's bytes do not match its digest: corrupted in storage or rewritten in transit.", "The registry's storage and any proxy that rewrites content."},
	{BlobSizeMismatch, CauseDigest, ConditionRegistry, false, "A blob's length does not match the size in the manifest.", "The registry's storage and any proxy that truncates content."},
	{BlobStalled, CauseTimeout, ConditionRoute, false, "A blob download started but stalled (no bytes for too long): a path that passes small packets but drops or throttles a bulk transfer.", "Path MTU, firewalls and proxies on the path to the blob host, and the blob host's throughput."},
	{RedirectLoop, CauseOther, ConditionRegistry, false, "Blob redirects went on past the hop limit or looped.", "The registry's storage redirect configuration and any proxy in front of the blob host."},
	{RedirectInvalid, CauseOther, ConditionRegistry, false, "A redirect had no usable Location.", "The registry's storage redirect configuration."},

	{HostsFileEntry, CauseDNS, ConditionDNS, true, "The name was answered by the node's hosts file: it works on this node, and silently vanishes when the node is replaced or a new node joins.", "Managed private DNS (a private zone linked to the VNet/VPC) instead of hosts-file entries."},
	{HostsFileLine, CauseDNS, ConditionDNS, true, "A line of the node's hosts file is not ADDRESS NAME...: glibc and Go skip it, and so does the probe; whatever it was meant to pin is not pinned.", "The line of the node's hosts file the warning names."},
	{AddressUnreachable, CauseTimeout, ConditionRoute, true, "One of the name's addresses does not connect while another does: pulls are slow or fail at random.", whereRoute + "; the endpoint's ENI or private IP in each subnet."},
	{MirrorFailed, CauseOther, ConditionRoute, true, "A mirror from hosts.toml failed and the runtime falls back to the next host.", "The mirror's path from this node, and /etc/containerd/certs.d/HOST/hosts.toml."},
	{TLSVerifySkipped, CauseTLS, ConditionTLSIdentity, true, "Certificate verification is skipped (skip_verify / insecure): the pull works, but without proof of the server's identity.", whereTLS + "."},
	{PlainHTTP, CauseOther, ConditionTLSIdentity, true, "The registry is reached over plain HTTP.", "The runtime's registry config; prefer TLS with a trusted certificate."},
	{PullSlow, CauseTimeout, ConditionRoute, true, "The pull works, but at the rate measured the whole image takes longer than --pull-budget (default 5m). The kubelet puts no deadline on a pull and pulls one image at a time by default (serializeImagePulls), so every pull behind it on the node waits as long; the summary names the rate per blob host and the node's progress timeout.", "The path's throughput to the blob host the summary names (a thin VPN or circuit, loss on it, a rate-limited gateway or proxy), a mirror or pull-through cache nearer the nodes, a smaller image; the kubelet's serializeImagePulls: false (with maxParallelImagePulls) so one slow pull does not hold the node's others."},
	{QuickCheck, CauseOther, ConditionNone, true, "Only the first bytes of each blob were fetched (--quick): digests were not verified.", "Run again without --quick to download and verify every byte."},

	// the runtime's proxy: containerd sends every request through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY matches its host (Go's rules)
	{ProxyDNS, CauseDNS, ConditionProxy, false, "The node cannot resolve the proxy's own name. Through a proxy the node resolves only the proxy; the proxy resolves the registry.", wherePxURL + "; the node's resolver for the proxy's name."},
	{ProxyRefused, CauseRefused, ConditionProxy, false, "Nothing accepts connections at the proxy's address and port (`proxyconnect tcp: ... connection refused`): the proxy is down, or the URL's host or port is wrong. The registry was never contacted.", wherePxURL + "; the proxy service and its listening port."},
	{ProxyTimeout, CauseTimeout, ConditionProxy, false, "The proxy does not answer: the TCP connect to it, or its answer to CONNECT, timed out.", wherePxURL + "; the route and security rules from the node to the proxy's port, and the proxy's health."},
	{ProxyUnreachable, CauseUnreachable, ConditionProxy, false, "The node has no route to the proxy's address.", wherePxURL + "; the node's routes to the proxy (`ip route get PROXY` on the node)."},
	{ProxyConnectError, CauseOther, ConditionProxy, false, "The connection to the proxy failed in another way: reset, closed during CONNECT, or what listens there is not an HTTP proxy (an https:// proxy URL for a plain proxy, or the reverse).", wherePxURL + "; what listens at the proxy's address."},
	{ProxyAuthRequired, CauseUnauthorized, ConditionProxy, false, "The proxy demands authentication (407 Proxy Authentication Required) and the runtime's proxy URL has no, or wrong, credentials. Registry credentials and pull secrets are not sent to the proxy.", "The user:password in the proxy URL of the runtime's environment (`http://USER:PASSWORD@proxy:PORT`, percent-encoded; in a systemd drop-in a literal % is written %%), and the proxy's user database. AKS's httpProxyConfig does not support proxy credentials."},
	{ProxyDenied, CauseForbidden, ConditionProxy, false, "The proxy refuses to open a tunnel to this host (403 Forbidden or another refusal of CONNECT): its ACL does not allow the destination. The registry never saw the request, so this is not the registry's 403.", "The proxy's ACL for the destination host and port 443 (squid: http_access, dstdomain, SSL_ports), or NO_PROXY, when this host should not go through the proxy at all."},
	{ProxyUpstreamFailed, CauseOther, ConditionProxy, false, "The proxy accepted the CONNECT but could not reach the destination (a 5xx: 502 Bad Gateway, 503 Service Unavailable, 504 Gateway Timeout, squid's 500 when it cannot forward): the far side of the proxy is broken (the proxy's DNS, routes or egress to the registry), not the node.", "The proxy's logs for this host (squid access.log), its DNS view and its egress route to the registry; for an internal registry, NO_PROXY, so the node goes direct."},
	{ProxyAuthScheme, CauseUnauthorized, ConditionProxy, false, "The proxy demands authentication (407) and its challenges offer only schemes containerd's Go client cannot speak (NTLM, Negotiate/Kerberos): Go answers a proxy with Basic credentials from the proxy URL and nothing else, so no user:password in HTTPS_PROXY can help.", "A local authenticating proxy on the node that speaks NTLM or Kerberos to the corporate proxy and plain HTTP to containerd (cntlm, px) as the runtime's HTTPS_PROXY; or a proxy rule that lets the nodes' addresses through without authentication (or offers them Basic)."},
	{ProxyTunnelBroken, CauseReset, ConditionProxy, false, "The proxy answered CONNECT with 200 and then broke the tunnel: it reset or closed the connection, or went silent, before the registry's TLS answer came through. The proxy accepted the tunnel and its far side broke it (its path to the registry, a filter or upstream proxy behind it): not the node's route, not the registry's certificate.", "The proxy's log for this CONNECT (squid access.log: TCP_TUNNEL with few bytes and a short duration), its egress and filtering toward the registry (an SNI or category filter, an upstream proxy, its own timeouts); for an internal registry, NO_PROXY."},
	{ProxyTunnelNotTLS, CauseOther, ConditionProxy, false, "The proxy answered CONNECT with 200 and then the tunnel carried something that is not TLS where the registry's TLS answer belongs (an HTML page: a captive portal, or the proxy's block page written into the tunnel; the summary shows its start). containerd fails with `http: server gave HTTP response to HTTPS client` when the bytes start as an HTTP answer, else `tls: first record does not look like a TLS handshake`.", "The proxy's policy for this destination (a sign-in portal, a block or warning page for its category); an exemption for the registry's hosts, or NO_PROXY."},
	{ProxyNoProxyMiss, CauseOther, ConditionProxy, false, "An internal host goes through the proxy because no NO_PROXY entry matches it, and the proxy cannot reach or refuses it. IP and CIDR entries of NO_PROXY match IP literals only: Go never compares them with the address a name resolves to.", "NO_PROXY of the runtime's environment: add the host name or its domain (`.example.internal`), not only its subnet; then restart the runtime."},
	{ProxyTLSIntercepted, CauseTLS, ConditionTLSIdentity, false, "The certificate presented through the proxy is not the registry's: the proxy intercepts TLS (the summary names the issuer) and the node does not trust the interceptor's CA.", "Either the interception CA in the node's trust (the system trust store, or /etc/containerd/certs.d/HOST/ca.crt) and a restart of the runtime, or a bypass for the registry: NO_PROXY on the node, or the proxy's TLS-inspection exemption list."},
	{ProxyEnvCaseConflict, CauseOther, ConditionProxy, true, "The upper- and lower-case proxy variables of the runtime hold different values: containerd (Go) uses the upper-case one, curl and most other tools the lower-case one, so a test from a shell can prove another path than the runtime's.", "The runtime's environment (its systemd unit and drop-ins): set both cases to the same value."},
	{ProxyURLNoScheme, CauseOther, ConditionProxy, true, "A proxy URL has no scheme: Go assumes http://, other tools may not.", "The runtime's environment: write the proxy as http://HOST:PORT."},
	{ProxyURLInvalid, CauseOther, ConditionProxy, true, "A proxy value is not a URL Go can parse: containerd silently ignores it and goes direct.", "The runtime's environment: the proxy value (quoting in the systemd drop-in, a stray character)."},
	{ProxyHTTPSMissing, CauseOther, ConditionProxy, true, "HTTP_PROXY is set but HTTPS_PROXY is not: registries are https://, so the runtime's pulls go direct, not through the proxy.", "The runtime's environment: set HTTPS_PROXY as well (usually the same http:// proxy URL)."},
	{ProxyRestartPending, CauseOther, ConditionProxy, true, "The proxy settings in the runtime's files differ from those of the running process: the files changed after the runtime started (a restart is pending). The walk follows the running process.", "`systemctl daemon-reload && systemctl restart containerd` (or the k3s/rke2 service) on the node, after checking the files' values; the summary names both."},
	{ProxyFromFiles, CauseOther, ConditionProxy, true, "The running runtime's environment could not be read (no process seen, or no permission), so the proxy settings come from its files: a change not yet applied by a restart would not show.", "Run the probe as root on the node (it reads /proc/PID/environ of containerd), or pass the runtime's environment with --runtime-env FILE."},
	{ProxyNoProxyCIDR, CauseOther, ConditionProxy, true, "A NO_PROXY IP or CIDR entry covers the address this host name resolves to, but Go matches such entries against IP literals only: the runtime sends the host through the proxy anyway.", "NO_PROXY of the runtime's environment: add the host name or its domain if it is meant to go direct."},
	{ProxyTLSInterception, CauseTLS, ConditionTLSIdentity, true, "The pull works through a proxy that intercepts TLS (the certificate is issued by the interceptor, whose CA the node trusts): the proxy sees every request, including registry credentials.", "Whether interception of registry traffic is intended; a bypass for the registry in the proxy's TLS-inspection policy otherwise."},

	// mirrors and pull-through caches
	{MirrorStalled, CauseTimeout, ConditionRegistry, false, "A mirror of hosts.toml accepts the connection and never answers. containerd sets no response timeout and does not move on to the next host: 1.6 waits until the caller gives up (the kubelet's pull has no deadline), 1.7 and later cancel the whole pull after image_pull_progress_timeout. The pull fails even when the registry itself works.", "The mirror's service (a hung cache, a load balancer with no healthy backend), or take it out of /etc/containerd/certs.d/HOST/hosts.toml."},
	{MirrorChainTimeout, CauseTimeout, ConditionRoute, false, "Falling through the failing mirrors of hosts.toml holds the pull without a byte for longer than containerd's image_pull_progress_timeout: containerd cancels the pull before the registry serves it, though every host after them works.", "The failing mirrors' path from this node (each black-holed one costs containerd's 30 s dial timeout per request), their order in /etc/containerd/certs.d/HOST/hosts.toml, dial_timeout (containerd 1.7+), or image_pull_progress_timeout."},
	{MirrorNotRegistry, CauseOther, ConditionRegistry, false, "A mirror answered the manifest request with something that is not a registry's answer (an HTML page, a login or error page with status 200, a body whose digest does not match): containerd takes a 2xx as the answer and does not try the next host.", "What listens at the mirror's URL (a proxy's or portal's page, a wrong path or override_path in hosts.toml), and the cache's upstream setting."},
	{MirrorChainSlow, CauseTimeout, ConditionRoute, true, "A mirror of hosts.toml fails and containerd falls through to the next host, but only after waiting on it again for every request of the pull: every pull on this node is slower by that much.", "The failing mirror's path from this node, or its entry in /etc/containerd/certs.d/HOST/hosts.toml."},
	{MirrorHidesUpstream, CauseOther, ConditionRegistry, true, "A mirror or pull-through cache served the pull while the upstream registry itself fails from this node: the first tag the cache has not stored, or a node without the mirror, will fail.", "The upstream failure named in the warning: the registry's path, DNS, TLS and credentials from the nodes (and from the cache)."},
	{MirrorHeadMismatch, CauseOther, ConditionRegistry, true, "A mirror answers the manifest HEAD containerd resolves with differently from the GET (HEAD 404 or 5xx, GET 200; Harbor's proxy cache before 2.1.1): containerd resolves the tag elsewhere and may still fetch from the mirror.", "The cache's version and its HEAD support (Harbor 2.1.1 and later proxy the HEAD)."},
	{MirrorRateLimited, CauseRateLimit, ConditionRegistry, true, "A mirror or cache answered 429 (too many requests), usually its upstream's limit passed through: containerd retries it up to 5 times at once, then falls through to the next host.", "The cache's upstream credentials (an authenticated upstream has a higher limit) and its pull volume."},

	// the runtime's own configuration files
	{RuntimeConfigIgnored, CauseOther, ConditionNone, true, "Registry configuration that the node's runtime never reads: a hosts.toml under /etc/containerd/certs.d while containerd's config_path names other folders (k3s, rke2, Talos) or none (containerd 1.6 and 1.7 without config_path), a config file the running runtime was not started with, registry.configs TLS that containerd 2.x no longer reads, containerd's hosts.toml or config.toml on a node where CRI-O pulls. The warning names the file ignored and the one the runtime reads.", "The file the warning says the runtime reads (k3s and rke2: /etc/rancher/{k3s,rke2}/registries.yaml, rendered into /var/lib/rancher/*/agent/etc/containerd at start; Talos: the machine config's registries; containerd: config_path in its config.toml), then restart the runtime if its config.toml changed. `pullpath probe -o wide` lists every file read."},
	{RuntimeConfigRefused, CauseOther, ConditionNone, true, "The runtime's configuration holds something the runtime refuses: containerd's CRI plugin does not load when registry.mirrors (or, in 1.6 and 1.7, registry.configs TLS) is set beside config_path, and containerd does not start when an import is missing or a file does not parse. The walk follows what is readable; the runtime itself may not pull at all.", "The file and line the warning names; containerd's log (journalctl -u containerd: \"failed to load plugin\", \"failed to load TOML\"); `crictl info` answers only when the CRI plugin loaded."},
	{RuntimeRestartPending, CauseOther, ConditionNone, true, "The runtime's configuration changed after the running runtime started (or k3s's registries.yaml is newer than the containerd config it renders): the walk follows the files, the running runtime still uses what it read at start until it restarts.", "Restart the runtime (systemctl restart containerd, k3s, k3s-agent, rke2-server or rke2-agent) after checking the files; hosts.toml changes apply at the next pull without a restart."},

	// address families (IPv4, IPv6, dual-stack)
	{AddressFamilyUnusable, CauseUnreachable, ConditionRoute, false, "The host has no address in a family this node can use: for example only A records, asked from an IPv6-only node (or only AAAA from an IPv4-only one). The kernel has no route, so every dial fails at once with \"network is unreachable\".", "DNS64 on the node's resolver (Route 53 Resolver DNS64 on the subnet) with NAT64 behind it (a NAT gateway and a route for 64:ff9b::/96), or the cloud's IPv4 egress for IPv6 nodes and pods; else a dual-stack name for the host (ECR's ACCOUNT.dkr-ecr.REGION.on.aws) or an IPv4 address and route on the node."},
	{IPv6PathBroken, CauseTimeout, ConditionRoute, true, "The host's IPv6 addresses do not connect while its IPv4 addresses do. Go's dialer (containerd, the kubelet) sorts IPv6 first and falls back to IPv4 after 300 ms (Happy Eyeballs), or at once when IPv6 fails at once: every new connection pays up to that delay, and clients without the fallback fail.", "The node's IPv6 route (::/0: an egress-only internet gateway or NAT64 route in the subnet's route table), the security groups' / NSGs' and NACLs' IPv6 rules (::/0 entries), and the registry endpoint's IPv6 listener."},
	{IPv4PathBroken, CauseTimeout, ConditionRoute, true, "The host's IPv4 addresses do not connect while its IPv6 addresses do: pulls work over IPv6, and break wherever IPv6 is not there (an IPv4-only pool, a client that sorts IPv4 first).", whereRoute + "; the NAT gateway or internet gateway the subnet's 0.0.0.0/0 route names."},

	// the runtime's own refusals (containers/image: CRI-O, OpenShift, podman)
	{ShortNameUnresolved, CauseInvalidName, ConditionImage, false, "The runtime (CRI-O, podman: containers/image) refused a short image name (no registry host, such as nginx or team/app): no alias in registries.conf names it and no unqualified-search registries are set, or several are and short-name-mode enforcing refuses to guess. containerd and Docker complete docker.io; containers/image does not. Nothing was sent to any registry.", "The image: field of the Pod spec (write the registry: docker.io/library/nginx), or registries.conf on the node (/etc/containers/registries.conf and registries.conf.d: an alias under [aliases], or one unqualified-search-registries entry, or short-name-mode)."},
	{PolicyRejected, CausePolicy, ConditionImage, false, "The runtime's image policy (containers/image's policy.json, which CRI-O and OpenShift's allowedRegistries write) refused the image: its registry is not allowed, a required signature is missing or does not verify (\"Source image rejected\"), or the policy file itself is missing or invalid. The refusal is the node's configuration of which images may run, not the network.", "/etc/containers/policy.json on the node (and CRI-O's signature_policy and signature_policy_dir), OpenShift's image.config.openshift.io/cluster (registrySources.allowedRegistries, blockedRegistries) or ClusterImagePolicy; for signatures, the image's signatures and the key or identity the policy requires."},
	{RegistryBlocked, CauseForbidden, ConditionImage, false, "registries.conf marks the image's registry (or the prefix it falls under) blocked = true: the runtime refuses before any packet is sent. OpenShift writes it from blockedRegistries, or from an ImageDigestMirrorSet's mirrorSourcePolicy NeverContactSource (then only the mirrors may serve, and a pull by tag is not mirrored).", "/etc/containers/registries.conf and registries.conf.d on the node (the [[registry]] entry with blocked = true), and OpenShift's image.config.openshift.io/cluster or ImageDigestMirrorSet that wrote it; pull by digest when only digest mirrors exist."},
	{RegistriesConfInvalid, CauseOther, ConditionImage, false, "The runtime cannot use its registries.conf (or a registries.conf.d drop-in): a syntax error, an invalid prefix or location, an unknown short-name-mode, pull-from-mirror on a non-mirror. containers/image then refuses every pull it would resolve through that file.", "The file the message names on the node (/etc/containers/registries.conf, registries.conf.d/*.conf); `crio config` and `podman info` show the error too."},

	// the runtime gave up on a pull that made no progress
	{PullProgressTimeout, CauseTimeout, ConditionRoute, false, "The runtime cancelled the pull because no byte arrived for its progress timeout (containerd's image_pull_progress_timeout: 1 minute in 1.7.0-1.7.9, 5 minutes since; CRI-O's pull_progress_timeout; dockershim's image-pull-progress-deadline): a stalled transfer, usually a slow or lossy path, a path MTU black hole, or a mirror or proxy that accepts and never answers. The kubelet itself puts no deadline on a pull.", "The path from the node to the host that was serving the pull (the blob host for a layer, the registry or mirror for a manifest): path MTU and MSS clamping on tunnels, loss, a proxy's or mirror's health; `pullpath probe IMAGE` on the node times each host; raise the timeout only for a path that is slow but moving."},

	// the clouds' pull-through caches
	{CacheUpstreamUnauthorized, CauseUnauthorized, ConditionRegistry, false, "The node reached the registry's pull-through cache, and the cache could not authenticate to its upstream (ACR: authentication required with source registry for cache rule; Artifact Registry remote repository: upstream credentials are invalid; ECR: the authentication to the upstream registry failed). The node's path and identity are fine; the cache's credentials for the upstream are not.", "The cache rule's credentials: ACR credential set and its Key Vault secrets (and the registry identity's access to them), Artifact Registry remote repository upstreamCredentials (the Secret Manager secret and the Artifact Registry service agent's secretAccessor on it), ECR's Secrets Manager secret ecr-pullthroughcache/...; `pullpath azure|gcp|aws audit` checks them."},
	{CacheUpstreamRateLimited, CauseRateLimit, ConditionRegistry, false, "The node reached the registry's pull-through cache, and the cache's upstream rate-limited it (ACR: too many requests to source registry for cache rule): a cache miss went to the upstream (Docker Hub's limits are per account or per the cache's address) and was refused.", "The cache rule's upstream credentials (an authenticated upstream account has a higher limit), and pulls that miss the cache (new tags, a cache that does not refresh); warm the cache or wait out the upstream's window."},
	{CacheUpstreamFailed, CauseOther, ConditionRegistry, false, "The node reached the registry's pull-through cache, and the cache's request to its upstream failed (the upstream's answer is in the summary). The node's path is fine; the cache's path or access to its upstream is not.", "The cache rule and its upstream: the upstream's status, the cache's egress to it (VPC Service Controls vpcsc-config for Artifact Registry remote repositories), and the upstream path it maps to."},

	{Other, CauseOther, ConditionNone, false, "A failure that fits no other code; the summary carries the detail.", "The evidence in the report."},
}

var byCode = func() map[Code]Info {
	m := make(map[Code]Info, len(Codes))
	for _, i := range Codes {
		m[i.Code] = i
	}
	return m
}()

// Lookup returns the table entry for a code.
func Lookup(c Code) (Info, bool) {
	i, ok := byCode[c]
	return i, ok
}
