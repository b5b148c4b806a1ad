// Package labhook puts the real container runtime beside the probe in a
// lab run: after the probe, it starts containerd in the node's namespace
// (internal/crirun), pulls the scenario's image cold with crictl and the
// node's credentials, reads the runtime's message with explain, and checks
// that the runtime's outcome and explain's condition agree with the probe
// (or with the scenario's expect.runtime where the message cannot tell).
package labhook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/crirun"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Hook is a lab.Hook that pulls with containerd.
type Hook struct {
	// Crictl is crictl's path (crirun.EnsureCrictl finds or builds it);
	// empty means crirun's default search.
	Crictl string
	// PullTimeout is crictl's --pull-timeout; 0 means
	// crirun.DefaultPullTimeout (a little above containerd's 30 s dial
	// timeout, so a black-holed endpoint still shows containerd's error).
	PullTimeout time.Duration
	// FixtureDir, when set, receives each failed pull's message as an
	// explain fixture, lab-SCENARIO.txt (see internal/explain/testdata/runtime).
	FixtureDir string

	// cimagepull, for the scenarios whose node plays CRI-O (cimage.go),
	// found once.
	cimageOnce sync.Once
	cimage     string
	cimageErr  error
}

var _ lab.Hook = (*Hook)(nil)

// Name is the check's name in the lab report.
func (h *Hook) Name() string { return "runtime" }

// Check runs the runtime's pull in the lab the probe just used.
func (h *Hook) Check(ctx context.Context, env *lab.Env, probe *report.ProbeReport) report.LabCheck {
	if env.Scenario != nil && env.Scenario.Node.IsCRIO() {
		return h.checkCRIO(ctx, env, probe)
	}
	start := time.Now()
	timeout := h.PullTimeout
	if timeout <= 0 {
		timeout = crirun.DefaultPullTimeout
	}
	if sc := env.Scenario; sc != nil && sc.Expect != nil && sc.Expect.Runtime != nil && sc.Expect.Runtime.PullTimeout != "" {
		if d, err := time.ParseDuration(sc.Expect.Runtime.PullTimeout); err == nil && d > 0 {
			timeout = d
		}
	}
	rt := &report.RuntimePull{Runtime: "containerd", Client: "crictl", Image: env.Image, TimeoutMS: units.MS(timeout)}
	done := h.checkDone(rt, start)

	res, version, err := h.pull(ctx, env, timeout)
	if version != "" {
		rt.Runtime = version
	}
	if err != nil {
		rt.Error = err.Error()
		return done()
	}
	rt.Credential = env.Scenario != nil && (env.Scenario.Node.Credentials != nil || env.Scenario.Node.CredentialProvider != nil && env.Scenario.Node.CredentialProvider.Fail == "")
	rt.OK, rt.GRPCCode, rt.Message, rt.TimedOut = res.OK, res.GRPCCode, res.Message, res.TimedOut
	rt.DurationMS = units.MS(res.Duration)
	if res.Error != "" {
		rt.Error = res.Error
		return done()
	}
	var cl explain.Classification
	if !res.OK {
		cl = explain.Classify(res.Event())
		rt.Explain = &report.RuntimeReading{Stage: cl.Stage, Cause: cl.Cause, Condition: cl.Condition, Code: cl.Code, Rule: cl.Rule}
	}
	if probe != nil {
		// The same pull in the probe report: its text puts it beside the
		// probe's verdict.
		probe.Runtime = rt
	}
	var want *report.LabRuntimeExpect
	if env.Scenario != nil && env.Scenario.Expect != nil {
		want = env.Scenario.Expect.Runtime
	}
	var pv *verdict.Verdict
	if probe != nil {
		pv = &probe.Verdict
	}
	if note := platformNote(env.Scenario); note != "" && want == nil {
		rt.Note = note
	} else {
		rt.Against, rt.Mismatches = Compare(res.OK, cl, pv, want)
	}
	if chain(env) {
		// a mirror chain: which host served, from containerd's side
		chainCheck(env, rt, probe)
	}
	if h.FixtureDir != "" && !res.OK && env.Scenario != nil {
		if err := writeFixture(h.FixtureDir, env.Scenario, rt, res, expectLine(pv, want)); err != nil {
			rt.Mismatches = append(rt.Mismatches, "fixture: "+err.Error())
		}
	}
	return done()
}

// checkDone returns what ends a check of rt begun at start: the check,
// ok when the runtime was asked and agrees, with its one-line detail.
func (h *Hook) checkDone(rt *report.RuntimePull, start time.Time) func() report.LabCheck {
	return func() report.LabCheck {
		return report.LabCheck{Name: h.Name(), Runtime: rt, OK: rt.Error == "" && len(rt.Mismatches) == 0, Detail: detail(rt), DurationMS: units.MS(time.Since(start))}
	}
}

// pull starts containerd in the node's namespace, clears its store, pulls
// once and stops it again (also when ctx ends).
func (h *Hook) pull(ctx context.Context, env *lab.Env, timeout time.Duration) (crirun.Result, string, error) {
	var zero crirun.Result
	if env.Image == "" {
		return zero, "", fmt.Errorf("the scenario names no image to pull")
	}
	certs, err := NodeCertsDir(env)
	if err != nil {
		return zero, "", err
	}
	logDir := filepath.Join(env.RunDir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return zero, "", err
	}
	logf, err := os.Create(filepath.Join(logDir, "containerd.log"))
	if err != nil {
		return zero, "", err
	}
	defer logf.Close()
	o := crirun.Options{
		Netns: env.NodeNS, WorkDir: filepath.Join(env.RunDir, "ctrd"), CertsDir: certs,
		Crictl: h.Crictl, Log: logf, Env: env.RuntimeEnv, Debug: chain(env),
	}
	if err := layoutOptions(ctx, env, &o); err != nil {
		return zero, "", err
	}
	r, err := crirun.Start(ctx, o)
	if err != nil {
		return zero, "", err
	}
	defer r.Stop()
	if err := r.RemoveAll(ctx); err != nil {
		return zero, r.Version(), err
	}
	var auth *crirun.Auth
	if env.Scenario != nil && env.Scenario.Node.Credentials != nil && !runtimeOwnAuth(env) {
		auth = &crirun.Auth{Username: env.Scenario.Node.Credentials.Username, Password: env.Scenario.Node.Credentials.Password}
	}
	if cp, err := env.CredentialProviderFiles(); err != nil {
		return zero, r.Version(), err
	} else if cp != nil {
		// What the kubelet passes through CRI auth: the plugin's answer.
		if auth, err = kubeletAuth(ctx, cp, env.Image); err != nil {
			return zero, r.Version(), err
		}
	}
	res := r.Pull(ctx, env.Image, auth, timeout)
	if err := r.Stop(); err != nil && res.Error == "" {
		res.Error = "teardown: " + err.Error()
	}
	return res, r.Version(), nil
}

// platformNote explains why the outcomes cannot be compared when the probe
// plays a node of another platform than the machine's: containerd pulls
// for the platform it runs on.
func platformNote(t *scenario.Scenario) string {
	if t == nil || t.Probe.Platform == "" {
		return ""
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	p := t.Probe.Platform
	if p == host || strings.HasPrefix(p, host+"/") {
		return ""
	}
	return fmt.Sprintf("the probe plays a %s node, containerd on this machine pulls for %s", p, host)
}

// NodeCertsDir is the node's certs.d for containerd: the scenario's own
// when it writes one (its mirrors' hosts.toml, env.CertsDir), else one it
// writes (what a runtime started in the lab's node namespace reads): the lab CA the
// node trusts as ca.crt of the registry host (containerd uses that host's
// TLS settings for the token and blob hosts it is sent to as well), and a
// hosts.toml for a plain-HTTP registry.
func NodeCertsDir(env *lab.Env) (string, error) {
	if env.ContainerdConfig != "" {
		return "", nil // a layout node: its own config names its folders
	}
	if env.CertsDir != "" {
		// the scenario's own certs.d (its mirrors' hosts.toml)
		return env.CertsDir, nil
	}
	dir := filepath.Join(env.RunDir, "node", "containerd-certs.d")
	host := imageHost(env.Image)
	if host == "" {
		return "", fmt.Errorf("image %q names no registry host", env.Image)
	}
	hd := filepath.Join(dir, host)
	if err := os.MkdirAll(hd, 0o755); err != nil {
		return "", err
	}
	plain := env.Scenario != nil && env.Scenario.Registry != nil && env.Scenario.Registry.TLS == "none"
	if plain {
		// containerd 1.6 rejects a hosts.toml with only server = http://...
		// (containerd#10027) unless a [host] table follows.
		toml := fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", host, host)
		if err := os.WriteFile(filepath.Join(hd, "hosts.toml"), []byte(toml), 0o644); err != nil {
			return "", err
		}
	}
	if env.CAFile != "" && !plain {
		b, err := os.ReadFile(env.CAFile)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(hd, "ca.crt"), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// imageHost is the registry host[:port] of a fully qualified reference.
func imageHost(ref string) string {
	host, _, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return ""
	}
	return host
}

// Compare checks the runtime's outcome and explain's reading against the
// scenario's expect.runtime when it has one, else against the probe's
// verdict: the outcome (pull ok or not) and, when both failed, the
// condition. It returns what it compared with and one line per difference.
func Compare(ok bool, cl explain.Classification, probe *verdict.Verdict, want *report.LabRuntimeExpect) (string, []string) {
	status := verdict.StatusFail
	if ok {
		status = verdict.StatusOK
	}
	var out []string
	field := func(name, want, got string) {
		if want != "" && want != got {
			if got == "" {
				got = "nothing"
			}
			out = append(out, fmt.Sprintf("%s: want %s, explain read %s", name, want, got))
		}
	}
	if want != nil {
		if want.Status != "" && want.Status != status {
			out = append(out, fmt.Sprintf("outcome: want %s, the runtime's pull was %s", want.Status, status))
		}
		if !ok {
			field("condition", string(want.Condition), string(cl.Condition))
			field("cause", string(want.Cause), string(cl.Cause))
			field("code", string(want.Code), string(cl.Code))
		}
		return "scenario", out
	}
	if probe == nil {
		return "probe", []string{"no probe verdict to compare with"}
	}
	if probe.Status != status {
		out = append(out, fmt.Sprintf("outcome: the probe says %s, the runtime's pull was %s", probe.Status, status))
		return "probe", out
	}
	if !ok && cl.Condition != probe.Condition {
		got := string(cl.Condition)
		if got == "" {
			got = "nothing"
		}
		out = append(out, fmt.Sprintf("condition: the probe found %s, explain read %s from the runtime (rule %s)", probe.Condition, got, cl.Rule))
	}
	return "probe", out
}

// expectLine is the fixture's "# expect:" line: what lab test demands.
func expectLine(probe *verdict.Verdict, want *report.LabRuntimeExpect) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	switch {
	case want != nil:
		add("cause", string(want.Cause))
		add("code", string(want.Code))
		add("condition", string(want.Condition))
	case probe != nil:
		add("condition", string(probe.Condition))
	}
	return strings.Join(parts, " ")
}

func writeFixture(dir string, t *scenario.Scenario, rt *report.RuntimePull, res crirun.Result, expect string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# scenario: lab/%s: %s\n", t.Name, units.OneLine(t.Summary))
	fmt.Fprintf(&b, "# runtime: %s\n", rt.Runtime)
	fmt.Fprintf(&b, "# grpc: %s\n", res.GRPCCode)
	fmt.Fprintf(&b, "# expect: %s\n", expect)
	fmt.Fprintf(&b, "# recorded by pullpath lab --runtime containerd in %.2fs (crictl pull through the CRI plugin)\n", res.Duration.Seconds())
	b.WriteString(res.Event())
	b.WriteString("\n")
	return os.WriteFile(filepath.Join(dir, "lab-"+t.Name+".txt"), []byte(b.String()), 0o644)
}

// detail is the check's one-line summary: runtime, explain, agreement.
func detail(rt *report.RuntimePull) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", rt.Runtime)
	switch {
	case rt.Error != "":
		b.WriteString("not asked: " + rt.Error)
		return b.String()
	case rt.OK:
		fmt.Fprintf(&b, "pulled in %.2fs", rt.DurationMS/1000)
	case rt.TimedOut:
		fmt.Fprintf(&b, "no answer within the %.0fs pull timeout", rt.TimeoutMS/1000)
	default:
		fmt.Fprintf(&b, "%s in %.2fs: %s", rt.GRPCCode, rt.DurationMS/1000, Shorten(rt.Message, rt.Image))
	}
	if e := rt.Explain; e != nil {
		fmt.Fprintf(&b, "; explain: %s %s (%s)", e.Cause, e.Code, e.Condition)
	}
	if s := rt.ServedBy; s != nil && (s.Resolve != "" || s.Manifest != "" || s.Blobs != "") {
		if s.Resolve == s.Manifest && s.Manifest == s.Blobs {
			fmt.Fprintf(&b, "; served by %s", s.Resolve)
		} else {
			fmt.Fprintf(&b, "; served by: resolve %s, manifest %s, blobs %s", orNothing(s.Resolve), orNothing(s.Manifest), orNothing(s.Blobs))
		}
	} else if len(rt.Tried) > 0 {
		fmt.Fprintf(&b, "; tried %s, none served", strings.Join(rt.Tried, ", "))
	}
	if rt.Note != "" {
		b.WriteString("; not compared: " + rt.Note)
	}
	if len(rt.Mismatches) > 0 {
		b.WriteString("; DIFFERS from the " + rt.Against + ": " + strings.Join(rt.Mismatches, "; "))
	} else if rt.Against != "" {
		b.WriteString("; agrees with the " + rt.Against)
	}
	return b.String()
}

// Shorten drops the prefixes every containerd pull error repeats
// ("failed to pull and unpack image REF: failed to resolve reference REF: ")
// and the request line of a failed request (leaving "HOST: ERROR"), and
// caps the rest, keeping its end.
func Shorten(msg, ref string) string {
	for _, p := range []string{`failed to pull and unpack image "` + ref + `": `, `failed to resolve reference "` + ref + `": `} {
		msg = strings.TrimPrefix(msg, p)
	}
	if m := reRequest.FindStringSubmatch(msg); m != nil {
		msg = m[1] + m[2] + ": " + m[3]
	}
	const max = 180
	if len(msg) > max {
		msg = "..." + msg[len(msg)-max:]
	}
	return msg
}

// reRequest is containerd's failed request: PREFIX failed to do request:
// METHOD "URL": ERROR.
var reRequest = regexp.MustCompile(`^(.*?)failed to do request: \w+ "https?://([^/"]+)[^"]*": (.*)$`)

// Runtimes are the values `lab run|test --runtime` accepts.
var Runtimes = []string{"containerd"}

// ForRuntime returns the hooks for `lab run|test --runtime NAME`: none for
// "", the containerd hook (with crictl found, or built by EnsureCrictl,
// which can take minutes the first time) for "containerd".
func ForRuntime(ctx context.Context, name string) ([]lab.Hook, error) {
	switch name {
	case "":
		return nil, nil
	case "containerd":
		crictl, err := crirun.EnsureCrictl(ctx)
		if err != nil {
			return nil, err
		}
		return []lab.Hook{&Hook{Crictl: crictl}}, nil
	}
	return nil, fmt.Errorf("--runtime %q: want one of %s", name, strings.Join(Runtimes, ", "))
}
