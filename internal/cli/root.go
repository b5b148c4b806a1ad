// Package cli holds pullpath's commands, one file per command: flags,
// validation and output selection, as kubectl's Complete, Validate and
// Run. It holds no diagnostic logic: commands call the engines (pull,
// explain, sweep, diagnose, the aws, azure and gcp audits, monitor, lab) and
// hand their reports to internal/printers. Only this package decides what
// is printed and exits, with the code each report's engine recorded from
// internal/exitcode (exit.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pullpath/pullpath/internal/printers"
)

// Streams are the process's standard streams.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ExitError carries an exit code other than 1 out of a command (see
// exit.go: commands end with output.finish, which builds it). A plain
// error exits 1. A nil Err means the command already printed its result
// and only the code is left to give.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Run runs pullpath with args (args[0] is the program name) and returns the
// exit code: 0, an ExitError's code, or 1 for any other error, which it
// prints on one line.
func Run(ctx context.Context, args []string, s Streams) int {
	root := NewRootCommand(s)
	if len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "kubectl-") {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl pullpath"}
	}
	root.SetArgs(args[1:])
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(s.ErrOut, "pullpath: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(s.ErrOut, "pullpath: %v\n", err)
	return exitError
}

// command is what the options of every pullpath command implement, as
// kubectl's do: Complete fills the options from the arguments and the
// environment, Validate checks them (one-line errors naming the flag),
// Run does the work and, when it prints a report, ends with output.finish.
type command interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the RunE of a command whose options are o.
func runE(o command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

var rootLong = `pullpath tells exactly why a Kubernetes node cannot pull an image from a
private registry, and proves the fix.

A pull is not the Pod's: the kubelet asks the node's container runtime, which
resolves, connects and downloads in the NODE's network namespace, before any
container exists. A pull is several connections: the registry (/v2/), often a
separate token service, and the blob storage the registry redirects layers to
(S3 for ECR, *.data.azurecr.io for ACR, a CDN for Docker Hub). Each must
resolve with the node's resolver, route both ways, pass TLS and authorize.

  diagnose from ImagePullBackOff to the broken link, the object to change and
           the proof: read, walk and audit in one command
  probe    walk the whole pull from this node, name the first broken link
  explain  read kubelet/runtime messages, correlate failing and healthy nodes
  sweep    walk the pull from every pool, zone and subnet as Pods, with the
           kubelet's own pull beside it
  aws      audit the EKS node path to ECR and S3, subnet by subnet (offline or live)
  azure    audit the AKS node path to ACR over private link, pool by pool
  gcp      audit the GKE node path to Artifact Registry and GCR, subnet by subnet
  monitor  keep walking from every node (a DaemonSet agent), Prometheus metrics
  lab      reproduce every fault for real, in network namespaces and a real cluster

Exit codes (diagnose, probe, explain, sweep, aws/azure/gcp audit, monitor status,
lab run, lab test): the report's dominant repair direction, so scripts and
Jobs can act without parsing output.
` + exitHelp(exitTable...)

// NewRootCommand builds the command tree.
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "pullpath",
		Short:         "Why a Kubernetes node cannot pull an image, and proof of the fix",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra's `completion bash|zsh|fish|powershell` (README, Install)
		CompletionOptions: cobra.CompletionOptions{DisableDescriptions: false},
	}
	// Every command, in one binary; what runs on nodes without the CLI
	// around it is cmd/pullpath-agent (internal/nodecli).
	root.AddCommand(
		newDiagnoseCommand(s),
		newProbeCommand(s),
		newExplainCommand(s),
		newSweepCommand(s),
		newAWSCommand(s),
		newAzureCommand(s),
		newGCPCommand(s),
		newMonitorCommand(s),
		newLabCommand(s),
		newRuntimeEnvCommand(s),
		newVersionCommand(s),
	)
	return root
}

// output is the -o flag shared by every command that prints a report.
type output struct {
	format string
}

func (o *output) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "output format: "+strings.Join(printers.Formats, ", "))
}

func (o *output) validate() error { return printers.CheckFormat(o.format) }

func (o *output) render(w io.Writer, v any) error {
	return printers.Print(w, o.format, v, printers.Options{Color: isTerminal(w)})
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
