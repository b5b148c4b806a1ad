// Package nodecli is the command line of pullpath-agent, the node-side
// binary: the one small image every Pod of pullpath's walk runs.
//
//	pullpath-agent --image IMAGE [flags]   the monitor agent (deploy/monitor's DaemonSet)
//	pullpath-agent probe IMAGE [flags]     the walk of sweep's and diagnose's probe Pods
//	pullpath-agent version                 what the sweep owner's container names
//
// probe takes exactly the flags of `pullpath probe` (internal/probeopts)
// and prints its report as JSON, the only format a Pod's log needs; it
// exits as `pullpath probe` does. Like the rest of the node side it links
// no cobra, printers, client-go or cloud SDK (internal/depguard), which is
// what keeps the image small: the node pulls it before it can answer.
package nodecli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/buildinfo"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/probeopts"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Exit codes other than a verdict's (verdict.Condition.ExitCode).
const (
	exitOK    = 0
	exitError = 1 // usage error, bad input, internal error
)

// Run runs pullpath-agent with args (args[0] is the program) and returns
// its exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "pullpath-agent"
	if len(args) > 0 {
		name = filepath.Base(args[0])
	}
	rest := args[min(1, len(args)):]
	if len(rest) > 0 {
		switch rest[0] {
		case "probe":
			return probe(ctx, name, rest[1:], stdin, stdout, stderr)
		case "version":
			if len(rest) > 1 {
				fmt.Fprintf(stderr, "%s version: unexpected argument %q (it takes none)\n", name, rest[1])
				return exitError
			}
			fmt.Fprintln(stdout, buildinfo.Read().Line(name))
			return exitOK
		case "help", "-h", "--help":
			fmt.Fprintf(stderr, "%s: pullpath's node-side binary.\n\n  %s --image IMAGE [flags]   keep walking the pull of IMAGE (the monitor agent, below)\n  %s probe IMAGE [flags]     walk the pull of IMAGE once, the report as JSON (%s probe --help)\n  %s version                 print the version\n\n", name, name, name, name, name)
			return monitor.Main(ctx, name, []string{"--help"}, stdout, stderr)
		}
	}
	return monitor.Main(ctx, name, rest, stdout, stderr)
}

// probe is `pullpath probe -o json` without the CLI around it.
func probe(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseProbe(name, args, stdin, stderr)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "%s probe: %v\n", name, err)
		return exitError
	}
	rep, err := o.Walk(ctx)
	if err == nil {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s probe: %v\n", name, err)
		return exitError
	}
	if rep.Verdict.Status == verdict.StatusOK {
		return exitOK
	}
	return rep.Verdict.Condition.ExitCode()
}

// parseProbe reads probe's arguments into completed, valid options:
// pflag.ErrHelp after printing the usage for -h, else a one-line error.
func parseProbe(name string, args []string, stdin io.Reader, stderr io.Writer) (*probeopts.Options, error) {
	fs := pflag.NewFlagSet(name+" probe", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &probeopts.Options{}
	o.AddFlags(fs)
	format := fs.StringP("output", "o", "json", "output format: json (the pullpath CLI also prints text, wide and yaml)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s probe: walk the whole pull of IMAGE from this node's network namespace and name\nthe first broken link (`pullpath probe --help` says how); the report is JSON.\n\nUsage: %s probe IMAGE [flags]\n\n%s", name, name, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() != 1:
		return nil, fmt.Errorf("takes exactly one IMAGE argument, got %d (see %s probe --help)", fs.NArg(), name)
	case *format != "json":
		return nil, fmt.Errorf("-o %q: the node-side binary prints json only (the pullpath CLI prints text, wide and yaml)", *format)
	}
	if err := o.Complete(fs, fs.Arg(0), stdin); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}
