package labhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// A lab node that plays a CRI-O node (node.runtime: cri-o) gets
// containers/image itself beside the probe, not containerd: cimagepull
// (test/tools/cimagepull, built by hack/controlplane.sh) pulls the image
// through the docker transport's source as CRI-O's image service does,
// with the node's registries.conf.d, certs.d and auth file read under the
// node's root, started in the node's network namespace the way crirun
// starts containerd (`ip netns exec`). CRI-O itself does not run here:
// it is not packaged for this Debian, its build needs cgo against
// libseccomp and gpgme, and its certs.d lookup has no flag (only
// /etc/containers/certs.d of the machine).

// CImagePullTimeout bounds one reference pull: above containers/image's
// 30 s dial timeout (tlsclientconfig.NewTransport), so a black-holed host
// shows the library's own error.
const CImagePullTimeout = 60 * time.Second

// cimageResult is cimagepull's one line.
type cimageResult struct {
	OK         bool     `json:"ok"`
	Error      string   `json:"error"`
	Tried      []string `json:"tried"`
	Served     string   `json:"served"`
	Digest     string   `json:"digest"`
	Blobs      int      `json:"blobs"`
	CImage     string   `json:"cimage"`
	DurationMS float64  `json:"durationMs"`
}

// checkCRIO is Check for a CRI-O node: containers/image's pull, explain's
// reading of its message (as CRI-O returns it through the CRI), the
// outcome against the probe's (or the scenario's expect.runtime), and the
// source that served against the probe's.
func (h *Hook) checkCRIO(ctx context.Context, env *lab.Env, probe *report.ProbeReport) report.LabCheck {
	start := time.Now()
	rt := &report.RuntimePull{Runtime: "containers/image", Client: "cimagepull", Image: env.Image, TimeoutMS: units.MS(CImagePullTimeout)}
	done := h.checkDone(rt, start)
	res, err := h.cimagePull(ctx, env)
	if err != nil {
		rt.Error = err.Error()
		return done()
	}
	rt.Runtime = "containers/image " + res.CImage
	rt.Credential = env.Scenario.Node.Credentials != nil || env.Scenario.Node.CredentialProvider != nil && env.Scenario.Node.CredentialProvider.Fail == ""
	rt.OK, rt.DurationMS = res.OK, res.DurationMS
	rt.Message = redact.String(res.Error)
	if !res.OK {
		// CRI-O's PullImage returns containers/image's error as a plain
		// error: the CRI call's status is Unknown.
		rt.GRPCCode = "Unknown"
	}
	for _, r := range res.Tried {
		rt.Tried = append(rt.Tried, hostOfRef(r))
	}
	if res.Served != "" {
		rt.ServedBy = &report.ServedBy{Resolve: res.Served, Manifest: res.Served, Blobs: res.Served}
	}
	var cl explain.Classification
	if !res.OK {
		// CRI-O hands containers/image's error to the kubelet as the
		// CRI call's message.
		cl = explain.Classify("rpc error: code = Unknown desc = " + rt.Message)
		rt.Explain = &report.RuntimeReading{Stage: cl.Stage, Cause: cl.Cause, Condition: cl.Condition, Code: cl.Code, Rule: cl.Rule}
	}
	if probe != nil {
		probe.Runtime = rt
	}
	var want *report.LabRuntimeExpect
	if env.Scenario.Expect != nil {
		want = env.Scenario.Expect.Runtime
	}
	var pv *verdict.Verdict
	if probe != nil {
		pv = &probe.Verdict
	}
	rt.Against, rt.Mismatches = Compare(res.OK, cl, pv, want)
	if res.OK && probe != nil && probe.Verdict.Status == verdict.StatusOK {
		served := ""
		if probe.Chain != nil {
			served = probe.Chain.ServedBy.Manifest
		} else if len(probe.Endpoints) > 0 {
			served = hostPortOf(probe.Endpoints[0])
		}
		if served != res.Served {
			rt.Mismatches = append(rt.Mismatches, fmt.Sprintf("served by: the probe says %s, containers/image %s", orNothing(served), orNothing(res.Served)))
		}
	}
	return done()
}

// hostPortOf is an endpoint as a reference names it: HOST, or HOST:PORT
// when the port is not the scheme's.
func hostPortOf(e *report.Endpoint) string {
	if (e.Scheme == "https" && e.Port == 443) || (e.Scheme == "http" && e.Port == 80) {
		return e.Host
	}
	return fmt.Sprintf("%s:%d", e.Host, e.Port)
}

func hostOfRef(ref string) string {
	h, _, _ := strings.Cut(ref, "/")
	return h
}

// cimagePull runs cimagepull in the node's namespace with the node's root,
// the kubelet's credentials (what it passes through the CRI: the node's
// docker config or its credential provider's answer) in the environment.
func (h *Hook) cimagePull(ctx context.Context, env *lab.Env) (cimageResult, error) {
	var res cimageResult
	if env.NodeRoot == "" {
		return res, errors.New("the CRI-O node has no root folder (prepareCRIO)")
	}
	bin, err := h.cimagePullBinary(ctx)
	if err != nil {
		return res, err
	}
	cmd := env.Command(ctx, env.NodeNS, bin, "--root", env.NodeRoot, "--timeout", CImagePullTimeout.String(), env.Image)
	cmd.Env = append(cmd.Env, env.RuntimeEnv...)
	if c := env.Scenario.Node.Credentials; c != nil {
		cmd.Env = append(cmd.Env, "CIMAGEPULL_USERNAME="+c.Username, "CIMAGEPULL_PASSWORD="+c.Password)
	}
	if cp, err := env.CredentialProviderFiles(); err != nil {
		return res, err
	} else if cp != nil {
		auth, err := kubeletAuth(ctx, cp, env.Image)
		if err != nil {
			return res, err
		}
		if auth != nil {
			cmd.Env = append(cmd.Env, "CIMAGEPULL_USERNAME="+auth.Username, "CIMAGEPULL_PASSWORD="+auth.Password)
		}
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	runErr := cmd.Run()
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		return res, fmt.Errorf("cimagepull in %s gave no result: %s", env.NodeNS, redact.String(units.OneLine(msg)))
	}
	return res, nil
}

// cimagePullBinary finds cimagepull once: EnsureCImagePull.
func (h *Hook) cimagePullBinary(ctx context.Context) (string, error) {
	h.cimageOnce.Do(func() { h.cimage, h.cimageErr = EnsureCImagePull(ctx) })
	return h.cimage, h.cimageErr
}

var ensureMu sync.Mutex

// EnsureCImagePull finds cimagepull (ensureTool).
func EnsureCImagePull(ctx context.Context) (string, error) {
	return ensureTool(ctx, "cimagepull", "./cimagepull")
}

// ensureTool finds one of test/tools' programs: $PULLPATH_CONTROLPLANE_BIN,
// the module's test/controlplane/bin (hack/controlplane.sh builds them
// there), PATH; else builds it (pkg, in test/tools) into the module's
// test/controlplane/bin (minutes on a cold build cache).
func ensureTool(ctx context.Context, name, pkg string) (string, error) {
	ensureMu.Lock()
	defer ensureMu.Unlock()
	root, rootErr := moduleRoot()
	var dirs []string
	if d := os.Getenv("PULLPATH_CONTROLPLANE_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if rootErr == nil {
		dirs = append(dirs, filepath.Join(root, "test", "controlplane", "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExec(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if rootErr != nil {
		return "", fmt.Errorf("labhook: %s not found and no module to build it from: %v", name, rootErr)
	}
	out := filepath.Join(root, "test", "controlplane", "bin", name)
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = filepath.Join(root, "test", "tools")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	cmd.WaitDelay = 5 * time.Second
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("labhook: building %s (hack/controlplane.sh builds it): %v: %s", name, err, lastLine(string(b)))
	}
	return out, nil
}

// moduleRoot is the folder of pullpath's go.mod above the working
// directory.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "test", "tools", "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no test/tools/go.mod above the working directory")
		}
		d = up
	}
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
