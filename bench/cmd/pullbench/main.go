// Command pullbench runs pullpath's benchmarks (see BENCHMARKS.md):
//
//	pullbench throughput [-rounds 3] [-layers-mib 256,256,...]   full verified pull vs the ggcr peer; peak RSS
//	pullbench deadpath   [-rounds 3]                             time to verdict on a dead path vs containerd (root)
//	pullbench farpath    [-rounds 3]                             the MTU proof's and trace's cost, projected vs containerd's pull on slow links (root)
//	pullbench explain    [-nodes 5000 -pods 50000 -events 50000] explain -A on a real kube-apiserver
//	pullbench images     [-rounds 3]                             the node-side and CLI images: size, containerd's pull through a lab registry (root)
//	pullbench all                                                 all of them, in that order
//
// It builds the binaries it runs (pullpath, bench/cmd/ggcrpull) into a
// temporary folder, prints each benchmark's tables as Markdown on stdout,
// progress on stderr, and with -json FILE writes every figure as JSON. It
// exits non-zero only when a run fails outright; slow figures are data.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/bench/clusterscale"
	"github.com/pullpath/pullpath/bench/deadpath"
	"github.com/pullpath/pullpath/bench/farpath"
	"github.com/pullpath/pullpath/bench/images"
	"github.com/pullpath/pullpath/bench/throughput"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pullbench:", err)
		os.Exit(1)
	}
}

const usage = "usage: pullbench throughput|deadpath|farpath|explain|images|all [flags] (pullbench CMD -h for flags)"

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "throughput", "deadpath", "farpath", "explain", "images", "all":
	default:
		return fmt.Errorf("unknown benchmark %q; %s", cmd, usage)
	}
	fs := flag.NewFlagSet("pullbench "+cmd, flag.ContinueOnError)
	jsonOut := fs.String("json", "", "also write every figure as JSON to this file")
	rounds := fs.Int("rounds", 3, "runs per tool, alternating")
	layers := fs.String("layers-mib", "", "throughput: layer sizes in MiB, comma separated (default 256,256,192,160,96,64: about 1 GiB)")
	conc := fs.Int("concurrency", 3, "throughput: blobs at once, for both tools")
	profileDir := fs.String("cpuprofile-dir", "", "throughput: write a CPU profile of every engine and peer run into this directory (compare with go tool pprof)")
	pullpathBin := fs.String("pullpath", "", "use this pullpath binary (the CLI) instead of building it")
	var also []throughput.Binary
	fs.Func("startup-with", "throughput: also time `NAME=PATH version` beside pullpath and pullpath-agent in the same run (e.g. a build of an older commit); repeatable", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("want NAME=PATH, got %q", v)
		}
		also = append(also, throughput.Binary{Name: name, Path: path})
		return nil
	})
	scenarios := fs.String("scenarios", "", "deadpath: built-in lab scenarios, comma separated (default: blob host dropped, registry dropped, registry NXDOMAIN)")
	connectTimeout := fs.Duration("connect-timeout", 0, "deadpath: the probe's --connect-timeout (default: pullpath's own, 5s)")
	nodes := fs.Int("nodes", 5000, "explain: Nodes to load")
	pods := fs.Int("pods", 50000, "explain: Pods to load")
	events := fs.Int("events", 50000, "explain: Events to load")
	workers := fs.Int("workers", 48, "explain: concurrent creates")
	loadBudget := fs.Duration("load-budget", 8*time.Minute, "explain: time allowed for loading; what is not loaded by then is left out (and stated)")
	deadline := fs.Duration("deadline", 30*time.Minute, "budget of the whole benchmark")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if *rounds < 1 || *rounds > 20 {
		return fmt.Errorf("-rounds %d: want 1 to 20", *rounds)
	}
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()

	binDir, err := os.MkdirTemp("", "pullbench-bin-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	bins := &builder{dir: binDir, pullpath: *pullpathBin}

	results := map[string]any{}
	defer func() {
		if *jsonOut != "" && len(results) > 0 {
			b, _ := json.MarshalIndent(results, "", "  ")
			if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "pullbench: writing -json:", err)
			}
		}
	}()

	if cmd == "throughput" || cmd == "all" {
		sizes, err := parseSizes(*layers)
		if err != nil {
			return err
		}
		if *profileDir != "" {
			if err := os.MkdirAll(*profileDir, 0o755); err != nil {
				return fmt.Errorf("-cpuprofile-dir: %v", err)
			}
		}
		pp, err := bins.get(ctx, "pullpath")
		if err != nil {
			return err
		}
		peer, err := bins.get(ctx, "ggcrpull")
		if err != nil {
			return err
		}
		engine, err := bins.get(ctx, "probeonly")
		if err != nil {
			return err
		}
		agent, err := bins.get(ctx, "pullpath-agent")
		if err != nil {
			return err
		}
		// The node's probe is pullpath-agent's; the CLI's is the row
		// beside it (every client linked).
		res, err := throughput.Measure(ctx, throughput.Config{
			PullpathBin: agent, PeerBin: peer, EngineBin: engine, FullBin: pp, Layers: sizes, Rounds: *rounds, Concurrency: *conc, Log: os.Stderr, CPUProfileDir: *profileDir,
			Startup: append([]throughput.Binary{
				{Name: "pullpath-agent (the node's binary: probe, the monitor agent)", Path: agent},
				{Name: "pullpath (the CLI: every command)", Path: pp},
			}, also...),
		})
		if err != nil {
			return err
		}
		results["throughput"] = res
		fmt.Printf("## Throughput and memory: full verified pull of %.0f MiB\n\n%s\n", float64(res.ImageBytes)/(1<<20), res.Markdown())
	}
	if cmd == "deadpath" || cmd == "all" {
		pp, err := bins.get(ctx, "pullpath")
		if err != nil {
			return err
		}
		var scs []deadpath.Scenario
		if *scenarios != "" {
			for _, name := range strings.Split(*scenarios, ",") {
				scs = append(scs, scenarioByName(strings.TrimSpace(name)))
			}
		}
		res, err := deadpath.Measure(ctx, deadpath.Config{PullpathBin: pp, Rounds: *rounds, Scenarios: scs, ConnectTimeout: *connectTimeout, Log: os.Stderr})
		if err != nil {
			return err
		}
		results["deadpath"] = res
		fmt.Printf("## Time to verdict on a dead path\n\n%s\n", res.Markdown())
	}
	if cmd == "farpath" {
		pp, err := bins.get(ctx, "pullpath")
		if err != nil {
			return err
		}
		res, err := farpath.Measure(ctx, farpath.Config{PullpathBin: pp, Rounds: *rounds, Log: os.Stderr})
		if err != nil {
			return err
		}
		results["farpath"] = res
		fmt.Printf("## The far side of the path: the MTU proof, the trace, the pace\n\n%s\n", res.Markdown())
	}
	if cmd == "images" || cmd == "all" {
		pp, err := bins.get(ctx, "pullpath")
		if err != nil {
			return err
		}
		root, err := moduleRoot(ctx)
		if err != nil {
			return err
		}
		res, err := images.Measure(ctx, images.Config{ModuleDir: root, PullpathBin: pp, Rounds: *rounds, Log: os.Stderr})
		if err != nil {
			return err
		}
		results["images"] = res
		fmt.Printf("## The node-side image beside the CLI image\n\n%s\n", res.Markdown())
	}
	if cmd == "explain" || cmd == "all" {
		pp, err := bins.get(ctx, "pullpath")
		if err != nil {
			return err
		}
		shape := clusterscale.DefaultShape
		shape.Nodes, shape.Pods, shape.Events, shape.Workers = *nodes, *pods, *events, *workers
		res, err := clusterscale.Measure(ctx, clusterscale.Config{PullpathBin: pp, Shape: shape, LoadBudget: *loadBudget, Rounds: *rounds, Log: os.Stderr})
		if err != nil {
			return err
		}
		results["explain"] = res
		fmt.Printf("## Explain at cluster scale\n\n%s\n", res.Markdown())
	}
	return nil
}

func scenarioByName(name string) deadpath.Scenario {
	for _, s := range deadpath.DefaultScenarios {
		if s.Name == name {
			return s
		}
	}
	return deadpath.Scenario{Name: name, What: "lab scenario " + name}
}

func parseSizes(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("-layers-mib %q: %q is not a size in MiB from 1 to 4096", s, f)
		}
		out = append(out, int64(n)<<20)
	}
	return out, nil
}

// builder builds the binaries the benchmarks run, once each, as
// hack/release.sh and the images build them: static (CGO off), -trimpath,
// stripped (-s -w).
type builder struct {
	dir      string
	pullpath string
}

// packages are the benchmarks' programs by name.
var packages = map[string]string{
	"pullpath":       "./cmd/pullpath",       // the CLI, every command
	"pullpath-agent": "./cmd/pullpath-agent", // the node's binary
	"ggcrpull":       "./bench/cmd/ggcrpull",
	"probeonly":      "./bench/cmd/probeonly",
}

func (b *builder) get(ctx context.Context, name string) (string, error) {
	if b.pullpath != "" && name == "pullpath" {
		return b.pullpath, nil
	}
	out := filepath.Join(b.dir, name)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	pkg := packages[name]
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg}
	fmt.Fprintf(os.Stderr, "pullbench: CGO_ENABLED=0 go %s\n", strings.Join(args, " "))
	bctx, cancel := context.WithTimeout(ctx, 30*time.Minute) // a cold build on a loaded machine
	defer cancel()
	cmd := exec.CommandContext(bctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the pullpath module: run pullbench from the repository")
	}
	return filepath.Dir(mod), nil
}
