package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// DemoOptions tune the loopback demo.
type DemoOptions struct {
	// Self is the pullpath binary that runs the probe (default os.Executable()).
	Self string
	// Dir holds the stacks' files (default: a temporary folder, removed).
	Dir string
}

// demoPath is one side of the demo.
type demoPath struct {
	name, summary string
	cfg           labsvc.StackConfig
}

// Demo runs the loopback demo, without root: two copies of the lab's
// services (DNS, registry with Bearer auth, token service, blob host) on
// 127.0.0.0/8 addresses, and the probe against each, run as a separate
// process exactly as on a node: a healthy pull, and one where the blob host
// is down while the registry answers.
func Demo(ctx context.Context, o DemoOptions) (*report.LabReport, error) {
	self := o.Self
	if self == "" {
		p, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("lab demo: cannot find the pullpath binary: %v", err)
		}
		self = p
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "pullpath-demo-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	image := labsvc.ImageSpec{Repository: "shop/web", Tag: "1.0", LayerSizes: []int64{512 << 10, 256 << 10}, Seed: 7}
	paths := []demoPath{
		{"healthy", "registry, token and blob host all answer", labsvc.StackConfig{
			Image: image,
			Addrs: labsvc.StackAddrs{DNS: "127.0.10.53", Registry: "127.0.10.10", Token: "127.0.10.11", Blob: "127.0.10.12", Blob2: "127.0.10.13"},
		}},
		{"blob-host-down", "the registry answers, its blob host is down", labsvc.StackConfig{
			Image:        image,
			BlobHostDown: true,
			Addrs:        labsvc.StackAddrs{DNS: "127.0.20.53", Registry: "127.0.20.10", Token: "127.0.20.11", Blob: "127.0.20.12", Blob2: "127.0.20.13"},
		}},
	}
	rep := report.NewLabReport(report.LabModeDemo)
	for _, p := range paths {
		p.cfg.Dir = filepath.Join(dir, p.name)
		st, err := labsvc.StartStack(ctx, p.cfg)
		if err != nil {
			return nil, fmt.Errorf("lab demo: start the %s stack: %v", p.name, err)
		}
		defer st.Close()
		r := &report.LabRun{Scenario: p.name, Summary: p.summary, Image: st.Ref(), Node: "127.0.0.1 (this machine, loopback only)"}
		start := time.Now()
		probe, err := demoProbe(ctx, self, st)
		r.Timings.ProbeMS = msSince(start)
		r.Timings.TotalMS = r.Timings.ProbeMS
		if err != nil {
			r.Result, r.Error = report.LabError, err.Error()
		} else {
			r.Probe = probe
			Judge(r, nil, probe)
		}
		rep.Runs = append(rep.Runs, r)
	}
	rep.Finish(1)
	return rep, nil
}

// demoProbe runs `SELF probe -o json` against a stack, with the stack's
// node files and its DNS server as the only nameserver.
func demoProbe(ctx context.Context, self string, st *labsvc.Stack) (*report.ProbeReport, error) {
	empty := filepath.Join(st.Config.Dir, "empty.d")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "probe", st.Ref(), "-o", "json", "--no-progress",
		"--node", "demo",
		"--resolv-conf", st.Files.ResolvConf, "--hosts-file", st.Files.Hosts,
		"--nameserver", st.Nameserver(),
		"--registry-ca", st.Files.CAFile,
		"--certs-dir", empty, "--docker-certs-dir", empty,
		"--docker-config", st.Files.DockerConfig,
		"--connect-timeout", "2s", "--timeout", "50s")
	cmd.Env = CleanEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var rep report.ProbeReport
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil || rep.Kind == "" {
		msg := units.OneLine(errb.String())
		if msg == "" && err != nil {
			msg = err.Error()
		}
		return nil, fmt.Errorf("probe: %s", msg)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, fmt.Errorf("probe: %v", err)
	}
	return &rep, nil
}
