package explain

import (
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Message shapes taken from how the runtimes build them (not from single
// posted messages): containers/image httpResponseToError and getBlob,
// moby's notFoundError, containerd's authorizer wrapping, distribution's
// own error texts, CRI-O's short-name resolution.
func TestRuntimeSourceShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
		code verdict.Code
	}{
		{"c/image token 403", `initializing source docker://quay.io/team/app:1: Requesting bearer token: invalid status code from registry 403 (Forbidden)`, verdict.AuthForbidden},
		{"c/image token 404", `initializing source docker://r.example.com/team/app:1: Requesting bearer token: invalid status code from registry 404 (Not Found)`, verdict.ManifestNotFound},
		{"c/image manifest 400", `reading manifest 1 in r.example.com/team/app: invalid status code from registry 400 (Bad Request)`, verdict.HTTPBadResponse},
		{"c/image blob 403", `copying system image from manifest list: reading blob sha256:0123: fetching blob: StatusCode: 403, "<html>denied</html>"`, verdict.BlobForbidden},
		{"c/image blob 404", `copying system image from manifest list: reading blob sha256:0123: fetching blob: StatusCode: 404, "not here"`, verdict.BlobNotFound},
		{"c/image blob 503", `writing blob: storing blob to file "/var/tmp/x": fetching blob: StatusCode: 503, "<html>"`, verdict.RegistryServerError},
		{"c/image too many requests", `reading manifest 1 in docker.io/library/nginx: too many requests to registry`, verdict.RateLimited},
		{"c/image 408", `reading manifest 1 in r.example.com/a: invalid status code from registry 408 (Request Timeout)`, verdict.HTTPTimeout},
		{"moby name unknown", `Error response from daemon: repository team/app not found: name unknown: repository name not known to registry`, verdict.RepositoryNotFound},
		{"harbor project", `Error response from daemon: unknown: project shop not found`, verdict.RepositoryNotFound},
		{"moby 1.13 translated denial", `Error response from daemon: repository kube-aggregator not found: does not exist or no pull access`, verdict.AuthAmbiguous},
		{"containerd invalid token", `failed to resolve reference "r.example.com/a:1": pull access denied, repository does not exist or may require authorization: server message: invalid_token: authorization failed`, verdict.RegistryUnauthorized},
		{"distribution unknown manifest", `failed to resolve reference "r.example.com/a:1": unknown manifest name=a tag=1`, verdict.ManifestNotFound},
		{"distribution unknown repository", `Error response from daemon: unknown repository name=a`, verdict.RepositoryNotFound},
		{"crio short name", `rpc error: code = Unknown desc = short-name "app:1" did not resolve to an alias and no unqualified-search registries are defined in "/etc/containers/registries.conf"`, verdict.ShortNameUnresolved},
		// a plain-http hop through a forward proxy: the 407 comes back as a
		// response (RFC 9110: only a proxy sends 407)
		{"proxy wants auth", `failed to resolve reference "r.example.com/a:1": unexpected status from HEAD request to https://r.example.com/v2/a/manifests/1: 407 Proxy Authentication Required`, verdict.ProxyAuthRequired},
		{"docker parse 403", `error pulling image configuration: download failed after attempts=1: error parsing HTTP 403 response body: invalid character '<' looking for beginning of value: "<html><body>Blocked by policy</body></html>"`, verdict.BlobForbidden},
		{"docker parse 401", `Error response from daemon: Get "https://r.example.com/v2/": error parsing HTTP 401 response body: unexpected end of JSON input: ""`, verdict.RegistryUnauthorized},
		{"docker parse 404", `Error response from daemon: error parsing HTTP 404 response body: invalid character 'p' after top-level value: "404 page not found\n"`, verdict.ManifestNotFound},
		{"docker parse 502", `Error response from daemon: error parsing HTTP 502 response body: invalid character '<' looking for beginning of value: "<html>"`, verdict.RegistryServerError},
		{"anonymous token 500 stays a server error", `failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://auth.example.com/token: 500 Internal Server Error`, verdict.RegistryServerError},
	} {
		if c := Classify(tc.msg); c.Code != tc.code {
			t.Errorf("%s: %s (rule %s), want %s", tc.name, c.Code, c.Rule, tc.code)
		}
	}
}
