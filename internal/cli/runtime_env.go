package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/runtimecfg"
)

var runtimeEnvLong = `Read the proxy variables of this node's running containerd (HTTP_PROXY,
HTTPS_PROXY, NO_PROXY and their lower-case twins, from /proc/PID/environ of
the containerd process in this network namespace) and write them as an
environment file that ` + "`pullpath probe --runtime-env FILE`" + ` reads.

A process's environment is readable by its own user only: the sweep Pod's
init container runs this as root in the host's PID namespace (no other
privilege, no network use) and writes into a memory volume, and the probe
container, which runs as nobody, walks with it. Without --out the variables
are printed with any proxy password masked.`

const runtimeEnvExample = `  # on a node: what proxy does the running containerd use?
  sudo pullpath runtime-env

  # what the sweep Pod's init container does
  pullpath runtime-env --out /run/pullpath/runtime-env --gid 65532`

type runtimeEnvOptions struct {
	streams  Streams
	out      string
	gid      int
	hostRoot string
}

func newRuntimeEnvCommand(s Streams) *cobra.Command {
	o := &runtimeEnvOptions{streams: s}
	cmd := &cobra.Command{
		Use:     "runtime-env",
		Short:   "Write the running containerd's proxy variables for a probe that cannot read them itself",
		Long:    runtimeEnvLong,
		Example: runtimeEnvExample,
		Args:    cobra.NoArgs,
		RunE:    runE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write the environment file here (mode 0640), replacing it whole; default: print it, passwords masked")
	f.IntVar(&o.gid, "gid", -1, "the group that may read --out (the probe container's)")
	f.StringVar(&o.hostRoot, "host-root", "/", "where the node's filesystem is; its proc/ lists the processes")
	return cmd
}

func (o *runtimeEnvOptions) Complete(*cobra.Command, []string) error { return nil }

func (o *runtimeEnvOptions) Validate() error {
	if o.gid >= 0 && o.out == "" {
		return errors.New("--gid needs --out")
	}
	return nil
}

func (o *runtimeEnvOptions) Run(context.Context) error {
	snap := runtimecfg.RuntimeEnvSnapshot(runtimecfg.ProxyDiscoveryOptions{Root: o.hostRoot})
	if o.out == "" {
		_, err := fmt.Fprint(o.streams.Out, runtimecfg.RedactProxyValue(snap))
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.out), ".runtime-env-")
	if err != nil {
		return fmt.Errorf("--out %s: %v", o.out, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(snap); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %v", o.out, err)
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %v", o.out, err)
	}
	if o.gid >= 0 {
		if err := tmp.Chown(-1, o.gid); err != nil {
			tmp.Close()
			return fmt.Errorf("--out %s: --gid %d: %v", o.out, o.gid, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %v", o.out, err)
	}
	if err := os.Rename(tmp.Name(), o.out); err != nil {
		return fmt.Errorf("--out %s: %v", o.out, err)
	}
	// what was found goes to the log, the values do not
	first, _, _ := strings.Cut(snap, "\n")
	fmt.Fprintln(o.streams.ErrOut, first)
	return nil
}
