package monitor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/prometheus/common/expfmt"
)

// Start completes the options after flag parsing (the --config file; set
// names the flags given on the command line) and builds the agent: every
// error is bad input, one line, before anything runs.
func Start(o Options, set map[string]bool, logw io.Writer) (*Agent, error) {
	if o.ConfigFile != "" {
		if err := o.LoadConfigFile(o.ConfigFile, set); err != nil {
			return nil, err
		}
	}
	return New(o, logw)
}

// RunAgent runs a started agent; with --once it then writes the metrics
// to stdout in the Prometheus text format.
func RunAgent(ctx context.Context, a *Agent, stdout io.Writer) error {
	defer a.Close()
	if err := a.Run(ctx); err != nil {
		return err
	}
	if a.o.Once {
		return a.Metrics.WriteText(stdout)
	}
	return nil
}

// WriteText writes every series in the Prometheus text format.
func (m *Metrics) WriteText(w io.Writer) error {
	mfs, err := m.Registry.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// Main is the pullpath-agent binary: the same flags as `pullpath monitor`,
// parsed by the standard library. It returns the exit code: 0, or 1 for
// bad input and a failed server.
func Main(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	o.RegisterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s: the pullpath node agent (pullpath monitor in a small binary for a DaemonSet).\n\nUsage: %s --image IMAGE [--image IMAGE...] [flags]\n\n", name, name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q: images go in --image (see --help)\n", name, fs.Arg(0))
		return 1
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	a, err := Start(o, set, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if err := RunAgent(ctx, a, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
