package explain

import (
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// areaRules are the rules written for the areas pullpath grew into (issue
// 41, and the explain parts of issues 37, 38 and 39), each from the
// runtime's source. For every one, at least one real message of
// testdata/areas must be read by it (the message that motivated it), and a
// neighbour, a message it must not swallow, keeps its own reading.
var areaRules = []struct {
	rule      string
	neighbour string
	want      verdict.Code // the neighbour's code ("": not a pull failure)
}{
	// CRI-O / containers/image: the runtime's own refusals
	{"short-name-no-search-registries",
		`Error: initializing source docker://registry.fedoraproject.org/idonotexist:latest: reading manifest latest in registry.fedoraproject.org/idonotexist: manifest unknown: manifest unknown`,
		verdict.ManifestNotFound},
	{"short-name-ambiguous",
		`Failed to apply default image tag "nginx:": couldn't parse image reference "nginx:": invalid reference format`,
		verdict.ReferenceInvalid},
	{"image-policy-rejected",
		`Error response from daemon: Head "https://gcr.io/v2/cloud-sql-connectors/cloud-sql-proxy/manifests/2.1.1": denied: Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier: 5vP1c9kRq3x`,
		verdict.RegistryForbidden},
	{"image-policy-file",
		`failed to pull image "quay.io/a/b:1": open /etc/containers/auth.json: permission denied`,
		verdict.Other},
	{"registry-blocked",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": denied: client with IP '203.0.113.7' is not allowed access. Refer https://aka.ms/acr/firewall to grant access.`,
		verdict.RegistryForbidden},
	{"registries-conf-invalid",
		`initializing source docker://quay.io/a/b:1: registry quay.io is blocked in one of ["/etc/containers/registries.conf" "/etc/containers/registries.conf.d"]`,
		verdict.RegistryBlocked},
	// IPv6 and dual-stack: the kernel's errno for a family the node cannot use
	{"dial-family-unusable",
		`failed to do request: Head "https://r.example.com/v2/a/manifests/1": dial tcp [2600:1f18:2148:bc02:cfd8:db68:ea1f:277c]:443: connect: no route to host`,
		verdict.ConnectUnreachable},
	// proxies: Go's pre-1.9 wording of a failed proxy dial, a proxy URL
	// that does not parse
	{"proxyconnect-refused",
		`Error while pulling image: Get https://index.docker.io/v1/repositories/a/b/images: dial tcp 52.207.178.113:443: getsockopt: connection refused`,
		verdict.ConnectRefused},
	{"proxy-url-invalid",
		`Error response from daemon: Get "https://r.example.com/v2/": proxyconnect tcp: dial tcp: lookup proxy.corp on 10.0.0.2:53: no such host`,
		verdict.ProxyDNS},
	// slow and stalled pulls: the runtime's progress timeout
	{"pull-progress-timeout",
		`time="2026-01-23T08:22:47Z" level=info msg="stop pulling image docker.io/library/redis:7: active requests=0, bytes read=30931245"`,
		""},
	{"pull-cancelled",
		`failed to pull and unpack image "r.example.com/a:1": failed to resolve reference "r.example.com/a:1": failed to do request: Head "https://r.example.com/v2/a/manifests/1": context deadline exceeded`,
		verdict.HTTPTimeout},
	// the clouds' pull-through caches: the cache's upstream, not the node
	{"cache-upstream-unauthorized",
		`Error response from daemon: error from registry: authentication required, visit https://aka.ms/acr/authorization for more information. CorrelationId: 9788c9dc-17f9-4718-b7c3-10da8669d899`,
		verdict.RegistryUnauthorized},
	{"cache-upstream-rate-limited",
		`Failed to pull image "myacr.azurecr.io/a:1": rpc error: code = Unknown desc = Error response from daemon: toomanyrequests: Too many requests. Please visit https://aka.ms/acr/skus#sku-feature-matrix to view limits of all service tiers.`,
		verdict.RateLimited},
	{"cache-upstream-failed",
		`Error: initializing source docker://harbor.example.com/hub/library/busybox:latest: reading manifest latest in harbor.example.com/hub/library/busybox: unknown: repository hub/library/busybox not found`,
		verdict.RepositoryNotFound},
	// GKE: the node's credentials
	{"credential-helper",
		`Failed to pull image "europe-west2-docker.pkg.dev/p/r/app:1": rpc error: code = Unknown desc = failed to pull and unpack image "europe-west2-docker.pkg.dev/p/r/app:1": failed to resolve reference "europe-west2-docker.pkg.dev/p/r/app:1": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://europe-west2-docker.pkg.dev/v2/token?scope=repository%3Ap%2Fr%2Fapp%3Apull&service=europe-west2-docker.pkg.dev: 403 Forbidden`,
		verdict.AuthUnauthorized},
	{"gcp-node-credentials",
		`Failed to pull image "gcr.io/p/app:1": rpc error: code = Unknown desc = Error response from daemon: unauthorized: You don't have the needed permissions to perform this operation, and you may have invalid credentials. To authenticate your request, follow the steps in: https://cloud.google.com/container-registry/docs/advanced-authentication`,
		verdict.RegistryUnauthorized},
	{"kubelet-no-credentials",
		`image pull failed for gcr.io/p/app, this may be because there are no credentials on this request.  details: (Get https://gcr.io/v2/: dial tcp: lookup gcr.io on 169.254.169.254:53: no such host)`,
		verdict.DNSNXDomain},
}

func TestAreaRulesHaveRealMessagesAndNeighbours(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "areas", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := filepath.Glob(filepath.Join("testdata", "areas", "after", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The first corpus's held-out sets hold some of the areas' real
	// messages too (they were collected there first).
	heldOut, err := filepath.Glob(filepath.Join("testdata", "valid-heldout*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(append(files, after...), heldOut...)
	read := map[string]int{}
	for _, f := range files {
		for _, c := range readAreaCases(t, f) {
			read[Classify(c.msg).Rule]++
		}
	}
	ids := map[string]bool{}
	for _, r := range Rules {
		ids[r.ID] = true
	}
	for _, ar := range areaRules {
		if !ids[ar.rule] {
			t.Errorf("areaRules names %q, which is not a rule", ar.rule)
			continue
		}
		if read[ar.rule] == 0 {
			t.Errorf("rule %q reads none of the real messages of testdata/areas or the held-out sets: the message that motivated it belongs there", ar.rule)
		}
		c := Classify(ar.neighbour)
		if c.Rule == ar.rule || c.Code != ar.want && (ar.want != "" || c.Failed()) {
			t.Errorf("rule %q's neighbour: Classify(%q) = %s (rule %q), want %s from another rule", ar.rule, short(ar.neighbour), c.Code, c.Rule, ar.want)
		}
	}
}

// TestProgressOf: a runtime that gave up on a stalled pull says its timeout
// and the last progress it saw; the finding carries both.
func TestProgressOf(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`level=error msg="cancel pulling image r.example.com/a:1 because of no progress in 1m0s"`, `no progress for 1m0s (containerd's image_pull_progress_timeout)`},
		{`E0601 18:48:29.026003 46185 kube_docker_client.go:274] Cancel pulling image "nginx:latest" because of no progress for 1m0s, latest progress: "89732b811e7f: Downloading [=>  ] 1.2 MB/40 MB"`, `no progress for 1m0s (the kubelet's image-pull-progress-deadline (dockershim)); latest progress "89732b811e7f: Downloading [=> ] 1.2 MB/40 MB"`},
		{`level=warning msg="Timed out on waiting up to 1m0s for image pull progress updates"`, `no progress for 1m0s (CRI-O's pull_progress_timeout)`},
	} {
		c := Classify(tc.msg)
		if c.Code != verdict.PullProgressTimeout || c.Progress != tc.want {
			t.Errorf("Classify(%q) = %s progress %q, want PULL_PROGRESS_TIMEOUT and %q", short(tc.msg), c.Code, c.Progress, tc.want)
		}
	}
	if c := Classify(`cancel pulling image docker.io/lmsysorg/sglang:v0.5.6 because of no progress in 5m0s`); c.Image != "docker.io/lmsysorg/sglang:v0.5.6" {
		t.Errorf("image of containerd's cancel line = %q", c.Image)
	}
}
