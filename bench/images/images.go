// Package images measures pullpath's two images side by side: the
// node-side image (pullpath-agent: what every Pod of the walk runs) and the
// CLI image (pullpath, for kubectl debug). For each: what a node downloads
// (compressed layers, config, manifest), and the time a real containerd
// (Debian's, its CRI plugin driven by crictl the way the kubelet drives it,
// internal/crirun) takes to pull and unpack it cold through a lab's
// registry: a built-in scenario of internal/lab (the reference registry
// with token auth, redirecting blobs to an S3-like host, in network
// namespaces), the two images stored in that registry, pulled in turn,
// the store cleared before each pull.
//
// It needs root (network namespaces), containerd and crictl.
package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/crirun"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labhook"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/selfimage"
)

// DefaultScenario is the lab whose registry serves the images: ECR-like,
// healthy, token auth and a blob redirect.
const DefaultScenario = "ecr-healthy"

// Config says what to run.
type Config struct {
	ModuleDir   string // the pullpath module the images are built from
	PullpathBin string // the pullpath the lab re-executes for its probe
	Scenario    string // default DefaultScenario
	Rounds      int
	PullTimeout time.Duration // per pull; default 5 minutes
	Log         io.Writer
}

// Image is one image's figures.
type Image struct {
	Name      string    `json:"name"`
	Binary    string    `json:"binary"`
	Bytes     int64     `json:"bytes"` // what a node downloads
	Layers    int       `json:"layers"`
	Digest    string    `json:"digest"`
	PullsSec  []float64 `json:"pullsSec"`  // crictl pull, cold, each round
	MedianSec float64   `json:"medianSec"` // of PullsSec
}

// Result is the benchmark.
type Result struct {
	Date     time.Time       `json:"date"`
	Machine  measure.Machine `json:"machine"`
	Scenario string          `json:"scenario"`
	Runtime  string          `json:"runtime"`
	Rounds   int             `json:"rounds"`
	Images   []Image         `json:"images"` // node-side first, then the CLI
}

// Measure builds both images for this machine, runs the scenario's lab
// and, inside it, pulls each image Rounds times with containerd.
func Measure(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("images: Rounds %d, want at least 1", cfg.Rounds)
	}
	if cfg.Scenario == "" {
		cfg.Scenario = DefaultScenario
	}
	if cfg.PullTimeout <= 0 {
		cfg.PullTimeout = 5 * time.Minute
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "images: "+format+"\n", a...)
		}
	}
	dir, err := os.MkdirTemp("", "pullbench-images-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &Result{Date: time.Now().UTC(), Machine: measure.DescribeMachine(), Scenario: cfg.Scenario, Rounds: cfg.Rounds}
	var imgs []v1.Image
	for _, p := range []struct {
		name string
		prog selfimage.Program
	}{
		{"pullpath-agent (the node-side image: the walk's Pods, the monitor DaemonSet)", agentimage.Program},
		{"pullpath (the CLI, for kubectl debug)", selfimage.Pullpath},
	} {
		logf("building %s", p.prog.Name)
		bctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		_, img, err := p.prog.LabTarball(bctx, cfg.ModuleDir, dir, "ghcr.io/pullpath/"+p.prog.Name+":bench")
		cancel()
		if err != nil {
			return nil, fmt.Errorf("images: %v", err)
		}
		size, err := selfimage.Size(img)
		if err != nil {
			return nil, err
		}
		ls, _ := img.Layers()
		d, _ := img.Digest()
		res.Images = append(res.Images, Image{Name: p.name, Binary: p.prog.Name, Bytes: size, Layers: len(ls), Digest: d.String()})
		imgs = append(imgs, img)
	}

	t, err := scenario.LoadBuiltin(cfg.Scenario)
	if err != nil {
		return nil, fmt.Errorf("images: %v", err)
	}
	h := &pullHook{cfg: cfg, res: res, imgs: imgs, logf: logf}
	r := lab.Run(ctx, t, lab.Options{Self: cfg.PullpathBin, Hooks: []lab.Hook{h}})
	if r.Error != "" {
		return nil, fmt.Errorf("images: lab %s: %s", cfg.Scenario, r.Error)
	}
	if h.err != nil {
		return nil, h.err
	}
	for i := range res.Images {
		if len(res.Images[i].PullsSec) != cfg.Rounds {
			return nil, fmt.Errorf("images: %s was pulled %d times, want %d", res.Images[i].Binary, len(res.Images[i].PullsSec), cfg.Rounds)
		}
		res.Images[i].MedianSec = measure.Median(res.Images[i].PullsSec)
	}
	return res, nil
}

// pullHook runs inside the lab: it stores both images in the lab's
// registry, starts containerd in the node's namespace and pulls them in
// turn.
type pullHook struct {
	cfg  Config
	res  *Result
	imgs []v1.Image
	logf func(string, ...any)
	err  error
}

func (h *pullHook) Name() string { return "images" }

func (h *pullHook) Check(ctx context.Context, env *lab.Env, _ *report.ProbeReport) report.LabCheck {
	if err := h.pull(ctx, env); err != nil {
		h.err = fmt.Errorf("images: %w", err)
		return report.LabCheck{Name: h.Name(), Detail: err.Error()}
	}
	return report.LabCheck{Name: h.Name(), OK: true}
}

func (h *pullHook) pull(ctx context.Context, env *lab.Env) error {
	named, err := reference.ParseNormalizedNamed(env.Image)
	if err != nil {
		return fmt.Errorf("the scenario's image %q: %v", env.Image, err)
	}
	// The lab's registry serves RunDir/storage (internal/lab, prepare.go)
	// and its user may pull the scenario's repository: the images go there.
	refs := make([]string, len(h.imgs))
	for i, img := range h.imgs {
		tag := h.res.Images[i].Binary
		if _, err := selfimage.StoreInLab(ctx, filepath.Join(env.RunDir, "storage"), reference.Path(named), tag, img); err != nil {
			return err
		}
		refs[i] = reference.Domain(named) + "/" + reference.Path(named) + ":" + tag
	}
	certs, err := labhook.NodeCertsDir(env)
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(env.RunDir, "logs", "containerd-images.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	rt, err := crirun.Start(ctx, crirun.Options{Netns: env.NodeNS, WorkDir: filepath.Join(env.RunDir, "ctrd-images"), CertsDir: certs, Log: logf})
	if err != nil {
		return err
	}
	defer rt.Stop()
	h.res.Runtime = rt.Version()
	var auth *crirun.Auth
	if c := env.Scenario.Node.Credentials; c != nil {
		auth = &crirun.Auth{Username: c.Username, Password: c.Password}
	}
	for round := 1; round <= h.cfg.Rounds; round++ {
		order := []int{0, 1}
		if round%2 == 0 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if err := rt.RemoveAll(ctx); err != nil {
				return err
			}
			p := rt.Pull(ctx, refs[i], auth, h.cfg.PullTimeout)
			if !p.OK || p.Error != "" {
				return fmt.Errorf("crictl pull %s: %s%s", refs[i], p.Error, oneLine(p.Message))
			}
			h.res.Images[i].PullsSec = append(h.res.Images[i].PullsSec, p.Duration.Seconds())
			h.logf("round %d: %s pulled in %.2fs", round, h.res.Images[i].Binary, p.Duration.Seconds())
		}
	}
	return errors.Join(rt.Stop())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Markdown renders the table.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Date: %s. Machine: %d cores, %s, %d MiB memory, kernel %s; load average %s at the start (a shared machine).\n", r.Date.Format("2006-01-02 15:04 UTC"), r.Machine.Cores, r.Machine.CPUModel, r.Machine.MemMiB, r.Machine.Kernel, r.Machine.LoadAvg)
	fmt.Fprintf(&b, "Pulled by %s through crictl (the kubelet's CRI call) from the lab %s's registry (token auth, blobs redirected to the S3-like host), cold (store cleared), %d rounds, alternating.\n\n", r.Runtime, r.Scenario, r.Rounds)
	b.WriteString("| image | download MB | layers | pull s (median) | pull s (each round) |\n|---|---|---|---|---|\n")
	for _, im := range r.Images {
		var each []string
		for _, s := range im.PullsSec {
			each = append(each, fmt.Sprintf("%.2f", s))
		}
		fmt.Fprintf(&b, "| %s | %.1f | %d | %.2f | %s |\n", im.Name, float64(im.Bytes)/1e6, im.Layers, im.MedianSec, strings.Join(each, ", "))
	}
	if len(r.Images) == 2 && r.Images[1].Bytes > 0 && r.Images[1].MedianSec > 0 {
		fmt.Fprintf(&b, "\nThe node-side image is %.2fx the CLI image's size and pulls in %.2fx its time.\n",
			float64(r.Images[0].Bytes)/float64(r.Images[1].Bytes), r.Images[0].MedianSec/r.Images[1].MedianSec)
	}
	return b.String()
}
