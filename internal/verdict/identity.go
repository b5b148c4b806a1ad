package verdict

// IdentityDocs is the section of docs/verdicts.md on the kubelet's pull
// identity: whose credentials a pull presents, what unauthorized and
// forbidden mean for them, and what no credential can fix.
const IdentityDocs = `
## The kubelet's pull identity

The kubelet pulls, not the Pod: it asks the node's container runtime, handing it the credentials
it holds for the image, in this order (` + "`pkg/kubelet/images`" + `, ` + "`pkg/credentialprovider`" + `): the Pod's
imagePullSecrets (all in one keyring, the most specific registry path first, the Pod's order within a
key), then the node's docker config, then its credential provider plugins (EKS
` + "`ecr-credential-provider`" + ` under ` + "`/etc/eks/image-credential-provider/`" + `, AKS ` + "`acr-credential-provider`" + ` with
` + "`/var/lib/kubelet/credential-provider-config.yaml`" + `). It pulls once per credential until one works
and joins the failures as ` + "`[a, b, ...]`" + `; with no credential it pulls once, anonymously. A plugin
that fails is logged and skipped: the pull then goes out without the credentials it should have given.

` + "`probe --kubelet-credentials auto`" + ` (or ` + "`--image-credential-provider-config`" + `/` + "`--image-credential-provider-bin-dir`" + `,
and ` + "`--pull-secret`" + ` in the Pod's order) authenticates the same way: it runs the plugins over their real
protocol, walks once per credential in the kubelet's order, reports the walk that pulled or got
furthest, and lists every plugin and attempt in ` + "`identity`" + ` (no secret is ever printed). A failing,
hanging or garbled plugin is ` + "`CREDENTIALS_ERROR`" + ` (stage auth) with its redacted stderr.
` + "`explain`" + ` reads the kubelet's aggregate attempt by attempt and answers with the attempt that got
furthest (docs/explain.md).

**Unauthorized or forbidden.** ` + "`unauthorized`" + ` means the credentials are missing or wrong: an anonymous
pull refused (including a refused anonymous token request, whatever its status), a token service or
registry rejecting the credentials (` + "`REGISTRY_UNAUTHORIZED`" + `, ` + "`AUTH_UNAUTHORIZED`" + `), or a plugin that
produced none (` + "`CREDENTIALS_ERROR`" + `). ` + "`forbidden`" + ` is the identity's scope: the credentials were accepted,
but the grant is empty or lacks pull, or the registry said ` + "`insufficient_scope`" + ` or ` + "`DENIED`" + `
(` + "`AUTH_FORBIDDEN`" + `, ` + "`REGISTRY_FORBIDDEN`" + `): *this identity is valid but may not pull REPO; or REPO does not
exist and the registry will not say so to this identity*. The fix for the first is the credential
(the pull secret, the plugin's own cloud identity); for the second, the identity's permission on
the repository (ACR AcrPull or ABAC repository read, ECR ecr:BatchGetImage and
ecr:GetDownloadUrlForLayer), or the repository path.

**What no credential fixes.** A pull secret or a plugin gives the runtime credentials; the runtime
sends them only inside a TLS connection it has already opened to an address it has already
resolved. So a pull secret never fixes a route (` + "`route`" + `: a timeout, a refusal, no route to host:
credentials are irrelevant when nothing answers), a resolver (` + "`dns`" + `: NXDOMAIN, a public answer for a
private endpoint), a missing endpoint (` + "`endpoint-set`" + `: a token or blob host the node cannot reach,
an S3 endpoint policy or storage firewall that refuses the node's path, ` + "`BLOB_FORBIDDEN`" + `), or a
certificate (` + "`TLS_*`" + `: an untrusted CA, a wrong name, an expired certificate are refused before any
credential is read). Changing the identity helps only when the verdict's condition is
` + "`tls-identity`" + ` and its cause is ` + "`unauthorized`" + ` or ` + "`forbidden`" + `.
`
