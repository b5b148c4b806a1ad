package probeopts

import (
	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// runtimeFlags are probe's flags for step 0: by default the walk finds the
// node's runtime and reads its configuration as the runtime does; these
// point at another file, or replace the registry folders on purpose.
type runtimeFlags struct {
	runtime, config string
}

func (f *runtimeFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.runtime, "runtime", "", "the node's runtime, containerd or cri-o (default: found from the running process, else the layouts on disk)")
	fs.StringVar(&f.config, "runtime-config", "", "the runtime's config file to read (a node path under --host-root), instead of finding it: containerd's config.toml, CRI-O's crio.conf")
}

// complete finds the runtime and reads its configuration (root is the
// node's filesystem, --host-root) into the probe's options. --certs-dir
// and --docker-certs-dir, when given, replace its registry folders.
func (f *runtimeFlags) complete(fs *pflag.FlagSet, o *Options, root string) error {
	changed := func(name string) bool { return fs != nil && fs.Changed(name) }
	ro := runtimecfg.RuntimeOptions{Root: root, Runtime: f.runtime, ConfigFile: f.config}
	if changed("containerd-config") && f.config == "" {
		ro.ConfigFile = o.Pull.ContainerdConfig
		if ro.Runtime == "" {
			ro.Runtime = runtimecfg.RuntimeContainerd
		}
	}
	if changed("certs-dir") {
		ro.CertsDir = &o.Pull.CertsDir
	}
	if changed("docker-certs-dir") {
		ro.DockerCertsDir = &o.Pull.DockerCertsDir
	}
	rc, err := runtimecfg.DiscoverRuntime(ro)
	if err != nil {
		return err
	}
	o.Pull.Runtime = rc
	return nil
}
