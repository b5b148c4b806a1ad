package explain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// aggregateCase is a real multi-attempt message and the attempt that
// matters. Sources are public issue threads and documentation pages where
// the message was posted (hosts and accounts as they were posted).
type aggregateCase struct {
	name, source string
	msg          string
	attempts     int
	chosen       int // 1-based
	code         verdict.Code
	cause        verdict.Cause
}

const (
	acrNotFoundThenAnon = `Failed to pull image "monacr123.azurecr.io/flask-app:latest": [rpc error: code = NotFound desc = failed to pull and unpack image "monacr123.azurecr.io/flask-app:latest": failed to resolve reference "monacr123.azurecr.io/flask-app:latest": monacr123.azurecr.io/flask-app:latest: not found, failed to pull and unpack image "monacr123.azurecr.io/flask-app:latest": failed to resolve reference "monacr123.azurecr.io/flask-app:latest": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://monacr123.azurecr.io/oauth2/token?scope=repository%3Aflask-app%3Apull&service=monacr123.azurecr.io: 401 Unauthorized]`
	acrScopeThenAnon    = `Failed to pull image "myregistry.azurecr.io/samples/pause:3.9": [failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed, failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://myregistry.azurecr.io/oauth2/token?scope=repository%3Asamples%2Fpause%3Apull&service=myregistry.azurecr.io: 401 Unauthorized]`
)

var aggregateCases = []aggregateCase{
	{"containerd/acr-not-found-then-anonymous-401", "AKS troubleshooting (kubelet identity; image absent), MicrosoftDocs ACR pull errors",
		acrNotFoundThenAnon, 2, 1, verdict.ManifestNotFound, verdict.CauseNotFound},
	{"containerd/acr-image-resolve-not-found-then-anonymous-401", "AKS lab write-up (kubelet >= 1.27: no rpc prefix on the second item)",
		`Failed to pull image "acrregk8s1e1193.azurecr.io/labs/c/payments-api:1.0.1": [rpc error: code = NotFound desc = failed to pull and unpack image "acrregk8s1e1193.azurecr.io/labs/c/payments-api:1.0.1": failed to resolve image: acrregk8s1e1193.azurecr.io/labs/c/payments-api:1.0.1: not found, failed to pull and unpack image "acrregk8s1e1193.azurecr.io/labs/c/payments-api:1.0.1": failed to resolve image: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://acrregk8s1e1193.azurecr.io/oauth2/token?scope=repository%3Alabs%2Fc%2Fpayments-api%3Apull&service=acrregk8s1e1193.azurecr.io: 401 Unauthorized]`,
		2, 1, verdict.ManifestNotFound, verdict.CauseNotFound},
	{"containerd/acr-abac-scope-then-anonymous-401", "AKS + ACR ABAC chaos report (AcrPull only, repository reader missing)",
		acrScopeThenAnon, 2, 1, verdict.AuthForbidden, verdict.CauseForbidden},
	{"containerd/acr-waiting-message-scope", "same report: the container's waiting message (bare aggregate)",
		`[failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed, failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://myregistry.azurecr.io/oauth2/token?scope=repository%3Asamples%2Fpause%3Apull&service=myregistry.azurecr.io: 401 Unauthorized]`,
		2, 1, verdict.AuthForbidden, verdict.CauseForbidden},
	{"containerd/acr-oauth-401-then-anonymous-401", "same report, first event (token service rejected the kubelet identity)",
		`Failed to pull image "myregistry.azurecr.io/samples/pause:3.9": [failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: failed to authorize: failed to fetch oauth token: unexpected status from GET request to https://myregistry.azurecr.io/oauth2/token?scope=repository%3Asamples%2Fpause%3Apull&service=myregistry.azurecr.io: 401 Unauthorized, failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://myregistry.azurecr.io/oauth2/token?scope=repository%3Asamples%2Fpause%3Apull&service=myregistry.azurecr.io: 401 Unauthorized]`,
		2, 1, verdict.AuthUnauthorized, verdict.CauseUnauthorized},
	{"containerd/gke-artifact-registry-429-twice", "GKE Artifact Registry quota (GET manifest by digest, then HEAD), quoted in a public test",
		"Failed to pull image \"us-east1-artifactregistry.gcr.io/gke-release/gke-release/gke-distroless/bash:gke_distroless_20260615.00_p0@sha256:b98f4278dc5123fbad96c54ba8301c512d32f4716528ab30faea15108c68c52e\": [failed to pull and unpack image \"us-east1-artifactregistry.gcr.io/gke-release/gke-release/gke-distroless/bash@sha256:b98f4278dc5123fbad96c54ba8301c512d32f4716528ab30faea15108c68c52e\": failed to copy: httpReadSeeker: failed open: unexpected status from GET request to https://us-east1-artifactregistry.gcr.io/v2/gke-release/gke-release/gke-distroless/bash/manifests/sha256:4e2ffa754250cb4d4d68fa5c2dd7a592c78edbbedc3a3b9428810c4bdf0c438b: 429 Too Many Requests\ntoomanyrequests: Quota exceeded for quota metric 'Requests per project per region' and limit 'Requests per project per region per minute per region' of service 'artifactregistry.googleapis.com' for consumer 'project_number:235545413903'., failed to pull and unpack image \"us-east1-artifactregistry.gcr.io/gke-release/gke-release/gke-distroless/bash@sha256:b98f4278dc5123fbad96c54ba8301c512d32f4716528ab30faea15108c68c52e\": failed to resolve reference \"us-east1-artifactregistry.gcr.io/gke-release/gke-release/gke-distroless/bash@sha256:b98f4278dc5123fbad96c54ba8301c512d32f4716528ab30faea15108c68c52e\": unexpected status from HEAD request to https://us-east1-artifactregistry.gcr.io/v2/gke-release/gke-release/gke-distroless/bash/manifests/sha256:b98f4278dc5123fbad96c54ba8301c512d32f4716528ab30faea15108c68c52e: 429 Too Many Requests]",
		2, 1, verdict.RateLimited, verdict.CauseRateLimit},
	{"docker/acr-unauthorized-twice", "dotnet/docs#13401 (dockershim, two credentials)",
		`Failed to pull image "ugsampleacr.azurecr.io/mssampleaksapplication:v1": [rpc error: code = Unknown desc = Error response from daemon: Get https://ugsampleacr.azurecr.io/v2/mssampleaksapplication/manifests/v1: unauthorized: authentication required, rpc error: code = Unknown desc = Error response from daemon: Get https://ugsampleacr.azurecr.io/v2/mssampleaksapplication/manifests/v1: unauthorized: authentication required]`,
		2, 1, verdict.RegistryUnauthorized, verdict.CauseUnauthorized},
	{"docker/acr-aad-then-unauthorized", "AKS hackday notes (service principal not registered, then the node's docker config)",
		`Failed to pull image "shilpaacr.azurecr.io/azure-vote-front:v1": [rpc error: code = Unknown desc = Error response from daemon: Get https://shilpaacr.azurecr.io/v2/azure-vote-front/manifests/v1: unauthorized: Application not registered with AAD., rpc error: code = Unknown desc = Error response from daemon: Get https://shilpaacr.azurecr.io/v2/azure-vote-front/manifests/v1: unauthorized: authentication required]`,
		2, 1, verdict.RegistryUnauthorized, verdict.CauseUnauthorized},
	{"crio/quay-token-rejected-then-manifest-401", "EDB Postgres on OpenShift troubleshooting (CRI-O, two pull secrets)",
		`Failed to pull image "quay.io/edb/postgres-advanced-server-12:latest": [rpc error: code = Unknown desc = unable to retrieve auth token: invalid username/password: unauthorized: Invalid Username or Password, rpc error: code = Unknown desc = Error reading manifest latest in quay.io/edb/postgres-advanced-server-12: unauthorized: access to the requested resource is not authorized]`,
		2, 2, verdict.RegistryUnauthorized, verdict.CauseUnauthorized},
	{"crio/mirror-manifest-unknown-primary-dns", "OpenShift disconnected install notes (ICSP mirror lacks the digest; the primary does not resolve)",
		`Failed to pull image "registry.redhat.io/openshift4/ose-cluster-logging-operator@sha256:ea9f04550350507d30cb9631db053e3a0a66546932997b08af10a61d0c02e803": rpc error: code = Unknown desc = (Mirrors also failed: [registry.example.com:5000/openshift4/ose-cluster-logging-operator@sha256:ea9f04550350507d30cb9631db053e3a0a66546932997b08af10a61d0c02e803: Error reading manifest sha256:ea9f04550350507d30cb9631db053e3a0a66546932997b08af10a61d0c02e803 in registry.example.com:5000/openshift4/ose-cluster-logging-operator: manifest unknown: manifest unknown]): registry.redhat.io/openshift4/ose-cluster-logging-operator@sha256:ea9f04550350507d30cb9631db053e3a0a66546932997b08af10a61d0c02e803: error pinging docker registry registry.redhat.io: Get https://registry.redhat.io/v2/: dial tcp: lookup registry.redhat.io on 192.168.2.19:53: server misbehaving`,
		2, 1, verdict.ManifestNotFound, verdict.CauseNotFound},
	{"crio/mirror-manifest-unknown-primary-401", "OpenShift 4.18 upgrade notes (mirror lacks the digest; the primary refuses the cluster's pull secret)",
		"Failed to pull image \"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:f015c440aa\": initializing source docker://quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:f015c440aa: (Mirrors also failed:\n[registry.mirror.example:8443/openshift/release@sha256:f015c440aa:\nreading manifest sha256:f015c440aa in registry.mirror.example:8443/openshift/release:\nmanifest unknown]): quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:f015c440aa: reading manifest sha256:f015c440aa in quay.io/openshift-release-dev/ocp-v4.0-art-dev: unauthorized: access to the requested resource is not authorized",
		2, 1, verdict.ManifestNotFound, verdict.CauseNotFound},
}

// Built from the runtimes' sources: the attempt that got furthest, each
// shape as containerd and the kubelet print it.
var builtAggregateCases = []aggregateCase{
	{"built/blob-dropped-beats-anonymous-401", "containerd remotes/docker fetcher (httpReadSeeker) + authorizer (anonymous token)",
		`Failed to pull image "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1.4.2": [failed to pull and unpack image "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1.4.2": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com/ab12/sha256:ab12": read tcp 10.0.1.5:41234->52.218.1.1:443: read: connection reset by peer, failed to pull and unpack image "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1.4.2": failed to resolve reference "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:1.4.2": pulling from host 123456789012.dkr.ecr.eu-west-1.amazonaws.com failed with status code [manifests 1.4.2]: 401 Unauthorized]`,
		2, 1, verdict.ConnectReset, verdict.CauseReset},
	{"built/platform-beats-token-401", "containerd images.Manifest (no match for platform) vs a rejected pull secret",
		`Failed to pull image "myacr.azurecr.io/team/app:1.4.2": [failed to pull and unpack image "myacr.azurecr.io/team/app:1.4.2": failed to authorize: failed to fetch oauth token: unexpected status from POST request to https://myacr.azurecr.io/oauth2/token: 401 Unauthorized, failed to pull and unpack image "myacr.azurecr.io/team/app:1.4.2": no match for platform in manifest: not found]`,
		2, 2, verdict.PlatformNotFound, verdict.CausePlatform},
	{"built/anonymous-403-is-unauthorized", "containerd authorizer, single attempt (kubernetes/kubernetes#66162)",
		`Failed to pull image "registry.example.com/my/app:latest": rpc error: code = Unknown desc = failed to resolve image "registry.example.com/my/app:latest": failed to fetch anonymous token: unexpected status: 403 Forbidden`,
		1, 0, verdict.AuthUnauthorized, verdict.CauseUnauthorized},
	{"built/three-attempts-denied-with-credentials", "Docker Hub DENIED after an accepted token (containerd 1.7 HEAD), the node's config, then the provider",
		`Failed to pull image "docker.io/acme/private:2": [failed to pull and unpack image "docker.io/acme/private:2": failed to resolve reference "docker.io/acme/private:2": failed to authorize: failed to fetch oauth token: unexpected status from POST request to https://auth.docker.io/token: 401 Unauthorized, failed to pull and unpack image "docker.io/acme/private:2": failed to resolve reference "docker.io/acme/private:2": unexpected status from HEAD request to https://registry-1.docker.io/v2/acme/private/manifests/2: 403 Forbidden, failed to pull and unpack image "docker.io/acme/private:2": failed to resolve reference "docker.io/acme/private:2": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://auth.docker.io/token?scope=repository%3Aacme%2Fprivate%3Apull&service=registry.docker.io: 401 Unauthorized]`,
		3, 2, verdict.RegistryForbidden, verdict.CauseForbidden},
}

func TestAggregatedMessages(t *testing.T) {
	for _, tc := range append(append([]aggregateCase{}, aggregateCases...), builtAggregateCases...) {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(tc.msg)
			if c.Code != tc.code || c.Cause != tc.cause {
				t.Errorf("code %s cause %s, want %s %s (rule %s): %s", c.Code, c.Cause, tc.code, tc.cause, c.Rule, c.Summary)
			}
			if len(c.Attempts) != tc.attempts && !(tc.attempts == 1 && len(c.Attempts) == 0) {
				t.Fatalf("%d attempts, want %d: %+v", len(c.Attempts), tc.attempts, c.Attempts)
			}
			for _, a := range c.Attempts {
				if a.Chosen != (a.N == tc.chosen) {
					t.Errorf("attempt %d chosen=%v, want attempt %d chosen", a.N, a.Chosen, tc.chosen)
				}
			}
			if c.Image == "" {
				t.Errorf("no image read")
			}
		})
	}
}

// TestScopeSentence: a refusal after accepted credentials says the
// issue's sentence, with the repository; an anonymous refusal does not.
func TestScopeSentence(t *testing.T) {
	c := Classify(acrScopeThenAnon)
	want := "this identity is valid but may not pull samples/pause; or samples/pause does not exist and the registry will not say so to this identity"
	if !strings.Contains(c.Summary, want) {
		t.Errorf("summary %q lacks %q", c.Summary, want)
	}
	if c.Ambiguous {
		t.Errorf("a scope refusal after accepted credentials is not ambiguous")
	}
	// The same denial without credentials known stays ambiguous
	// (unauthorized reading); with the anonymous token it is unauthorized.
	single := Classify(`Failed to pull image "myregistry.azurecr.io/samples/pause:3.9": failed to pull and unpack image "myregistry.azurecr.io/samples/pause:3.9": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`)
	if single.Code != verdict.AuthAmbiguous || single.Cause != verdict.CauseUnauthorized || strings.Contains(single.Summary, "identity is valid") {
		t.Errorf("single denial: %s %s %q", single.Code, single.Cause, single.Summary)
	}
	for _, st := range []string{"401 Unauthorized", "403 Forbidden", "404 Not Found", "400 Bad Request"} {
		anon := Classify(`failed to pull and unpack image "registry.example.com/my/app:1": failed to resolve reference "registry.example.com/my/app:1": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.example.com/token?scope=repository%3Amy%2Fapp%3Apull: ` + st)
		if anon.Code != verdict.AuthUnauthorized || anon.Cause != verdict.CauseUnauthorized || anon.Stage != verdict.StageAuth {
			t.Errorf("anonymous token %s: %s %s %s, want AUTH_UNAUTHORIZED unauthorized auth", st, anon.Code, anon.Cause, anon.Stage)
		}
	}
	// A server error on the anonymous token request is the server's, not credentials.
	if c := Classify(`failed to resolve reference "r.example.com/a:1": failed to authorize: failed to fetch anonymous token: unexpected status: 503 Service Unavailable`); c.Code != verdict.RegistryServerError {
		t.Errorf("anonymous token 503: %s, want REGISTRY_SERVER_ERROR", c.Code)
	}
}

func TestSplitAggregate(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want int
	}{
		// containerd 1.6's own brackets are not an aggregate.
		{`failed to pull and unpack image "a.io/x:1": failed to resolve reference "a.io/x:1": pulling from host a.io failed with status code [manifests 1]: 401 Unauthorized`, 0},
		// A bracket in an image reference ([::1]) is not either.
		{`Failed to pull image "[::1]:5000/x:1": failed to do request: Head "https://[::1]:5000/v2/x/manifests/1": dial tcp [::1]:5000: connect: connection refused`, 0},
		// Cut short (no closing bracket): both items still read.
		{`Failed to pull image "a.io/x:1": [failed to pull and unpack image "a.io/x:1": a.io/x:1: not found, failed to pull and unpack image "a.io/x:1": failed to resolve ref`, 2},
		// Items with ", " inside them stay whole.
		{`Failed to pull image "x": [rpc error: code = Unknown desc = Error response from daemon: pull access denied for x, repository does not exist or may require 'docker login', rpc error: code = Unknown desc = Error response from daemon: toomanyrequests: slow down]`, 2},
	} {
		m := normalize(tc.msg)
		_, items := splitAggregate(m, strings.ToLower(m))
		if n := len(items); n != tc.want && !(tc.want == 0 && n == 1) {
			t.Errorf("%d items, want %d: %q -> %q", n, tc.want, tc.msg, items)
		}
	}
}

func TestExecFormatError(t *testing.T) {
	for _, msg := range []string{
		`exec /usr/local/bin/app: exec format error`,
		`standard_init_linux.go:228: exec user process caused: exec format error`,
		`Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/app": exec format error: unknown`,
	} {
		c := Classify(msg)
		if c.Code != verdict.PlatformNotFound || c.Cause != verdict.CausePlatform || c.Condition != verdict.ConditionImage || c.Step != StepRun {
			t.Errorf("%q: %s %s %s %s", msg, c.Code, c.Cause, c.Condition, c.Step)
		}
	}
}

// TestAggregatedTable prints the table docs/explain.md quotes:
//
//	go test ./internal/explain -run TestAggregatedTable -v
func TestAggregatedTable(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "| message | source | attempts | the attempt that matters | code | cause |\n|---|---|---|---|---|---|\n")
	for _, tc := range append(append([]aggregateCase{}, aggregateCases...), builtAggregateCases...) {
		c := Classify(tc.msg)
		chosen := "-"
		for _, a := range c.Attempts {
			if a.Chosen {
				chosen = fmt.Sprintf("%d (%s, %s)", a.N, orDash(a.Credentials), a.Rule)
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %s | %s |\n", tc.name, tc.source, max(len(c.Attempts), 1), chosen, c.Code, c.Cause)
	}
	t.Logf("aggregated messages:\n%s", b.String())
}

func orDash(s string) string {
	if s == "" {
		return "unknown credentials"
	}
	return s
}

// FuzzAttempts: splitting never panics, every item is a piece of the
// message, and classifying an aggregate never panics.
func FuzzAttempts(f *testing.F) {
	for _, tc := range append(append([]aggregateCase{}, aggregateCases...), builtAggregateCases...) {
		f.Add(tc.msg)
	}
	f.Add(`[failed to pull image "a", [`)
	f.Add(`(Mirrors also failed: [a: b] [c`)
	f.Fuzz(func(t *testing.T, s string) {
		m := normalize(s)
		lower := strings.ToLower(m)
		_, items := splitAggregate(m, lower)
		for _, it := range items {
			if !strings.Contains(m, it) {
				t.Fatalf("item %q is not part of %q", it, m)
			}
		}
		splitMirrors(m, lower)
		classify(s)
	})
}
