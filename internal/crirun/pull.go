package crirun

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
)

// Auth is the node's credentials for one pull (what the kubelet takes from
// an imagePullSecret). nil means anonymous.
type Auth struct {
	Username string
	Password string
}

// Result is what the runtime said about one pull.
type Result struct {
	OK bool `json:"ok"`
	// GRPCCode is the CRI call's status code ("Unknown", "NotFound",
	// "DeadlineExceeded", ...); empty when the pull succeeded or crictl
	// failed without a gRPC status.
	GRPCCode string `json:"grpcCode,omitempty"`
	// Message is the runtime's error verbatim (the gRPC desc), secrets
	// redacted; on success the image id crictl printed.
	Message string `json:"message,omitempty"`
	// Duration is the wall time of the crictl pull.
	Duration time.Duration `json:"duration"`
	// TimedOut says crictl's --pull-timeout ended the pull: the runtime
	// gave no answer of its own in that time (GRPCCode DeadlineExceeded,
	// Message "context deadline exceeded", both from the client side).
	TimedOut bool `json:"timedOut,omitempty"`
	// Error is set when the runtime gave no answer to record (bad input,
	// crictl missing or killed by our guard); OK is then false and
	// Message empty.
	Error string `json:"error,omitempty"`
}

// Event renders the result the way the CRI error reaches the kubelet
// ("rpc error: code = C desc = M"); empty when the pull succeeded.
func (r Result) Event() string {
	if r.OK || r.Error != "" {
		return ""
	}
	if r.GRPCCode == "" {
		return r.Message
	}
	return "rpc error: code = " + r.GRPCCode + " desc = " + r.Message
}

// DefaultPullTimeout is crictl's --pull-timeout when Pull is given none:
// a little above containerd 1.6's own 30 s dial timeout, so a black-holed
// endpoint shows the runtime's own error rather than crictl's deadline.
const DefaultPullTimeout = 40 * time.Second

// Pull pulls ref through the CRI image service with crictl, as the kubelet
// would, and records the runtime's answer. Credentials reach crictl through
// its CRICTL_AUTH environment variable (base64 "USER:PASSWORD"), never
// argv, and are scrubbed from the result. timeout is crictl's
// --pull-timeout (0: DefaultPullTimeout).
func (r *Runtime) Pull(ctx context.Context, ref string, auth *Auth, timeout time.Duration) Result {
	if timeout <= 0 {
		timeout = DefaultPullTimeout
	}
	// crictl's own deadline is the pull timeout; ours only guards
	// against a crictl that hangs anyway.
	cctx, cancel := context.WithTimeout(ctx, timeout+15*time.Second)
	defer cancel()
	cmd, secrets, err := r.pullCmd(cctx, ref, auth, timeout)
	if err != nil {
		return Result{Error: err.Error()}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	res := Result{Duration: time.Since(start)}
	if err == nil {
		res.OK = true
		res.Message = scrub(strings.TrimSpace(stdout.String()), secrets)
		return res
	}
	code, msg, ok := parseCrictlError(stderr.String())
	switch {
	case ok && clientSide(code, msg, stderr.String()):
		res.Error = "crirun: crictl could not reach containerd: " + msg
	case ok:
		res.GRPCCode, res.Message = code, msg
		res.TimedOut = code == "DeadlineExceeded" && msg == "context deadline exceeded"
	case ctx.Err() != nil:
		res.Error = fmt.Sprintf("crirun: pull of %s interrupted: %v", ref, ctx.Err())
	case cctx.Err() != nil:
		res.Error = fmt.Sprintf("crirun: crictl pull of %s did not return within %s", ref, timeout+15*time.Second)
	default:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			res.Error = fmt.Sprintf("crirun: run crictl: %v", err)
		} else {
			res.Error = "crirun: crictl failed without a gRPC status: " + lastLine(stderr.String())
		}
	}
	res.Message = scrub(res.Message, secrets)
	res.Error = scrub(res.Error, secrets)
	return res
}

// pullCmd builds the crictl pull. Credentials travel in CRICTL_AUTH
// (base64 "USER:PASSWORD"), which crictl reads like --auth: never in argv,
// where ps and our logs would show them. secrets lists what to scrub.
func (r *Runtime) pullCmd(ctx context.Context, ref string, auth *Auth, timeout time.Duration) (*exec.Cmd, []string, error) {
	if ref == "" || strings.ContainsAny(ref, " \t\r\n") || strings.HasPrefix(ref, "-") {
		return nil, nil, fmt.Errorf("crirun: image reference %q, want NAME[:TAG|@DIGEST]", ref)
	}
	var env, secrets []string
	if auth != nil {
		if auth.Username == "" || strings.Contains(auth.Username, ":") {
			return nil, nil, fmt.Errorf("crirun: user name %q, want a non-empty name without ':' (the CRI auth string is USER:PASSWORD)", auth.Username)
		}
		up := auth.Username + ":" + auth.Password
		b64 := base64.StdEncoding.EncodeToString([]byte(up))
		env = append(env, "CRICTL_AUTH="+b64)
		secrets = append(secrets, up, b64, auth.Password)
	}
	cmd := r.crictlCmd(ctx, env, "pull", "--pull-timeout", timeout.String(), ref)
	return cmd, secrets, nil
}

// scrub removes the literal secrets, then anything redact recognizes.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, redact.Mask)
		}
	}
	return redact.String(s)
}

var (
	reRPC     = regexp.MustCompile(`rpc error: code = (\w+) desc = `)
	reLogfmtM = regexp.MustCompile(`\b(?:msg|err)=("(?:[^"\\]|\\.)*")`)
)

// clientSide reports whether a gRPC status is crictl's own failure to
// reach the runtime rather than the runtime's answer about the pull.
func clientSide(code, msg, stderr string) bool {
	return strings.Contains(stderr, "validate service connection") ||
		(code == "Unavailable" && strings.Contains(msg, "connection error"))
}

// parseCrictlError finds the CRI error in crictl's stderr. crictl logs it
// twice, as a klog line (err="rpc error: ...") and as its fatal logrus line
// (msg="pulling image: rpc error: ..."); both quote it Go-style. The last
// quoted value holding an rpc error wins; a bare, unquoted line is the
// fallback.
func parseCrictlError(stderr string) (code, msg string, ok bool) {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if !strings.Contains(line, "rpc error: code = ") {
			continue
		}
		text := line
		ms := reLogfmtM.FindAllStringSubmatch(line, -1)
		for j := len(ms) - 1; j >= 0; j-- {
			if u, err := strconv.Unquote(ms[j][1]); err == nil && strings.Contains(u, "rpc error: code = ") {
				text = u
				break
			}
		}
		loc := reRPC.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		return text[loc[2]:loc[3]], strings.TrimSpace(text[loc[1]:]), true
	}
	return "", "", false
}
