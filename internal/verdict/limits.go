package verdict

// ProbeLimits is the section of docs/verdicts.md on the limits and media
// types the probe applies. They are containerd's, so that the probe's
// verdict is the runtime's; internal/pull's tests keep the figures here
// equal to the ones it uses.
const ProbeLimits = `
## Limits and media types

The probe applies containerd's rules to the same bytes, so that where containerd fails a
pull the probe fails it too, with the code below, and where containerd succeeds the probe does.
Each rule names the containerd source it follows (containerd v2, ` + "`core/`" + `).

| rule | the probe | containerd source | code when it stops the walk |
|---|---|---|---|
| redirects per request | 9 followed, the 10th stops, for /v2/, manifest, blob and token requests alike; only 301, 302, 303, 307 and 308 are redirects (Go's client), every new host is walked as an endpoint | ` + "`remotes/docker/resolver.go`" + ` (` + "`request.do`" + `: ` + "`len(via) >= 10`" + `), Go's default policy for the token client | ` + "`REDIRECT_LOOP`" + `, the summary names the limit |
| manifest size | 4,393,216 bytes (4*1048*1048, as written there) | ` + "`remotes/docker/resolver.go`" + ` ` + "`MaxManifestSize`" + ` | ` + "`MANIFEST_TOO_LARGE`" + ` |
| manifest media types | the Content-Type of the answer decides for the root, the descriptor for an index entry; only ` + "`application/vnd.oci.image.manifest.v1+json`" + `, ` + "`application/vnd.docker.distribution.manifest.v2+json`" + `, ` + "`application/vnd.oci.image.index.v1+json`" + ` and ` + "`application/vnd.docker.distribution.manifest.list.v2+json`" + ` are walked; schema 1 is refused | ` + "`images/mediatypes.go`" + ` (` + "`IsManifestType`" + `, ` + "`IsIndexType`" + `), ` + "`remotes/docker/resolver.go`" + ` (` + "`getManifestMediaType`" + `) | ` + "`MANIFEST_INVALID`" + ` (unknown media type) |
| body against media type | a manifest type whose body is an index, or an index type whose body is a manifest, fails (` + "`media-type: expected manifest but found index`" + `) | ` + "`images/image.go`" + ` ` + "`validateMediaType`" + ` | ` + "`MANIFEST_INVALID`" + ` |
| index entries | the node's platform first, then an entry without a platform (a nested index); nested indexes are walked | ` + "`images/handlers.go`" + ` ` + "`FilterPlatforms`" + `, ` + "`LimitManifests`" + ` | ` + "`PLATFORM_NOT_FOUND`" + ` |
| nesting depth | 8 indexes (the probe's own bound: containerd has none, a hostile registry could chain forever) | | ` + "`MANIFEST_INVALID`" + `, the summary names the limit |
| WWW-Authenticate | one challenge per header value; an unterminated quoted value is empty, so a realm without its closing quote is no realm | ` + "`remotes/docker/auth/parse.go`" + ` | ` + "`CHALLENGE_INVALID`" + ` |
| token request and response | with a secret, an OAuth2 POST first (grant_type password, or refresh_token for an identity token), a GET with Basic credentials when it answers 404, 401 or 400 (405 with a user name); ` + "`access_token`" + ` wins over ` + "`token`" + ` (only ` + "`access_token`" + ` counts in a POST's answer); redirects followed as above, each new host walked as an endpoint; credentials only to the realm's own host | ` + "`remotes/docker/authorizer.go`" + ` (` + "`doBearerAuth`" + `), ` + "`remotes/docker/auth/fetch.go`" + ` | ` + "`HTTP_BAD_RESPONSE`" + ` (no token, or over the probe's 1 MiB read limit, said as such) |
| blob length | a Content-Length that contradicts the descriptor fails before any byte; a body cut short by a clean close (TLS close_notify, FIN) is a short read | ` + "`content/helpers.go`" + ` (short read) | ` + "`BLOB_SIZE_MISMATCH`" + ` (a real reset is ` + "`CONNECT_RESET`" + `) |
| hosts file | a line that is not ADDRESS NAME... is skipped, as glibc and Go skip it | Go ` + "`net/hosts.go`" + ` | ` + "`HOSTS_FILE_LINE_SKIPPED`" + ` (a warning) |
`
