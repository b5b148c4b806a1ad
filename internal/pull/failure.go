package pull

import (
	"fmt"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Error is the first broken link of the walk: it becomes the verdict. It
// is built where the failure is found, by the endpoint that failed (or the
// site of a step that has no endpoint yet), and not changed afterwards. Err
// is the cause when there is one (a network, TLS or read error), for
// errors.Is and errors.As; the summary already says it in words.
//
// Bad input (a hosts.toml or CA file the runtime cannot use, no host that
// may pull) is not an Error: the walk returns it as it came, a
// *runtimecfg.ConfigError or a plain error.
type Error struct {
	Code    verdict.Code
	Stage   verdict.Stage
	Role    verdict.Role
	Host    string
	Summary string
	Err     error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Summary }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// site is where a failure happens: the stage of the walk, the role of the
// host in it, and the host. An endpoint is a site in the stage its role
// belongs to (ep.site()); the registry host also serves blobs
// (ep.in(verdict.StageBlob)) and can be its own token service (ep.asAuth()).
type site struct {
	stage verdict.Stage
	role  verdict.Role
	host  string
	proxy string // the forward proxy of a plain-http hop (its answers can stand in for the host's)
}

// fail builds the Error of this site.
func (st site) fail(code verdict.Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Stage: st.stage, Role: st.role, Host: st.host, Summary: fmt.Sprintf(format, args...), Err: cause}
}

// site is the endpoint in the stage of its role.
func (ep *endpoint) site() site { return ep.in(stageOf(ep.rep.Role)) }

// in is the endpoint used in another stage (the registry host serving a
// blob).
func (ep *endpoint) in(stage verdict.Stage) site {
	return proxySite(site{stage: stage, role: ep.rep.Role, host: ep.rep.Host}, ep)
}

// asAuth is the endpoint answering as the token service (a realm on the
// registry host itself, or any host a token request is sent to).
func (ep *endpoint) asAuth() site {
	return proxySite(site{stage: verdict.StageAuth, role: verdict.RoleAuth, host: ep.rep.Host}, ep)
}

// fail builds an Error of the endpoint in the stage of its role.
func (ep *endpoint) fail(code verdict.Code, cause error, format string, args ...any) *Error {
	return ep.site().fail(code, cause, format, args...)
}

// stageOf maps an endpoint role to the stage a failure on it belongs to.
func stageOf(role verdict.Role) verdict.Stage {
	switch role {
	case verdict.RoleAuth:
		return verdict.StageAuth
	case verdict.RoleBlob:
		return verdict.StageBlob
	}
	return verdict.StageRegistry
}

// stepName is a step of the report, in the walk's order.
type stepName string

const (
	stepReference   stepName = "reference"
	stepCredentials stepName = "credentials"
	stepResolve     stepName = "resolve"
	stepConnect     stepName = "connect"
	stepProxy       stepName = "proxy" // the CONNECT exchange with the runtime's proxy
	stepTLS         stepName = "tls"
	stepPing        stepName = "ping"
	stepToken       stepName = "token"
	stepIndex       stepName = "index"
	stepManifest    stepName = "manifest"
	stepConfig      stepName = "config"
	stepLayer       stepName = "layer"
	stepLayers      stepName = "layers" // the skipped-steps record of every layer
)

// failed records the failed step name, started at start, for e and
// returns e: the one way a failure becomes a step.
// A zero start records no duration.
func (w *walker) failed(name stepName, start time.Time, e *Error) *Error {
	var ms float64
	if !start.IsZero() {
		ms = since(start)
	}
	w.step(name, e.Host, report.StepFail, e.Code, e.Summary, ms, 0)
	return e
}
