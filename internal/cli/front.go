//go:build noclients

package cli

// The front build. A Go program runs the init of every package it links
// before main, and touches the pages of their code: a binary that links
// client-go's API groups and the AWS, Azure and Google SDKs maps tens of
// MiB at start-up, whatever the command (BENCHMARKS.md, memory). So the
// released pullpath is two binaries built from cmd/pullpath:
//
//   - pullpath (-tags noclients): the commands that need no Kubernetes or
//     cloud client run here (probe, runtime-env, version, explain --from);
//   - pullpath-full (no tag, what go install gives too): every command.
//
// The front hands any other command line, unchanged, to pullpath-full
// beside it (exec: same process, streams, signals and exit code), so a
// cloud SDK added to the CLI can never weigh on probe's start-up;
// internal/depguard's test keeps this build free of them.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// FullBinary is the binary the front hands the other commands to.
const FullBinary = "pullpath-full"

// clientCommands: none in the front; handOff runs them in pullpath-full.
func clientCommands(Streams) []*cobra.Command { return nil }

// newExplainCommand is explain --from alone: explain against a cluster is
// handed off.
func newExplainCommand(s Streams) *cobra.Command {
	o := &frontExplainOptions{streams: s}
	cmd := &cobra.Command{
		Use:     "explain --from FILE",
		Short:   "Read pull-failure messages and correlate failing and healthy nodes",
		Long:    explainLong,
		Example: explainExample,
		Args:    cobra.NoArgs,
		RunE:    runE(o),
	}
	o.out.addFlag(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "read messages offline from FILE ('-' for stdin): kubectl get events -o json, kubectl describe pod output, or one message per line")
	return cmd
}

type frontExplainOptions struct {
	out     output
	from    string
	streams Streams
}

func (o *frontExplainOptions) Complete(*cobra.Command, []string) error { return nil }

func (o *frontExplainOptions) Validate() error {
	if o.from == "" {
		return errors.New("explain without --from reads a cluster: it runs in " + FullBinary)
	}
	return o.out.validate()
}

func (o *frontExplainOptions) Run(context.Context) error {
	r, err := readOffline(o.from, o.streams.In)
	if err != nil {
		return err
	}
	return o.out.finish(o.streams.Out, r)
}

// handOff execs pullpath-full with args when this build does not run the
// command itself; it returns only when it did not exec (done false: run
// here) or could not (the exit code, the error printed).
func handOff(args []string, s Streams) (int, bool) {
	rest := args[min(1, len(args)):]
	if runsHere(rest) {
		return 0, false
	}
	full, err := findFull()
	if err != nil {
		if helpOnly(rest) {
			return 0, false // this build's own help and completion
		}
		fmt.Fprintf(s.ErrOut, "pullpath: %v\n", err)
		return exitError, true
	}
	argv := append([]string{"pullpath"}, rest...)
	if len(args) > 0 {
		argv[0] = args[0] // kubectl-pullpath stays the name it was called by
	}
	err = syscall.Exec(full, argv, os.Environ())
	fmt.Fprintf(s.ErrOut, "pullpath: run %s: %v\n", full, err)
	return exitError, true
}

// runsHere says whether the command line (without the program name) is
// one this build runs: probe, runtime-env, version, explain --from (with -o
// at most).
func runsHere(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "probe", "runtime-env", "version":
		return true
	case "explain":
		return offlineExplain(args[1:])
	}
	return false
}

// offlineExplain: explain's flags are --from FILE and -o FORMAT only (any
// other flag or argument is the cluster's: pullpath-full's to read).
func offlineExplain(args []string) bool {
	from := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--from":
			from = true
			i++
		case strings.HasPrefix(a, "--from="):
			from = true
		case a == "-o" || a == "--output":
			i++
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "-o") && len(a) > 2:
		default:
			return false
		}
	}
	return from
}

// helpOnly: help or shell completion, which this build answers for its
// own commands when pullpath-full is not there.
func helpOnly(args []string) bool {
	if len(args) == 0 {
		return true
	}
	switch args[0] {
	case "help", "-h", "--help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return true
	}
	return false
}

// findFull is pullpath-full beside this binary (symlinks resolved: krew
// links kubectl-pullpath into its bin folder), else on PATH.
func findFull() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), FullBinary)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(FullBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("this command runs in %s (pullpath with its Kubernetes and cloud clients), which is neither beside %s nor on PATH: install both binaries of the release archive, or one binary with everything: go install github.com/pullpath/pullpath/cmd/pullpath@VERSION", FullBinary, self)
}
