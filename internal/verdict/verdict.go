// Package verdict is pullpath's shared vocabulary: where a pull failed
// (Stage), why (Cause), which repair direction it points to
// (Condition), the exact finding (Code), and where to look next (Advice).
//
// It is pure data and functions over it: probe, explain and lab all speak it,
// and docs/verdicts.md is kept equal to the Codes table by a test.
package verdict

// Stage is where in the pull a failure happened.
type Stage string

const (
	StageReference Stage = "reference" // parsing the image reference, local config
	StageRegistry  Stage = "registry"  // the registry host: resolve, connect, TLS, /v2/, manifest
	StageAuth      Stage = "auth"      // the token service
	StageBlob      Stage = "blob"      // config and layer downloads, including redirect hosts
)

// Cause is the innermost reason of a failure.
type Cause string

const (
	CauseOK           Cause = "ok"
	CauseDNS          Cause = "dns"
	CauseTimeout      Cause = "timeout"
	CauseUnreachable  Cause = "unreachable"
	CauseRefused      Cause = "refused"
	CauseReset        Cause = "reset"
	CauseTLS          Cause = "tls"
	CauseUnauthorized Cause = "unauthorized"
	CauseForbidden    Cause = "forbidden"
	CauseNotFound     Cause = "not_found"
	CauseRateLimit    Cause = "ratelimit"
	CausePlatform     Cause = "platform"
	CauseDigest       Cause = "digest"
	CauseInvalidName  Cause = "invalid_name"
	CauseNeverPull    Cause = "never_pull"
	CausePolicy       Cause = "policy" // the runtime's image policy refused the image (containers/image policy.json)
	CauseOther        Cause = "other"
)

// Condition is the repair direction: the kind of change that fixes a
// failure, and so the objects and the team to look at.
type Condition string

const (
	ConditionNone        Condition = ""
	ConditionRoute       Condition = "route"        // no path, or no return path
	ConditionDNS         Condition = "dns"          // node resolver cannot see the zone, or answers public
	ConditionEndpointSet Condition = "endpoint-set" // registry works, an auth or blob host does not
	ConditionTLSIdentity Condition = "tls-identity" // trust, name, 401, 403
	ConditionImage       Condition = "image"        // not found, platform, bad reference
	ConditionRegistry    Condition = "registry"     // rate limit, server errors, broken responses
	ConditionProxy       Condition = "proxy"        // the runtime's proxy settings, or the proxy itself
)

// Conditions lists every condition in a stable order.
var Conditions = []Condition{ConditionRoute, ConditionDNS, ConditionEndpointSet, ConditionTLSIdentity, ConditionImage, ConditionRegistry, ConditionProxy}

var conditionMeanings = map[Condition]string{
	ConditionRoute:       "no path, or no return path: routes, security rules, NACLs, firewalls",
	ConditionDNS:         "the node's resolver cannot see the zone, or answers a public address",
	ConditionEndpointSet: "the registry host works, a token or blob host it hands out does not",
	ConditionTLSIdentity: "certificate trust or name, 401, 403: trust and pull identity",
	ConditionImage:       "the image: not found, no manifest for the platform, bad reference, or the runtime's image policy (short names, signature policy, blocked registries)",
	ConditionRegistry:    "the registry: rate limit, server errors, corrupt content",
	ConditionProxy:       "the runtime's proxy: its HTTP(S)_PROXY and NO_PROXY, or the proxy itself (down, authentication, ACL, its own path to the registry)",
}

// Meaning says in one line what a condition's failures have in common,
// which is where the fix lies ("" for no or an unknown condition).
func (c Condition) Meaning() string { return conditionMeanings[c] }

// ExitCode is the process exit code of a failure in this repair direction:
// 3 to 8 in the order of Conditions, 10 for the proxy, so that a script or
// a Job can act on it without parsing output; 2 for no or an unknown
// condition. The CLI's exit table (internal/cli/exit.go) takes its
// condition rows from it, and the node-side pullpath-agent exits with it.
func (c Condition) ExitCode() int {
	if c == ConditionProxy {
		return 10 // after 9, `lab`'s mismatch, which took that number first
	}
	for i, x := range Conditions {
		if x == c {
			return 3 + i
		}
	}
	return 2
}

// Status of a verdict.
type Status string

const (
	StatusOK   Status = "ok"
	StatusFail Status = "fail"
)

// Role of an endpoint in a pull.
type Role string

const (
	RoleRegistry Role = "registry"
	RoleAuth     Role = "auth"
	RoleBlob     Role = "blob"
	RoleMirror   Role = "mirror"
)

// Verdict is the one answer of a probe (or of an explained message).
type Verdict struct {
	Status    Status    `json:"status"`
	Stage     Stage     `json:"stage,omitempty"`
	Cause     Cause     `json:"cause"`
	Condition Condition `json:"condition,omitempty"`
	Code      Code      `json:"code"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Role      Role      `json:"role,omitempty"`
	Summary   string    `json:"summary"`
	Advice    []string  `json:"advice,omitempty"`
}
