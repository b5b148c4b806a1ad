package verdict

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeplace"
)

// Platform is what a host name tells about where the registry runs.
type Platform string

const (
	PlatformECR       Platform = "ecr"               // ACCOUNT.dkr.ecr.REGION.amazonaws.com
	PlatformS3        Platform = "s3"                // ECR layer storage (prod-REGION-starport-layer-bucket.s3...)
	PlatformACR       Platform = "acr"               // NAME.azurecr.io
	PlatformACRData   Platform = "acr-data"          // NAME.REGION.data.azurecr.io, *.blob.core.windows.net
	PlatformDockerHub Platform = "docker-hub"        // registry-1.docker.io, auth.docker.io, CDN
	PlatformGAR       Platform = "artifact-registry" // LOCATION-docker.pkg.dev (registry, token and layers on one host)
	PlatformGCR       Platform = "gcr"               // gcr.io, REGION.gcr.io (registry and token)
	PlatformGCS       Platform = "gcs"               // storage.googleapis.com (Container Registry's layers)
	PlatformGeneric   Platform = "generic"
)

// DetectPlatform reads a host name the way an engineer would.
func DetectPlatform(host string) Platform {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	switch {
	case strings.Contains(h, ".dkr.ecr.") || strings.Contains(h, ".ecr.") && strings.HasSuffix(h, ".amazonaws.com") || ECRDualStackName(h):
		return PlatformECR
	case strings.Contains(h, "starport-layer-bucket") || strings.Contains(h, ".s3.") && strings.HasSuffix(h, ".amazonaws.com") || strings.HasPrefix(h, "s3.") && strings.HasSuffix(h, ".amazonaws.com"):
		return PlatformS3
	case strings.HasSuffix(h, ".data.azurecr.io") || strings.HasSuffix(h, ".blob.core.windows.net"):
		return PlatformACRData
	case strings.HasSuffix(h, ".azurecr.io"):
		return PlatformACR
	case strings.HasSuffix(h, "-docker.pkg.dev"):
		return PlatformGAR
	case h == "gcr.io" || strings.HasSuffix(h, ".gcr.io"):
		return PlatformGCR
	case h == "storage.googleapis.com" || strings.HasSuffix(h, ".storage.googleapis.com"):
		return PlatformGCS
	case h == "docker.io" || strings.HasSuffix(h, ".docker.io") || strings.HasSuffix(h, ".docker.com") || strings.Contains(h, "cloudflare.docker"):
		return PlatformDockerHub
	}
	return PlatformGeneric
}

// ECRDualStackName reports whether host is one of ECR's dual-stack (IPv4
// and IPv6) names: the registry ACCOUNT.dkr-ecr[-fips].REGION.on.aws (or
// .on.amazonwebservices.com.cn) and the API ecr.REGION.api.aws. AWS
// PrivateLink does not serve them: a private cluster must use the
// IPv4-only names (ACCOUNT.dkr.ecr.REGION.amazonaws.com, api.ecr.REGION.amazonaws.com).
func ECRDualStackName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if i := strings.LastIndexByte(h, ':'); i > 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	parts := strings.Split(h, ".")
	switch {
	case len(parts) == 4 && parts[0] == "ecr" && strings.HasSuffix(h, ".api.aws"): // a DNS suffix, not the cloud
		return true
	case len(parts) < 5 || parts[1] != "dkr-ecr" && parts[1] != "dkr-ecr-fips":
		return false
	}
	suffix := strings.Join(parts[3:], ".")
	return suffix == "on.aws" || suffix == "on.amazonwebservices.com.cn"
}

// ECRIPv4Name returns the IPv4-only name of an ECR dual-stack registry
// name (ACCOUNT.dkr-ecr.REGION.on.aws -> ACCOUNT.dkr.ecr.REGION.amazonaws.com),
// or "" when host is not one.
func ECRIPv4Name(host string) string {
	if !ECRDualStackName(host) {
		return ""
	}
	parts := strings.Split(strings.ToLower(strings.TrimSuffix(host, ".")), ".")
	if parts[0] == "ecr" {
		return "api.ecr." + parts[1] + ".amazonaws.com"
	}
	svc := "dkr.ecr"
	if parts[1] == "dkr-ecr-fips" {
		svc = "dkr.ecr-fips"
	}
	domain := "amazonaws.com"
	if strings.HasSuffix(host, ".cn") {
		domain = "amazonaws.com.cn"
	}
	return parts[0] + "." + svc + "." + parts[2] + "." + domain
}

// PrivateLinkName reports whether a host name is one that should resolve to a
// private address on a node that uses private endpoints: a privatelink or
// VPC-endpoint style name. A public answer for it is itself a finding.
func PrivateLinkName(host string) bool {
	h := strings.ToLower(host)
	return strings.Contains(h, ".privatelink.") || strings.Contains(h, ".vpce.") || strings.Contains(h, ".vpce-") || strings.HasPrefix(h, "vpce-")
}

// Advise gives the next places to look for a code on a host of a role,
// specific where the host names its platform. The first line is the code's
// own "where to look".
func Advise(code Code, host string, role Role) []string {
	info, ok := Lookup(code)
	if !ok || code == OK {
		return nil
	}
	out := []string{info.Where}
	p := DetectPlatform(host)
	c := info.Condition
	if role == RoleAuth || role == RoleBlob {
		if c == ConditionRoute || c == ConditionDNS {
			out = append(out, fmt.Sprintf("The registry host answered but %s (%s) did not: every host the registry hands out during the pull needs the same path from the node as the registry itself.", host, role))
		}
	}
	switch {
	case c == ConditionRoute || c == ConditionDNS || c == ConditionEndpointSet && info.Cause != CauseForbidden:
		out = append(out, "Credentials are not the lever here: an imagePullSecret gives the runtime credentials; it creates no route, changes no resolver and opens no security rule.")
	case code == TLSUnknownAuthority || code == TLSNameMismatch || code == TLSExpired || code == TLSNotYetValid:
		out = append(out, "An imagePullSecret does not make an untrusted or wrong certificate valid: trust is node configuration (certs.d CA, the system trust store), the name and validity are the server's.")
	}
	switch p {
	case PlatformECR:
		if v4 := ECRIPv4Name(host); v4 != "" && (c == ConditionRoute || c == ConditionDNS || c == ConditionEndpointSet) {
			out = append(out, "ECR: "+host+" is ECR's dual-stack name, which AWS PrivateLink does not serve: the interface endpoints and their private DNS answer only "+v4+". A private subnet must pull by "+v4+"; the dual-stack name needs a route out (an egress-only internet gateway for IPv6, a NAT or internet gateway for IPv4).")
		}
		switch c {
		case ConditionDNS:
			out = append(out,
				"ECR: the com.amazonaws.REGION.ecr.dkr and ecr.api interface endpoints need private DNS enabled (describe-vpc-endpoints: PrivateDnsEnabled); otherwise the node resolves the registry to a public address and tries the internet.",
				"ECR: on the node, `nslookup "+host+"` should answer the endpoint's private IP.")
		case ConditionRoute, ConditionEndpointSet:
			out = append(out,
				"ECR: the ecr.dkr and ecr.api interface endpoints must have an ENI in the node's subnet (describe-vpc-endpoints: SubnetIds); a subnet added later gives nodes that resolve the name but cannot connect.",
				"ECR: the endpoint's security group must allow TCP 443 from the node security group; compare the failing subnet's route table and network ACL with a working subnet's.",
				"ECR without endpoints: the subnet's route table needs 0.0.0.0/0 to a NAT gateway in the same availability zone.")
		case ConditionTLSIdentity:
			out = append(out, "ECR: the node role needs AmazonEC2ContainerRegistryReadOnly, or ecr:GetAuthorizationToken, ecr:BatchCheckLayerAvailability, ecr:GetDownloadUrlForLayer and ecr:BatchGetImage. A permission problem fails every node alike; if only some subnets fail, look at the network instead.")
		}
	case PlatformS3:
		switch c {
		case ConditionRoute, ConditionDNS, ConditionEndpointSet:
			out = append(out,
				"ECR layers come from S3, not from the registry host: the subnet's route table needs the S3 gateway endpoint's prefix-list route (pl-...), or an S3 interface endpoint, or a NAT gateway in the same availability zone.",
				"Compare the failing subnet's associated route table and network ACL with a working subnet's, top to bottom.")
		case ConditionTLSIdentity:
			out = append(out, "S3: the gateway endpoint policy must allow s3:GetObject on arn:aws:s3:::prod-REGION-starport-layer-bucket/*.")
		}
	case PlatformACR, PlatformACRData:
		switch c {
		case ConditionDNS:
			out = append(out, "ACR: the privatelink.azurecr.io private DNS zone must be linked to the node's VNet (or forwarded to by the resolver the node uses), with A records for the registry AND each data endpoint (REGISTRY.REGION.data.azurecr.io).")
		case ConditionRoute, ConditionEndpointSet:
			out = append(out,
				"ACR: check the effective routes of the node NIC, gateway transit through the intended VPN gateway (peering alone does not give it), and the return path from the registry's network to the node subnet.",
				"ACR: the private endpoint must cover the data endpoints (NAME.REGION.data.azurecr.io) too, and NSGs must allow 443 to them.")
		case ConditionTLSIdentity:
			out = append(out, "ACR: the kubelet identity needs AcrPull on the registry (az aks check-acr), or the imagePullSecret's identity needs read on this repository.")
		}
		if c == ConditionRoute || c == ConditionDNS || c == ConditionEndpointSet || c == ConditionTLSIdentity {
			out = append(out, AzureAuditHint)
		}
	case PlatformGAR, PlatformGCR, PlatformGCS:
		out = append(out, gcpAdvice(p, c)...)
	case PlatformDockerHub:
		if c == ConditionRoute || c == ConditionDNS || c == ConditionEndpointSet {
			out = append(out, "Docker Hub uses registry-1.docker.io, auth.docker.io and a CDN for layers: each must be reachable from the node, or use a mirror in hosts.toml.")
		}
	}
	if p == PlatformECR || p == PlatformS3 {
		out = append(out, AWSAuditHint)
	}
	return out
}

// gcpAdvice is where to look on GKE for Artifact Registry, Container
// Registry and its Cloud Storage layers.
func gcpAdvice(p Platform, c Condition) []string {
	var out []string
	switch c {
	case ConditionDNS:
		out = append(out, "GKE: Cloud DNS answers the node (169.254.169.254): a private zone bound to the VPC network for pkg.dev, gcr.io or googleapis.com must hold the host or a wildcard (*.pkg.dev CNAME pkg.dev.) and answer private.googleapis.com (199.36.153.8/30) or restricted.googleapis.com (199.36.153.4/30); a zone without the wildcard gives NXDOMAIN.")
	case ConditionRoute, ConditionEndpointSet:
		out = append(out,
			"GKE: a node without an external IP reaches Google APIs through Private Google Access on its subnet (gcloud compute networks subnets update SUBNET --enable-private-ip-google-access) or through Cloud NAT covering the subnet; the VIP ranges need a route with next hop default-internet-gateway and an egress firewall rule allowing TCP 443 (at equal priority a deny wins).")
		if p == PlatformGCS {
			out = append(out, "Container Registry serves layers from Cloud Storage (storage.googleapis.com): the googleapis.com zone, the route and the firewall must cover it as they cover gcr.io.")
		}
	case ConditionTLSIdentity:
		out = append(out, "GKE: the node pool's service account needs roles/artifactregistry.reader on the repository or project (new organizations no longer give the default compute account Editor), and the pool's access scopes must include devstorage.read_only or cloud-platform, or the kubelet's credential provider sends no usable token and the pull goes out anonymously; a VPC Service Controls perimeter must hold the nodes' project beside the registry's.")
	}
	if c == ConditionRoute || c == ConditionDNS || c == ConditionEndpointSet || c == ConditionTLSIdentity {
		out = append(out, GCPAuditHint)
	}
	return out
}

// Outcome is what a walk or a message says happened: the code, where it
// happened, and whether the registry host itself worked. Decide turns it
// into a Verdict.
type Outcome struct {
	Code  Code
	Stage Stage
	Role  Role   // the role of the endpoint that failed
	Host  string // the endpoint that failed
	// RegistryOK says the registry host itself worked: a network failure
	// on an auth or blob host is then endpoint-set, not route or dns.
	RegistryOK bool
	Summary    string
}

// Decide builds the verdict of an outcome: OK is a success; any other code
// a failure with its cause, its condition (endpoint-set for a network
// failure on an auth or blob host when the registry worked) and advice.
func Decide(o Outcome) Verdict {
	if o.Code == OK {
		return Verdict{Status: StatusOK, Cause: CauseOK, Code: OK, Summary: o.Summary}
	}
	info, ok := Lookup(o.Code)
	if !ok {
		info = Info{Code: o.Code, Cause: CauseOther}
	}
	cond := info.Condition
	// a path MTU black hole is the tunnel's, whichever host shows it: its
	// repair is on the path, not in the set of endpoints
	if o.RegistryOK && (o.Role == RoleAuth || o.Role == RoleBlob) && (cond == ConditionRoute || cond == ConditionDNS) && o.Code != PathMTUBlackHole {
		cond = ConditionEndpointSet
	}
	return Verdict{
		Status:    StatusFail,
		Stage:     o.Stage,
		Cause:     info.Cause,
		Condition: cond,
		Code:      o.Code,
		Endpoint:  o.Host,
		Role:      o.Role,
		Summary:   o.Summary,
		Advice:    Advise(o.Code, o.Host, o.Role),
	}
}

// The advice lines that name a cloud's audit. A caller that ran the audit
// (diagnose) drops exactly these lines: IsAuditHint.
var (
	AWSAuditHint          = "Next: `" + nodeplace.AWS.AuditCommand(nodeplace.Target{}) + "` (with `--probe-report` and this probe's JSON) names the object to change in the node's subnet, beside a healthy subnet."
	AzureAuditHint        = "Next: `" + nodeplace.Azure.AuditCommand(nodeplace.Target{}) + " --probe-report probe.json` checks every pool's effective routes, peering, NSG, zone link and records, private endpoint and the kubelet identity's pull role, and names the object to change."
	GCPAuditHint          = "Next: `" + nodeplace.GCP.AuditCommand(nodeplace.Target{}) + "` checks every node subnet's DNS zones, Private Google Access, routes, egress firewall, Cloud NAT, the node account's role and scopes and VPC Service Controls, and names the object to change."
	GCPAuditScopesHint    = "Next: `" + nodeplace.GCP.AuditCommand(nodeplace.Target{}) + "` checks the pool's scopes and the account's roles."
	GCPAuditPerimeterHint = "Next: `" + nodeplace.GCP.AuditCommand(nodeplace.Target{}) + "` reads the perimeters and names the one to change."
)

var auditHints = map[nodeplace.Cloud][]string{
	nodeplace.AWS:   {AWSAuditHint},
	nodeplace.Azure: {AzureAuditHint},
	nodeplace.GCP:   {GCPAuditHint, GCPAuditScopesHint, GCPAuditPerimeterHint},
}

// IsAuditHint says whether line is one of the advice lines that name
// cloud's audit.
func IsAuditHint(cloud nodeplace.Cloud, line string) bool {
	for _, h := range auditHints[cloud] {
		if line == h {
			return true
		}
	}
	return false
}
