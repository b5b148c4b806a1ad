// Package verdict is pullpath's shared vocabulary: where a pull failed
// (Stage), why (Cause), which repair direction of the seeds it points to
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
	CauseOther        Cause = "other"
)

// Condition is the repair direction of the seeds' tables.
type Condition string

const (
	ConditionNone        Condition = ""
	ConditionRoute       Condition = "route"        // no path, or no return path
	ConditionDNS         Condition = "dns"          // node resolver cannot see the zone, or answers public
	ConditionEndpointSet Condition = "endpoint-set" // registry works, an auth or blob host does not
	ConditionTLSIdentity Condition = "tls-identity" // trust, name, 401, 403
	ConditionImage       Condition = "image"        // not found, platform, bad reference
	ConditionRegistry    Condition = "registry"     // rate limit, server errors, broken responses
)

// Conditions lists every condition in a stable order.
var Conditions = []Condition{ConditionRoute, ConditionDNS, ConditionEndpointSet, ConditionTLSIdentity, ConditionImage, ConditionRegistry}

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

// Exit codes. 0 and 1 are the usual ones; each condition has its own so that
// scripts and Jobs can act on the repair direction without parsing output.
const (
	ExitOK    = 0
	ExitError = 1 // usage, bad input, internal error
)

var exitCodes = map[Condition]int{
	ConditionRoute:       3,
	ConditionDNS:         4,
	ConditionEndpointSet: 5,
	ConditionTLSIdentity: 6,
	ConditionImage:       7,
	ConditionRegistry:    8,
}

// ExitCode is the process exit code for a verdict.
func (v Verdict) ExitCode() int {
	if v.Status == StatusOK {
		return ExitOK
	}
	return ExitCodeFor(v.Condition)
}

// ExitCodeFor maps a condition to its exit code; an unknown or empty
// condition (a failure that fits no repair direction) gives 2.
func ExitCodeFor(c Condition) int {
	if n, ok := exitCodes[c]; ok {
		return n
	}
	return 2
}
