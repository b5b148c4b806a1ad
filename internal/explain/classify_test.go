package explain

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// want is the part of a Classification a case asserts; empty fields are not
// checked.
type want struct {
	Code      verdict.Code
	Stage     verdict.Stage
	Condition verdict.Condition
	Step      string
	Host      string
	Address   string
	Image     string
	Registry  string
	Ambiguous bool
}

// classifyCase is one real message shape and its source.
type classifyCase struct {
	name string
	msg  string
	want want
}

const (
	acr    = "myacr.azurecr.io"
	ecr    = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"
	ecrImg = ecr + "/team/app:1.4.2"
	acrImg = acr + "/team/app:1.4.2"
	// containerd 1.6 behind crictl / the kubelet (shape of every message in
	// ../../shared/notes/containerd-in-netns.md).
	c16 = `rpc error: code = Unknown desc = failed to pull and unpack image "` + acrImg + `": `
	// kubelet >= 1.27 prints the runtime's status message without the gRPC wrapper.
	kubeFailed = `Failed to pull image "` + acrImg + `": `
)

var classifyCases = []classifyCase{
	// ---- Google Cloud: Artifact Registry, Container Registry, Cloud Storage, VPC Service Controls (real messages)
	// terraform-google-modules/terraform-google-kubernetes-engine#1779 (docker on a GKE node)
	{"gke/gar-download-denied",
		`Error response from daemon: Head "https://europe-west2-docker.pkg.dev/v2/shop-prod/ml/app/manifests/4.19.5": denied: Permission "artifactregistry.repositories.downloadArtifacts" denied on resource "projects/shop-prod/locations/europe-west2/repositories/ml" (or it may not exist)`,
		want{Code: verdict.RegistryForbidden, Condition: verdict.ConditionTLSIdentity, Host: "europe-west2-docker.pkg.dev"}},
	// fluxcd/source-controller#798 (the token request on the same host)
	{"gke/gar-token-denied",
		`failed to get chart version for remote reference: GET "https://europe-west6-docker.pkg.dev/v2/token?scope=repository%3Ashop-prod%2Fcharts%2Fweb%3Apull&service=europe-west6-docker.pkg.dev": unexpected status code 403: denied: Permission "artifactregistry.repositories.downloadArtifacts" denied on resource "projects/shop-prod/locations/europe-west6/repositories/charts" (or it may not exist)`,
		want{Code: verdict.AuthForbidden, Condition: verdict.ConditionTLSIdentity, Step: StepToken}},
	// google/fuzzbench#1981 (gcr.io served by Artifact Registry, no credential sent)
	{"gke/gar-unauthenticated",
		`Failed to pull image "gcr.io/fuzzbench/base-image": Error response from daemon: Head "https://gcr.io/v2/fuzzbench/base-image/manifests/latest": unauthorized: Unauthenticated requests do not have permission "artifactregistry.repositories.downloadArtifacts" on resource "projects/fuzzbench/locations/us/repositories/gcr.io" (or it may not exist)`,
		want{Code: verdict.RegistryUnauthorized, Condition: verdict.ConditionTLSIdentity, Host: "gcr.io"}},
	// GoogleCloudPlatform/cloud-sql-proxy#1686 (VPC Service Controls)
	{"gke/vpc-service-controls",
		`Error response from daemon: Head "https://gcr.io/v2/cloud-sql-connectors/cloud-sql-proxy/manifests/2.1.1": denied: Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier: 5vP1c9kRq3x`,
		want{Code: verdict.RegistryForbidden, Condition: verdict.ConditionTLSIdentity, Host: "gcr.io"}},
	// actions/runner-images#7659 (Cloud Storage's XML error for a Container Registry layer)
	{"gke/gcs-anonymous-access-denied",
		`error pulling image configuration: download failed after attempts=1: error parsing HTTP 403 response body: invalid character '<' looking for beginning of value: "<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code><Message>Access denied.</Message><Details>Anonymous caller does not have storage.objects.get access to the Google Cloud Storage object. Permission 'storage.objects.get' denied on resource (or it may not exist).</Details></Error>"`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob}},
	// ---- containerd 1.6, verbatim shapes from shared/notes/containerd-in-netns.md
	{"containerd16/nxdomain",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp: lookup myacr.azurecr.io on 10.0.0.10:53: no such host`,
		want{Code: verdict.DNSNXDomain, Stage: verdict.StageRegistry, Condition: verdict.ConditionDNS, Step: StepResolve, Host: acr, Image: acrImg, Registry: acr}},
	{"containerd16/nameserver-blackholed",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp: lookup myacr.azurecr.io on 10.0.0.10:53: read udp 10.0.1.5:41234->10.0.0.10:53: i/o timeout`,
		want{Code: verdict.DNSTimeout, Condition: verdict.ConditionDNS, Step: StepResolve, Host: acr}},
	{"containerd16/registry-blackholed",
		`rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "` + acrImg + `": failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp 10.1.2.3:443: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Stage: verdict.StageRegistry, Condition: verdict.ConditionRoute, Host: acr, Address: "10.1.2.3:443"}},
	{"containerd16/no-route",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp 10.0.1.99:443: connect: no route to host`,
		want{Code: verdict.ConnectUnreachable, Condition: verdict.ConditionRoute, Address: "10.0.1.99:443"}},
	{"containerd16/refused",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp 10.1.2.3:443: connect: connection refused`,
		want{Code: verdict.ConnectRefused, Condition: verdict.ConditionRoute}},
	{"containerd16/unknown-ca",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": x509: certificate signed by unknown authority`,
		want{Code: verdict.TLSUnknownAuthority, Condition: verdict.ConditionTLSIdentity, Stage: verdict.StageRegistry}},
	{"containerd16/401",
		c16 + `failed to resolve reference "` + acrImg + `": pulling from host myacr.azurecr.io failed with status code [manifests 1.4.2]: 401 Unauthorized`,
		want{Code: verdict.RegistryUnauthorized, Condition: verdict.ConditionTLSIdentity, Stage: verdict.StageRegistry, Host: acr, Step: StepResolve}},
	{"containerd16/blob-host-blackholed",
		c16 + `failed to copy: httpReadSeeker: failed open: failed to do request: Get "http://blobs.lab.internal:8080/docker/registry/v2/blobs/sha256/ab/ab12/data": dial tcp 10.2.0.7:8080: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Step: StepBlob, Host: "blobs.lab.internal:8080", Address: "10.2.0.7:8080"}},
	{"containerd16/not-found",
		`rpc error: code = NotFound desc = failed to pull and unpack image "` + acrImg + `": failed to resolve reference "` + acrImg + `": ` + acrImg + `: not found`,
		want{Code: verdict.ManifestNotFound, Condition: verdict.ConditionImage, Stage: verdict.StageRegistry}},

	// ---- containerd, kubelet events from issue threads
	// kubernetes/external-dns#770 (cri-containerd, unquoted Go URL)
	{"containerd/external-dns-timeout",
		`Failed to pull image "registry.opensource.zalan.do/teapot/external-dns:v0.5.7": rpc error: code = Unknown desc = failed to resolve image "registry.opensource.zalan.do/teapot/external-dns:v0.5.7": failed to do request: Head https://registry.opensource.zalan.do/v2/teapot/external-dns/manifests/v0.5.7: dial tcp 52.215.109.161:443: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Condition: verdict.ConditionRoute, Host: "registry.opensource.zalan.do", Address: "52.215.109.161:443", Step: StepResolve}},
	// kata-containers/kata-containers#10109 (rate limit inside failed to copy on a manifest by digest)
	{"containerd/dockerhub-429",
		`Failed to pull image "busybox": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/busybox:latest": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/busybox/manifests/sha256:50aa4698fa6262977cff89181b2664b99d8a56dbca847bf62f2ef04854597cf8: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`,
		want{Code: verdict.RateLimited, Condition: verdict.ConditionRegistry, Step: StepManifest, Host: "registry-1.docker.io", Registry: "docker.io", Image: "docker.io/library/busybox:latest"}},
	// dell/csi-baremetal#391 (the httpReaderSeeker spelling of containerd 1.4)
	{"containerd14/httpReaderSeeker-429",
		`Failed to pull image "centos": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/centos:latest": failed to copy: httpReaderSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/centos/manifests/sha256:dbbacecc49b088458781c16f3775f2a2ec7521079034a7ba499c8b0bb7f86875: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.`,
		want{Code: verdict.RateLimited, Condition: verdict.ConditionRegistry}},
	// kubewarden/adm-controller#1378
	{"containerd/platform",
		`Failed to pull image "ghcr.io/kubewarden/kubewarden-controller:latest": rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/kubewarden/kubewarden-controller:latest": no match for platform in manifest: not found`,
		want{Code: verdict.PlatformNotFound, Condition: verdict.ConditionImage, Stage: verdict.StageRegistry, Registry: "ghcr.io"}},
	// kubernetes-sigs/provider-aws-test-infra#281 (containerd log line, escaped quotes)
	{"containerd/log-not-found",
		`level=error msg="PullImage \"registry.k8s.io/kube-apiserver-amd64:v1.30.0-alpha.1\" failed" error="rpc error: code = NotFound desc = failed to pull and unpack image \"registry.k8s.io/kube-apiserver-amd64:v1.30.0-alpha.1\": failed to resolve reference \"registry.k8s.io/kube-apiserver-amd64:v1.30.0-alpha.1\": registry.k8s.io/kube-apiserver-amd64:v1.30.0-alpha.1: not found"`,
		want{Code: verdict.ManifestNotFound, Condition: verdict.ConditionImage, Registry: "registry.k8s.io"}},
	// containerd/containerd#6141 (token service with a wrong certificate name)
	{"containerd/token-tls-name",
		`Failed to pull image "localhost:32121/root/zap:v2": rpc error: code = Unknown desc = failed to pull and unpack image "localhost:32121/root/zap:v2": failed to resolve reference "localhost:32121/root/zap:v2": failed to authorize: failed to fetch oauth token: Post "https://gitlab-1108042010.ca-central-1.elb.amazonaws.com/gitlab//jwt/auth": x509: certificate is not valid for any names, but wanted to match gitlab-1108042010.ca-central-1.elb.amazonaws.com`,
		want{Code: verdict.TLSNameMismatch, Stage: verdict.StageAuth, Condition: verdict.ConditionTLSIdentity, Step: StepToken, Host: "gitlab-1108042010.ca-central-1.elb.amazonaws.com"}},
	// containerd 1.6 anonymous token refused (resolver.go: failed to fetch anonymous token: unexpected status: 401)
	{"containerd16/anonymous-token-401",
		c16 + `failed to resolve reference "` + acrImg + `": failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized`,
		want{Code: verdict.AuthUnauthorized, Stage: verdict.StageAuth, Condition: verdict.ConditionTLSIdentity, Step: StepToken}},
	// containerd >= 1.7 token refused with a URL (remotes/errors: unexpected status from POST request to URL)
	{"containerd17/oauth-token-403",
		kubeFailed + `failed to pull and unpack image "` + acrImg + `": failed to resolve reference "` + acrImg + `": failed to authorize: failed to fetch oauth token: unexpected status from POST request to https://myacr.azurecr.io/oauth2/token: 403 Forbidden`,
		want{Code: verdict.AuthForbidden, Stage: verdict.StageAuth, Condition: verdict.ConditionTLSIdentity, Host: acr}},
	// containerd >= 1.7: 403 from the ECR manifest HEAD (aws-samples/bedrock-access-gateway#127 shape)
	{"containerd17/ecr-manifest-403",
		`Failed to pull image "` + ecrImg + `": failed to pull and unpack image "` + ecrImg + `": failed to resolve reference "` + ecrImg + `": unexpected status from HEAD request to https://` + ecr + `/v2/team/app/manifests/1.4.2: 403 Forbidden`,
		want{Code: verdict.RegistryForbidden, Stage: verdict.StageRegistry, Condition: verdict.ConditionTLSIdentity, Host: ecr, Step: StepResolve}},
	// docker/sbx-releases#525: the CDN blob host refuses (403) while the registry worked
	{"containerd17/cdn-blob-403",
		`failed to pull and unpack image "public.ecr.aws/docker/library/redis:latest": failed to copy: httpReadSeeker: failed open: unexpected status from GET request to https://d2glxqk2uabbnd.cloudfront.net/v2/docker/library/redis/blobs/sha256:abcd: 403 Forbidden`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Host: "d2glxqk2uabbnd.cloudfront.net"}},
	// ECR layers from S3 behind a gateway endpoint policy: S3 AccessDenied XML (shape of moby/moby#34185 under containerd)
	{"containerd/ecr-s3-accessdenied",
		kubeFailed[:0] + `Failed to pull image "` + ecrImg + `": rpc error: code = Unknown desc = failed to pull and unpack image "` + ecrImg + `": failed to copy: httpReadSeeker: failed open: unexpected status code https://prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com/ab12-123456789012-1111/abcd?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef: 403 Forbidden <?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Host: "prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com"}},
	// ECR layer from S3 with no route (the ECR subnet scenario: a subnet without the S3 gateway route)
	{"containerd/ecr-s3-timeout",
		`Failed to pull image "` + ecrImg + `": rpc error: code = Unknown desc = failed to pull and unpack image "` + ecrImg + `": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com/ab12/abcd?X-Amz-Signature=secret": dial tcp 52.218.1.2:443: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Step: StepBlob, Address: "52.218.1.2:443"}},
	// ACR data endpoint refused by its network rules (AuthorizationFailure XML, microsoft/AzureStorageExplorer#3594 body)
	{"containerd/acr-data-authorizationfailure",
		c16 + `failed to copy: httpReadSeeker: failed open: unexpected status code https://myacr.westeurope.data.azurecr.io/myacr/v2/team/app/blobs/sha256:abcd?se=2024&sig=SECRET: 403 This request is not authorized to perform this operation. <?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationFailure</Code><Message>This request is not authorized to perform this operation.</Message></Error>`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Host: "myacr.westeurope.data.azurecr.io"}},
	// ACR data endpoint that the privatelink zone does not cover: NXDOMAIN on the blob host only
	{"containerd/acr-data-nxdomain",
		c16 + `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://myacr.westeurope.data.azurecr.io/myacr/v2/team/app/blobs/sha256:abcd": dial tcp: lookup myacr.westeurope.data.azurecr.io on 168.63.129.16:53: no such host`,
		want{Code: verdict.DNSNXDomain, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet, Host: "myacr.westeurope.data.azurecr.io"}},
	// ACR firewall: 403 denied: client with IP (public path)
	{"containerd/acr-firewall",
		c16 + `failed to resolve reference "` + acrImg + `": unexpected status from HEAD request to https://myacr.azurecr.io/v2/team/app/manifests/1.4.2: 403 Forbidden: denied: client with IP '20.1.2.3' is not allowed access. Refer https://aka.ms/acr/firewall to grant access.`,
		want{Code: verdict.RegistryForbidden, Condition: verdict.ConditionTLSIdentity, Host: acr}},
	// containerd reads the config blob and gets a 404 (blob missing)
	{"containerd/blob-404",
		c16 + `failed to copy: httpReadSeeker: failed open: content at https://myacr.azurecr.io/v2/team/app/blobs/sha256:abcd not found: not found`,
		want{Code: verdict.BlobNotFound, Stage: verdict.StageBlob, Condition: verdict.ConditionRegistry}},
	// containerd/containerd#3604 (unpack after download)
	{"containerd/unpack",
		`Failed to pull image "prom/mysqld-exporter:v0.12.1": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/prom/mysqld-exporter:v0.12.1": failed to unpack image on snapshotter overlayfs: content digest sha256:0c18b88b8db3c193eefeede31a80d5d0c850306076b7166910ed239685dd20b0: not found`,
		want{Code: verdict.Other, Step: StepUnpack}},
	// containerd digest check while committing a layer
	{"containerd/digest",
		c16 + `failed to copy: failed commit on ref "layer-sha256:abcd": unexpected commit digest sha256:1111, expected sha256:abcd: failed precondition`,
		want{Code: verdict.BlobDigestMismatch, Stage: verdict.StageBlob, Condition: verdict.ConditionRegistry}},
	// containerd: TLS handshake timeout on a blob host (MTU)
	{"containerd/blob-tls-handshake-timeout",
		c16 + `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://myacr.westeurope.data.azurecr.io/myacr/v2/team/app/blobs/sha256:abcd": net/http: TLS handshake timeout`,
		want{Code: verdict.TLSHandshakeTimeout, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet}},
	// containerd: reset on the registry host (TLS-inspecting firewall)
	{"containerd/reset",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": read tcp 10.0.1.5:51234->20.1.2.3:443: read: connection reset by peer`,
		want{Code: verdict.ConnectReset, Condition: verdict.ConditionRoute}},
	// containerd 2.x with Go >= 1.20 TLS prefix (k0sproject/k0s#5478)
	{"containerd2/tls-prefix-name",
		`failed to pull and unpack image "registry.home.lab/nginxinc/nginx-unprivileged:v1.25.1": failed to resolve reference "registry.home.lab/nginxinc/nginx-unprivileged:v1.25.1": failed to do request: Head "https://registry.home.lab/v2/nginxinc/nginx-unprivileged/manifests/v1.25.1": tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match registry.home.lab`,
		want{Code: verdict.TLSNameMismatch, Condition: verdict.ConditionTLSIdentity, Host: "registry.home.lab"}},
	{"containerd2/tls-prefix-unknown-ca",
		`failed to pull and unpack image "registry.home.lab/app:1": failed to resolve reference "registry.home.lab/app:1": failed to do request: Head "https://registry.home.lab/v2/app/manifests/1": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
		want{Code: verdict.TLSUnknownAuthority, Condition: verdict.ConditionTLSIdentity}},
	{"containerd2/expired",
		`failed to pull and unpack image "registry.home.lab/app:1": failed to resolve reference "registry.home.lab/app:1": failed to do request: Head "https://registry.home.lab/v2/app/manifests/1": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2025-03-01T10:00:00Z is after 2025-02-01T00:00:00Z`,
		want{Code: verdict.TLSExpired, Condition: verdict.ConditionTLSIdentity}},
	{"containerd2/not-yet-valid",
		`failed to pull and unpack image "registry.home.lab/app:1": failed to resolve reference "registry.home.lab/app:1": failed to do request: Head "https://registry.home.lab/v2/app/manifests/1": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2019-03-01T10:00:00Z is before 2025-02-01T00:00:00Z`,
		want{Code: verdict.TLSNotYetValid, Condition: verdict.ConditionTLSIdentity}},
	// containerd 2.x transfer-service shape: failed to resolve image
	{"containerd2/resolve-image-not-found",
		`Failed to pull image "docker.io/library/nosuch:latest": failed to pull and unpack image "docker.io/library/nosuch:latest": failed to resolve image: docker.io/library/nosuch:latest: not found`,
		want{Code: verdict.ManifestNotFound, Condition: verdict.ConditionImage, Step: StepResolve, Registry: "docker.io"}},
	// containerd: HTTP registry on an HTTPS request
	{"containerd/plain-http",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": http: server gave HTTP response to HTTPS client`,
		want{Code: verdict.TLSHandshakeFailed, Condition: verdict.ConditionTLSIdentity}},
	// containerd: server error on the registry host
	{"containerd/5xx",
		c16 + `failed to resolve reference "` + acrImg + `": pulling from host myacr.azurecr.io failed with status code [manifests 1.4.2]: 503 Service Unavailable`,
		want{Code: verdict.RegistryServerError, Condition: verdict.ConditionRegistry}},
	// containerd: EOF from a proxy that closes the connection
	{"containerd/eof",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": EOF`,
		want{Code: verdict.ConnectReset, Condition: verdict.ConditionRoute}},
	// containerd: network unreachable (no default route on the node)
	{"containerd/network-unreachable",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp 20.1.2.3:443: connect: network is unreachable`,
		want{Code: verdict.ConnectUnreachable, Condition: verdict.ConditionRoute}},
	// containerd: server misbehaving (SERVFAIL from a forwarder)
	{"containerd/servfail",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp: lookup myacr.azurecr.io on 10.0.0.10:53: server misbehaving`,
		want{Code: verdict.DNSServFail, Condition: verdict.ConditionDNS}},
	// kubernetes/minikube#15626: bare deadline (ambiguous)
	{"kubelet/deadline",
		`Failed to pull image "noyandocker/authservice": rpc error: code = Unknown desc = context deadline exceeded`,
		want{Code: verdict.HTTPTimeout, Ambiguous: true, Registry: "docker.io"}},

	// ---- Docker / dockershim
	// kubernetes/kubernetes#43924
	{"dockershim/unknown-ca-v1",
		`Failed to pull image "10.78.0.228:5000/monitorms": Error response from daemon: {"message":"Get https://10.78.0.228:5000/v1/_ping: x509: certificate signed by unknown authority"}`,
		want{Code: verdict.TLSUnknownAuthority, Host: "10.78.0.228:5000", Step: StepPing, Registry: "10.78.0.228:5000"}},
	// kubernetes/minikube#3721
	{"docker/unknown-ca-ping",
		`failed to pull image k8s.gcr.io/kube-apiserver:v1.13.3: output: Error response from daemon: Get https://k8s.gcr.io/v2/: x509: certificate signed by unknown authority`,
		want{Code: verdict.TLSUnknownAuthority, Host: "k8s.gcr.io", Step: StepPing}},
	// kubernetes/minikube#15626 (dockershim with DNS timeout)
	{"dockershim/dns-timeout",
		`Failed to pull image "noyandocker/productservice": rpc error: code = Unknown desc = Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 192.168.65.2:53: read udp 192.168.49.2:59506->192.168.65.2:53: i/o timeout`,
		want{Code: verdict.DNSTimeout, Condition: verdict.ConditionDNS, Host: "registry-1.docker.io", Step: StepPing}},
	// docker/for-mac#1340
	{"docker/servfail",
		`Error response from daemon: Get https://registry-1.docker.io/v2/: dial tcp: lookup registry-1.docker.io on 192.168.65.1:53: server misbehaving`,
		want{Code: verdict.DNSServFail, Host: "registry-1.docker.io"}},
	// docker.kitematic#3427 (no nameserver listening)
	{"docker/nameserver-refused",
		`(HTTP code 500) server error - {"message":"Get https://registry-1.docker.io/v2/: dial tcp: lookup registry-1.docker.io on [::1]:53: read udp [::1]:50843->[::1]:53: read: connection refused"}`,
		want{Code: verdict.DNSTimeout, Condition: verdict.ConditionDNS}},
	// docker.kitematic#3378 (config blob on the CDN, signed URL)
	{"docker/config-cdn-timeout",
		`error pulling image configuration: Get https://dseasb33srnrn.cloudfront.net/registry-v2/docker/registry/v2/blobs/sha256/a6/a61a/data?Expires=1512223653&Signature=dWukl&Key-Pair-Id=APKAJ: dial tcp 218.248.255.164:443: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Stage: verdict.StageBlob, Step: StepConfig, Host: "dseasb33srnrn.cloudfront.net", Condition: verdict.ConditionEndpointSet}},
	// xorbitsai/inference#1601 (no URL at all)
	{"docker/config-no-url",
		`error pulling image configuration: download failed after attempts=6: dial tcp 108.160.169.181:443: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Stage: verdict.StageBlob, Step: StepConfig, Address: "108.160.169.181:443"}},
	// moby/moby#34185 (S3 AccessDenied behind a VPC endpoint policy)
	{"docker/s3-accessdenied",
		`error pulling image configuration: error parsing HTTP 403 response body: invalid character '<' looking for beginning of value: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>835EB39A43ACC922</RequestId></Error>"`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob, Step: StepConfig, Condition: verdict.ConditionEndpointSet}},
	// kubernetes/registry.k8s.io#264 (S3 redirect host with a wrong certificate)
	{"docker/s3-cert-name",
		`error pulling image configuration: download failed after attempts=6: tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match prod-registry-k8s-io-ap-south-1.s3.dualstack.ap-south-1.amazonaws.com`,
		want{Code: verdict.TLSNameMismatch, Stage: verdict.StageBlob, Condition: verdict.ConditionTLSIdentity}},
	// docker.kitematic#2771 (token host TLS handshake timeout)
	{"docker/token-handshake-timeout",
		`(HTTP code 500) server error - {"message":"Get https://registry-1.docker.io/v2/library/redis/manifests/latest: Get https://auth.docker.io/token?account=daishun&scope=repository%3Alibrary%2Fredis%3Apull&service=registry.docker.io: net/http: TLS handshake timeout"}`,
		want{Code: verdict.TLSHandshakeTimeout, Stage: verdict.StageAuth, Step: StepToken, Host: "auth.docker.io", Condition: verdict.ConditionEndpointSet}},
	// any-listen/any-listen#5 (ambiguous denial)
	{"docker/pull-access-denied",
		`Error response from daemon: pull access denied for test, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`,
		want{Code: verdict.AuthAmbiguous, Ambiguous: true, Condition: verdict.ConditionTLSIdentity}},
	// docker-archive/compose-cli#853 (ECS agent, insufficient_scope for a mistyped name)
	{"ecs/insufficient-scope",
		`CannotPullContainerError: failed to resolve ref "docker.io/library/chatalicious_braid:latest": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`,
		want{Code: verdict.AuthAmbiguous, Ambiguous: true}},
	// ceph/ceph-csi#2029 (dockershim rate limit)
	{"dockershim/ratelimit",
		`Failed to pull image "docker.io/library/busybox:1.29": rpc error: code = Unknown desc = Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`,
		want{Code: verdict.RateLimited, Condition: verdict.ConditionRegistry, Image: "docker.io/library/busybox:1.29"}},
	// aws/containers-roadmap#132
	{"docker/ecr-no-basic-auth",
		`Handler for POST /v1.38/images/create returned error: Get https://` + ecr + `/v2/nginxlinux/manifests/latest: no basic auth credentials`,
		want{Code: verdict.RegistryUnauthorized, Host: ecr, Step: StepManifest}},
	// moby/moby#46765 (docker with containerd store, platform)
	{"docker/platform",
		`Error response from daemon: no matching manifest for linux/arm64/v8 in the manifest list entries: no match for platform in manifest: not found`,
		want{Code: verdict.PlatformNotFound, Condition: verdict.ConditionImage}},
	// CybercentreCanada/assemblyline-docker-compose#50
	{"docker/manifest-not-found",
		`Error response from daemon: manifest for cccs/assemblyline-service-unpacme:4.6.stable not found: manifest unknown: manifest unknown`,
		want{Code: verdict.ManifestNotFound, Condition: verdict.ConditionImage}},
	// docker hub v1 shape (docker/hub-feedback#554)
	{"docker/read-timeout",
		`Get https://index.docker.io/v1/repositories/library/busybox/images: read tcp 162.242.195.84:443: i/o timeout`,
		want{Code: verdict.HTTPTimeout}},
	// moby/moby#38787 (a TLS-inspecting proxy's certificate)
	{"docker/name-mismatch",
		`Error response from daemon: Get https://registry-1.docker.io/v2/: x509: certificate is valid for *.channeladvisor.com, not registry-1.docker.io`,
		want{Code: verdict.TLSNameMismatch, Host: "registry-1.docker.io"}},
	// Kong/charts#257
	{"dockershim/expired",
		`Failed to pull image "kong-docker-kubernetes-ingress-controller.bintray.io/kong-ingress-controller:0.9.0": rpc error: code = Unknown desc = Error response from daemon: Get https://kong-docker-kubernetes-ingress-controller.bintray.io/v2/: x509: certificate has expired or is not yet valid`,
		want{Code: verdict.TLSExpired, Condition: verdict.ConditionTLSIdentity}},
	// docker: waiting for connection (Client.Timeout before the TCP connect finished)
	{"docker/waiting-for-connection",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`,
		want{Code: verdict.ConnectTimeout, Condition: verdict.ConditionRoute, Host: acr}},
	// docker: awaiting headers only (server accepted, never answered)
	{"docker/awaiting-headers",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`,
		want{Code: verdict.HTTPTimeout, Condition: verdict.ConditionRegistry}},

	// ---- CRI-O (containers/image texts)
	// cri-o/cri-o#2723
	{"crio/ping-timeout",
		`pulling image failed: rpc error: code = Unknown desc = pinging docker registry returned: Get http://registry-1.docker.io/v2/: dial tcp 34.199.40.84:80: i/o timeout`,
		want{Code: verdict.ConnectTimeout, Step: StepPing, Host: "registry-1.docker.io", Address: "34.199.40.84:80"}},
	// kubernetes-sigs/cri-tools#1608 (OpenShift, an internal Nexus): the bare
	// status text after the URL is a CONNECT answer (Go net/http dialConn),
	// so the cluster proxy could not forward to the internal host; c/image
	// says "StatusCode: 500" for a registry's own 500.
	{"crio/ping-500",
		`rpc error: code = Unknown desc = pinging container registry repo.example.com: Get "https://repo.example.com/v2/": Internal Server Error`,
		want{Code: verdict.ProxyUpstreamFailed, Condition: verdict.ConditionProxy, Step: StepPing, Host: "repo.example.com"}},
	// cri-o/cri-o#2331
	{"crio/denied-unauthorized",
		`pulling image failed: rpc error: code = Unknown desc = Error reading manifest latest in docker.io/crio/busybox: errors: denied: requested access to the resource is denied unauthorized: authentication required`,
		want{Code: verdict.AuthAmbiguous, Ambiguous: true, Step: StepManifest, Image: "docker.io/crio/busybox:latest"}},
	// cri-o/cri-o#2331 (comment; DNS through an HTTP proxy): the proxy's
	// name does not resolve ("lookup http": a proxy URL Go read as
	// http://http://..., see runtimecfg's effectiveProxy)
	{"crio/proxy-dns",
		`pulling image failed: rpc error: code = Unknown desc = error pinging docker registry registry-1.docker.io: Get "https://registry-1.docker.io/v2/": proxyconnect tcp: dial tcp: lookup http: Temporary failure in name resolution`,
		want{Code: verdict.ProxyDNS, Condition: verdict.ConditionProxy}},
	// teleproxy/teleproxy#49 (podman / CRI-O manifest unknown)
	{"crio/manifest-unknown",
		`Error: initializing source docker://ghcr.io/teleproxy/teleproxy:latest: reading manifest sha256:ce8e4713951ded535f652f0b41e08092c2fe9ec7e20042232cf177aeb2283ac2 in ghcr.io/teleproxy/teleproxy: manifest unknown`,
		want{Code: verdict.ManifestNotFound, Step: StepManifest, Registry: "ghcr.io"}},
	// CRI-O: private registry with a NXDOMAIN on ping
	{"crio/ping-nxdomain",
		`Failed to pull image "myacr.azurecr.io/team/app:1.4.2": initializing source docker://myacr.azurecr.io/team/app:1.4.2: pinging container registry myacr.azurecr.io: Get "https://myacr.azurecr.io/v2/": dial tcp: lookup myacr.azurecr.io on 10.0.0.10:53: no such host`,
		want{Code: verdict.DNSNXDomain, Step: StepPing, Host: acr, Image: acrImg}},
	// CRI-O: 401 reading the manifest
	{"crio/unauthorized",
		`Failed to pull image "myacr.azurecr.io/team/app:1.4.2": initializing source docker://myacr.azurecr.io/team/app:1.4.2: reading manifest 1.4.2 in myacr.azurecr.io/team/app: unauthorized: authentication required, visit https://aka.ms/acr/authorization for more information.`,
		want{Code: verdict.RegistryUnauthorized, Step: StepManifest, Condition: verdict.ConditionTLSIdentity}},
	// CRI-O: platform (containers/image "choosing image instance")
	{"crio/platform",
		`Failed to pull image "example.com/app:1": choosing image instance: no image found in image index for architecture "arm64", variant "v8", OS "linux"`,
		want{Code: verdict.PlatformNotFound, Condition: verdict.ConditionImage}},
	// CRI-O: a blob read from S3 refused
	{"crio/blob-403",
		`Failed to pull image "` + ecrImg + `": writing blob: storing blob to file "/var/tmp/storage123/1": fetching blob: received unexpected HTTP status: 403 Forbidden`,
		want{Code: verdict.BlobForbidden, Stage: verdict.StageBlob, Condition: verdict.ConditionEndpointSet}},
	// CRI-O: unexpected EOF while reading a layer
	{"crio/blob-eof",
		`Failed to pull image "example.com/app:1": writing blob: storing blob to file "/var/tmp/storage1/1": happened during read: unexpected EOF`,
		want{Code: verdict.ConnectReset, Stage: verdict.StageBlob}},

	// ---- third held-out set (testdata/valid-heldout-3.txt): one row per fix
	// containerd/containerd#2410 (containerd 1.1 wording, platform named)
	{"containerd11/platform-current",
		`no match for current platform linux/arm/v7 in manifest sha256:32efb15cbb8a46f4b564857e534fd4c26a4a15813885f91b1a95b5758fea3fd5: not found`,
		want{Code: verdict.PlatformNotFound, Condition: verdict.ConditionImage}},
	// moby/moby#37127 (Docker for Windows: Winsock WSAECONNREFUSED text after connectex)
	{"windows/connectex-refused",
		`Error response from daemon: Get https://registry-1.docker.io/v2/: dial tcp 35.169.231.249:443: connectex: No connection could be made because the target machine actively refused it.`,
		want{Code: verdict.ConnectRefused, Host: "registry-1.docker.io", Address: "35.169.231.249:443"}},
	// built: WSAETIMEDOUT's text after connectex (Windows FormatMessage)
	{"windows/connectex-timeout",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": dial tcp 20.49.102.151:443: connectex: A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond.`,
		want{Code: verdict.ConnectTimeout, Host: acr}},
	// built: WSAECONNRESET's text after wsarecv (Windows FormatMessage)
	{"windows/wsarecv-reset",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": read tcp 10.0.0.4:50123->20.49.102.151:443: wsarecv: An existing connection was forcibly closed by the remote host.`,
		want{Code: verdict.ConnectReset, Host: acr}},
	// aws-samples/bedrock-access-gateway#114 (ECS agent: a digest reference resolved
	// by containerd's HEAD /blobs/DIGEST fallback, refused by ECR)
	{"ecs/resolve-digest-blobs-403",
		`CannotPullContainerError: pull image manifest has been retried 1 time(s): failed to resolve ref 366590864501.dkr.ecr.us-west-2.amazonaws.com/bedrock-proxy-api-ecs:latest@sha256:5de487da52320ad9978f3a7a4f6700910342956c7dcb3b6f955222b4cccbd600: unexpected status from HEAD request to https://366590864501.dkr.ecr.us-west-2.amazonaws.com/v2/bedrock-proxy-api-ecs/blobs/sha256:5de487da52320ad9978f3a7a4f6700910342956c7dcb3b6f955222b4cccbd600: 403 Forbidden`,
		want{Code: verdict.RegistryForbidden, Step: StepResolve, Stage: verdict.StageRegistry}},
	// docker-archive-public/docker.kitematic#1838 (EINVAL from a nonsense proxy address)
	{"docker/connect-invalid-argument",
		`Error while pulling image: Get https://index.docker.io/v1/repositories/kitematic/hello-world-nginx/images: dial tcp 0.0.8.90:443: connect: invalid argument`,
		want{Code: verdict.ConnectError, Address: "0.0.8.90:443"}},

	// ---- the runtime's proxy (Go net/http: proxyconnect around the dial of
	// the proxy; a refused CONNECT as the bare status text after the URL)
	// containerd/nerdctl#1193 (containerd's resolver through a proxy that is not there)
	{"proxy/nerdctl-refused",
		`failed to resolve reference "docker.io/library/hello-world:latest": failed to do request: Head "https://registry-1.docker.io/v2/library/hello-world/manifests/latest": proxyconnect tcp: dial tcp 127.0.0.1:7890: connect: connection refused`,
		want{Code: verdict.ProxyRefused, Condition: verdict.ConditionProxy, Stage: verdict.StageRegistry, Host: "registry-1.docker.io"}},
	// docker/for-win#4607 (no route to the proxy)
	{"proxy/docker-no-route",
		`docker: Error response from daemon: Get https://registry-1.docker.io/v2/: proxyconnect tcp: dial tcp 192.168.65.83:8080: connect: no route to host.`,
		want{Code: verdict.ProxyUnreachable, Condition: verdict.ConditionProxy}},
	// replicatedhq/kURL's proxy check (crictl through a proxy whose name does not resolve)
	{"proxy/crictl-name",
		`rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/test/invalid/image:latest": failed to resolve reference "docker.io/test/invalid/image:latest": failed to do request: Head "https://registry-1.docker.io/v2/test/invalid/image/manifests/latest": proxyconnect tcp: dial tcp: lookup invalidproxy: Temporary failure in name resolution`,
		want{Code: verdict.ProxyDNS, Condition: verdict.ConditionProxy, Stage: verdict.StageRegistry}},
	// Docker Desktop (a proxy name that does not answer DNS)
	{"proxy/docker-desktop-dns-timeout",
		`failed to fetch anonymous token: proxyconnect tcp: dial tcp: lookup http.docker.internal on 192.168.65.7:53: i/o timeout`,
		want{Code: verdict.ProxyDNS, Condition: verdict.ConditionProxy}},
	// OpenShift / CRI-O kubelet event behind an authenticating proxy: its
	// primary attempt (the mirror's "manifest unknown" before it got further
	// and decides the whole event, as attempts.go chooses)
	{"proxy/crio-auth",
		`docker.io/bitnami/zookeeper:3.6.2-debian-10-r37: error pinging docker registry registry-1.docker.io: Get "https://registry-1.docker.io/v2/": Proxy authentication required`,
		want{Code: verdict.ProxyAuthRequired, Condition: verdict.ConditionProxy, Host: "registry-1.docker.io"}},
	// an OpenShift egress proxy's whitelist (the CONNECT refused: not the registry's 403)
	{"proxy/openshift-whitelist",
		`W0412 13:52:16.288545   50288 dockerimagelookup.go:233] Docker registry lookup failed: Get https://registry-1.docker.io/v2/: Forbidden`,
		want{Code: verdict.ProxyDenied, Condition: verdict.ConditionProxy}},
	// docker behind a corporate proxy refusing MCR
	{"proxy/docker-mcr-forbidden",
		`Error response from daemon: Get https://mcr.microsoft.com/v2/: Forbidden`,
		want{Code: verdict.ProxyDenied, Condition: verdict.ConditionProxy}},
	// docker build behind a corporate firewall's proxy
	{"proxy/docker-hub-unavailable",
		`Get "https://registry-1.docker.io/v2/": Service Unavailable`,
		want{Code: verdict.ProxyUpstreamFailed, Condition: verdict.ConditionProxy}},
	// a registry's own 403 stays the registry's (containerd names the status code)
	{"proxy/not-a-registry-403",
		c16 + `failed to resolve reference "` + acrImg + `": pulling from host myacr.azurecr.io failed with status code [manifests 1.4.2]: 403 Forbidden`,
		want{Code: verdict.RegistryForbidden, Condition: verdict.ConditionTLSIdentity}},
	// Go's UnknownAuthorityError names the candidate authority: an interceptor's
	// (the Zscaler CA CN of aws/eks-anywhere-packages#926)
	{"proxy/zscaler-candidate-authority",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of "x509: ECDSA verification failure" while trying to verify candidate authority certificate "Zscaler Intermediate Root CA (zscaler.net)")`,
		want{Code: verdict.ProxyTLSIntercepted, Condition: verdict.ConditionTLSIdentity}},
	// the same error without an interceptor's name stays unknown authority
	{"proxy/plain-unknown-authority",
		c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
		want{Code: verdict.TLSUnknownAuthority, Condition: verdict.ConditionTLSIdentity}},

	// ---- kubelet's own reasons
	// hystax/optscale#701
	{"kubelet/never-pull",
		`Container image "error_pages:local" is not present with pull policy of Never`,
		want{Code: verdict.NeverPull, Stage: verdict.StageReference, Condition: verdict.ConditionImage, Image: "error_pages:local"}},
	{"kubelet/never-pull-reason",
		`Error: ErrImageNeverPull`,
		want{Code: verdict.NeverPull, Stage: verdict.StageReference}},
	// cloudfoundry-incubator/kubecf#63
	{"kubelet/invalid-name",
		`Failed to apply default image tag "/cloudfoundry/75f129a0-d8c9-415a-9a8a-f514002f1459:a28a05709747": couldn't parse image reference "/cloudfoundry/75f129a0-d8c9-415a-9a8a-f514002f1459:a28a05709747": invalid reference format`,
		want{Code: verdict.ReferenceInvalid, Stage: verdict.StageReference, Condition: verdict.ConditionImage}},
	// jupyterhub/zero-to-jupyterhub-k8s#472
	{"kubelet/invalid-name-lowercase",
		`Failed to apply default image tag "None:None": couldn't parse image reference "None:None": invalid reference format: repository name must be lowercase`,
		want{Code: verdict.ReferenceInvalid}},
	{"kubelet/invalid-image-name-reason",
		`Error: InvalidImageName`,
		want{Code: verdict.ReferenceInvalid}},
	// kubelet BackOff event (no cause in it)
	{"kubelet/backoff",
		`Back-off pulling image "` + acrImg + `"`,
		want{Code: verdict.Other, Image: acrImg, Registry: acr}},
	{"kubelet/errimagepull",
		`Error: ErrImagePull`,
		want{Code: verdict.Other}},
	// kubelet >= 1.30: BackOff carries the error
	{"kubelet/backoff-with-cause",
		`Back-off pulling image "` + acrImg + `": ErrImagePull: failed to pull and unpack image "` + acrImg + `": failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp: lookup myacr.azurecr.io on 168.63.129.16:53: no such host`,
		want{Code: verdict.DNSNXDomain, Condition: verdict.ConditionDNS, Image: acrImg}},
	{"kubelet/pull-qps",
		`Failed to pull image "example.com/app:1": pull QPS exceeded`,
		want{Code: verdict.RateLimited}},
	{"kubelet/unknown-cause",
		`Failed to pull image "example.com/app:1": rpc error: code = Unknown desc = something nobody has seen before`,
		want{Code: verdict.Other}},
	{"kubelet/credential-provider",
		`Failed to pull image "` + ecrImg + `": rpc error: code = Unknown desc = Error response from daemon: Get https://` + ecr + `/v2/team/app/manifests/1.4.2: error getting credentials - err: exit status 1, out: ` + "``",
		want{Code: verdict.CredentialsError, Condition: verdict.ConditionTLSIdentity}},
	{"kubelet/already-present",
		`Container image "` + acrImg + `" already present on machine`,
		want{Code: verdict.OK, Image: acrImg}},
	{"kubelet/pulled",
		`Successfully pulled image "` + acrImg + `" in 2.1s (2.1s including waiting)`,
		want{Code: verdict.OK}},
}

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.msg)
			check := func(field, got, want string) {
				t.Helper()
				if want != "" && got != want {
					t.Errorf("Classify(%q).%s = %q, want %q (rule %q)", short(tc.msg), field, got, want, Classify(tc.msg).Rule)
				}
			}
			check("Code", string(got.Code), string(tc.want.Code))
			check("Stage", string(got.Stage), string(tc.want.Stage))
			check("Condition", string(got.Condition), string(tc.want.Condition))
			check("Step", got.Step, tc.want.Step)
			check("Host", got.Host, tc.want.Host)
			check("Address", got.Address, tc.want.Address)
			check("Image", got.Image, tc.want.Image)
			check("Registry", got.Registry, tc.want.Registry)
			if got.Ambiguous != tc.want.Ambiguous {
				t.Errorf("Classify(%q).Ambiguous = %v, want %v", short(tc.msg), got.Ambiguous, tc.want.Ambiguous)
			}
			if got.Rule == "" {
				t.Errorf("Classify(%q).Rule is empty", short(tc.msg))
			}
			if got.Failed() {
				if got.Summary == "" || len(got.Advice) == 0 {
					t.Errorf("Classify(%q): summary %q, advice %v: want both", short(tc.msg), got.Summary, got.Advice)
				}
				if got.Cause == "" {
					t.Errorf("Classify(%q).Cause is empty", short(tc.msg))
				}
			}
			for _, secret := range []string{"deadbeef", "SECRET", "dWukl", "secret"} {
				if strings.Contains(got.URL, secret) || strings.Contains(got.Summary, secret) {
					t.Errorf("Classify(%q) leaks %q: url %q summary %q", short(tc.msg), secret, got.URL, got.Summary)
				}
			}
		})
	}
}

func TestClassifyNotAPullFailure(t *testing.T) {
	for _, msg := range []string{
		"",
		"   ",
		`Successfully assigned default/web-1 to node-a`,
		`Pulling image "nginx:1.25"`,
		`Started container web`,
		`Readiness probe failed: HTTP probe failed with statuscode: 503`,
		`Created pod: web-7c9f`,
	} {
		if got := Classify(msg); got.Failed() {
			t.Errorf("Classify(%q) = rule %q code %s, want no pull failure", msg, got.Rule, got.Code)
		}
	}
}

// TestClassifyAmbiguousAdvice: an ambiguous message says so and its advice
// covers both readings.
func TestClassifyAmbiguousAdvice(t *testing.T) {
	c := Classify(`Error response from daemon: pull access denied for team/app, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`)
	joined := strings.ToLower(strings.Join(c.Advice, " "))
	for _, w := range []string{"name", "identity"} {
		if !strings.Contains(joined, w) {
			t.Errorf("ambiguous advice %q does not mention %q", joined, w)
		}
	}
}

func TestClassifyBounded(t *testing.T) {
	big := strings.Repeat("dial tcp 1.2.3.4:443: ", 200000) + "i/o timeout"
	c := Classify(big)
	_ = c // must return; content beyond MaxMessage is ignored
	if n := len(normalize(big)); n > MaxMessage {
		t.Errorf("normalize kept %d bytes, want <= %d", n, MaxMessage)
	}
}

func short(s string) string {
	if len(s) > 90 {
		return s[:90] + "..."
	}
	return s
}

func FuzzClassify(f *testing.F) {
	for _, tc := range classifyCases {
		f.Add(tc.msg)
	}
	f.Add(`lookup  on : i/o timeout`)
	f.Add(`Get "http://[::1`)
	f.Add(`pulling from host  failed with status code [`)
	f.Fuzz(func(t *testing.T, msg string) {
		c := classify(msg) // no recover: a panic fails the fuzz run
		if c.Rule == "" && (c.Code != "" || c.Summary != "") {
			t.Errorf("classify(%q): no rule but code %q summary %q", msg, c.Code, c.Summary)
		}
		if c.Failed() && c.Cause == "" {
			t.Errorf("classify(%q): failure without a cause", msg)
		}
	})
}

func TestFamilyHint(t *testing.T) {
	// Go's net.OpError around the kernel's errno, after containerd's
	// resolver wraps it: each errno by the address's family (family.go).
	head := c16 + `failed to resolve reference "` + acrImg + `": failed to do request: Head "https://myacr.azurecr.io/v2/team/app/manifests/1.4.2": dial tcp `
	for _, tc := range []struct {
		name, tail string
		code       verdict.Code
		want       string // in the advice, "" for no family hint
	}{
		{"v4 network unreachable", `20.1.2.3:443: connect: network is unreachable`, verdict.ConnectUnreachable, "DNS64 and NAT64"},
		{"v6 network unreachable", `[2603:1030:7::10]:443: connect: network is unreachable`, verdict.AddressFamilyUnusable, "IPv6 default route"},
		{"v6 no source address", `[2603:1030:7::10]:443: connect: cannot assign requested address`, verdict.AddressFamilyUnusable, "no IPv6 address to send from"},
		{"v4 no source port", `20.1.2.3:443: connect: cannot assign requested address`, verdict.ConnectError, "ephemeral ports"},
		{"v6 disabled in the kernel", `[2603:1030:7::10]:443: socket: address family not supported by protocol`, verdict.AddressFamilyUnusable, "ipv6.disable=1"},
		{"v4 own firewall", `20.1.2.3:443: connect: operation not permitted`, verdict.ConnectError, "OUTPUT chain"},
		{"v6 security module", `[2603:1030:7::10]:443: connect: permission denied`, verdict.ConnectError, "security module"},
		{"v6 no route to host", `[2603:1030:7::10]:443: connect: no route to host`, verdict.ConnectUnreachable, ""},
		{"v4 no route to host", `10.0.1.99:443: connect: no route to host`, verdict.ConnectUnreachable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(head + tc.tail)
			if c.Code != tc.code {
				t.Fatalf("Code = %s (rule %s), want %s", c.Code, c.Rule, tc.code)
			}
			advice := strings.Join(c.Advice, "\n")
			if tc.want == "" {
				if strings.Contains(advice, "not even a default one") {
					t.Errorf("no route to host (EHOSTUNREACH) got the family hint: %q", advice)
				}
				return
			}
			if !strings.Contains(advice, tc.want) {
				t.Errorf("advice %q lacks %q", advice, tc.want)
			}
		})
	}
	// Go's errNoSuitableAddress and an IPv6 nameserver on a node without IPv6.
	if c := Classify(`unable to ping registry endpoint https://r.example.com:5000/v0/ v2 ping attempt failed with error: Get https://r.example.com:5000/v2/: dial tcp: address r.example.com:5000: no suitable address found`); c.Code != verdict.AddressFamilyUnusable || !strings.Contains(strings.Join(c.Advice, " "), "other family") {
		t.Errorf("no suitable address: %s %q", c.Code, c.Advice)
	}
	if c := Classify(`Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on [::1]:53: dial udp [::1]:53: socket: address family not supported by protocol`); c.Code != verdict.DNSError || !strings.Contains(strings.Join(c.Advice, " "), "nameserver [::1]:53") {
		t.Errorf("IPv6 nameserver without IPv6: %s %q", c.Code, c.Advice)
	}
	// A proxy's address gets no family hint: the host is the registry's.
	if c := Classify(`Head "https://r.example.com/v2/a/manifests/1": proxyconnect tcp: dial tcp 10.0.0.9:3128: connect: network is unreachable`); c.Code != verdict.ProxyUnreachable || strings.Contains(strings.Join(c.Advice, " "), "not even a default one") {
		t.Errorf("proxy unreachable: %s %q", c.Code, c.Advice)
	}
}

func TestMirrorHint(t *testing.T) {
	img := "registry.example.com/shop/checkout:1.4.2"
	mirrorURL := `https://mirror.corp.example:5000/v2/shop/checkout/manifests/1.4.2?ns=registry.example.com`
	// The kubelet's event: containerd's resolver returned the first host's error.
	event := `Failed to pull image "` + img + `": failed to pull and unpack image "` + img + `": failed to resolve reference "` + img + `": failed to do request: Head "` + mirrorURL + `": dial tcp 10.0.5.10:5000: i/o timeout`
	// containerd's journal (logrus logfmt) as the resolver moves on.
	journal := `time="2026-12-02T06:00:01.123456789Z" level=info msg="trying next host" error="failed to do request: Head \"` + mirrorURL + `\": dial tcp 10.0.5.10:5000: connect: connection refused" host="mirror.corp.example:5000"`
	direct := strings.Replace(event, "mirror.corp.example:5000", "registry.example.com", 1)
	direct = strings.Replace(direct, "?ns=registry.example.com", "", 1)
	for _, tc := range []struct {
		name, msg string
		role      verdict.Role
		want      string
	}{
		{"event names the first mirror", event, verdict.RoleMirror, "reports the first host that failed"},
		{"journal line is one host of the chain", journal, verdict.RoleMirror, "not the pull's result"},
		{"the registry itself", direct, verdict.RoleRegistry, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(tc.msg)
			if !c.Failed() || c.Role != tc.role {
				t.Fatalf("Classify: code %s role %q, want a failure with role %q", c.Code, c.Role, tc.role)
			}
			advice := strings.Join(c.Advice, "\n")
			if tc.want == "" {
				if strings.Contains(advice, "hosts.toml mirror") {
					t.Errorf("a request without ?ns= got the mirror hint: %q", advice)
				}
				return
			}
			if !strings.Contains(advice, tc.want) || !strings.Contains(advice, "certs.d/registry.example.com/hosts.toml") {
				t.Errorf("advice %q lacks %q and the registry's hosts.toml", advice, tc.want)
			}
		})
	}
}

func TestPublicAddressHint(t *testing.T) {
	// containerd 1.6 in the lab's ecr-private-dns-off scenario
	msg := `rpc error: code = Unknown desc = failed to pull and unpack image "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2": failed to resolve reference "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2": failed to do request: Head "https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/v2/shop/checkout/manifests/1.4.2": dial tcp 203.0.113.45:443: connect: network is unreachable`
	c := Classify(msg)
	if c.Code != verdict.ConnectUnreachable {
		t.Fatalf("Classify(...).Code = %s, want CONNECT_UNREACHABLE", c.Code)
	}
	if !strings.Contains(strings.Join(c.Advice, "\n"), "private DNS is off") {
		t.Errorf("advice %q lacks the public-address hint", c.Advice)
	}
	private := strings.Replace(msg, "203.0.113.45", "10.0.10.20", 1)
	if strings.Contains(strings.Join(Classify(private).Advice, "\n"), "private DNS is off") {
		t.Errorf("a private address got the public-address hint")
	}
}
