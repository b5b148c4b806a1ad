// Package cli holds pullpath's commands: flags, validation and output
// selection. It holds no diagnostic logic: commands call the engines
// (internal/pull, internal/explain, internal/lab) and hand their reports to
// internal/printers. Only this package decides what is printed and the exit code.
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
	"github.com/pullpath/pullpath/internal/verdict"
)

// Streams are the process's standard streams.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ExitError carries an exit code out of a command. A nil Err means the
// command already printed its result and only the code is left to give.
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
// exit code.
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
		return verdict.ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(s.ErrOut, "pullpath: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(s.ErrOut, "pullpath: %v\n", err)
	return verdict.ExitError
}

const rootLong = `pullpath tells exactly why a Kubernetes node cannot pull an image from a
private registry, and proves the fix.

A pull is not the Pod's: the kubelet asks the node's container runtime, which
resolves, connects and downloads in the NODE's network namespace, before any
container exists. A pull is several connections: the registry (/v2/), often a
separate token service, and the blob storage the registry redirects layers to
(S3 for ECR, *.data.azurecr.io for ACR, a CDN for Docker Hub). Each must
resolve with the node's resolver, route both ways, pass TLS and authorize.

  probe    walk the whole pull from this node, name the first broken link
  explain  read kubelet/runtime messages, correlate failing and healthy nodes
  lab      reproduce every fault for real, in network namespaces

Exit codes (probe, lab run, explain):
  0  pull OK / nothing failing      3  route         6  tls-identity
  1  usage or internal error        4  dns           7  image
  2  failure outside the six        5  endpoint-set  8  registry
     repair directions              9  lab: a verdict differs from the scenario's expect`

// NewRootCommand builds the command tree.
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "pullpath",
		Short:         "Why a Kubernetes node cannot pull an image, and proof of the fix",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.AddCommand(
		newProbeCommand(s),
		newExplainCommand(s),
		newLabCommand(s),
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
