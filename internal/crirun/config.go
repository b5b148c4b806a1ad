package crirun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// layout is where everything of one runtime lives inside WorkDir.
type layout struct {
	dir     string
	config  string
	root    string
	state   string
	sock    string
	ttrpc   string
	debug   string
	opt     string
	cniBin  string
	cniConf string
	crictl  string // crictl's own config (empty endpoints: flags decide)
}

func newLayout(dir string) layout {
	return layout{
		dir:     dir,
		config:  filepath.Join(dir, "config.toml"),
		root:    filepath.Join(dir, "root"),
		state:   filepath.Join(dir, "state"),
		sock:    filepath.Join(dir, "containerd.sock"),
		ttrpc:   filepath.Join(dir, "containerd.sock.ttrpc"),
		debug:   filepath.Join(dir, "debug.sock"),
		opt:     filepath.Join(dir, "opt"),
		cniBin:  filepath.Join(dir, "cni", "bin"),
		cniConf: filepath.Join(dir, "cni", "conf"),
		crictl:  filepath.Join(dir, "crictl.yaml"),
	}
}

// maxSocketPath is the room sockaddr_un leaves for a path (108 bytes with
// its NUL), minus the ".ttrpc" suffix containerd adds.
const maxSocketPath = 107

// checkPath refuses a path a TOML basic string or a unix socket cannot hold.
func checkPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("crirun: %s %q is not an absolute path", what, p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return fmt.Errorf("crirun: %s %q contains a quote, backslash or control character, want a plain path", what, p)
		}
	}
	return nil
}

// disabledPlugins are the snapshotters that need other file systems and the
// tracing plugins. io.containerd.runtime.v1.linux stays: the CRI plugin
// does not load without it.
var disabledPlugins = []string{
	"io.containerd.snapshotter.v1.aufs",
	"io.containerd.snapshotter.v1.btrfs",
	"io.containerd.snapshotter.v1.devmapper",
	"io.containerd.snapshotter.v1.zfs",
	"io.containerd.tracing.processor.v1.otlp",
	"io.containerd.internal.v1.tracing",
}

// configTOML is a containerd 1.6 version 2 config with everything under
// l.dir: CRI on, no TCP, no CNI, overlayfs, certsDir as config_path.
func configTOML(l layout, certsDir string) string {
	q := func(s string) string { return `"` + s + `"` }
	dis := make([]string, len(disabledPlugins))
	for i, p := range disabledPlugins {
		dis[i] = q(p)
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# written by pullpath (internal/crirun); everything lives under %s", l.dir)
	w("version = 2")
	w("root = %s", q(l.root))
	w("state = %s", q(l.state))
	w("disabled_plugins = [%s]", strings.Join(dis, ", "))
	w("")
	w("[grpc]")
	w("  address = %s", q(l.sock))
	w("")
	w("[ttrpc]")
	w("  address = %s", q(l.ttrpc))
	w("")
	w("[debug]")
	w("  address = %s", q(l.debug))
	w("  level = \"info\"")
	w("")
	w("[metrics]")
	w("  address = \"\"")
	w("")
	w("[plugins]")
	w("  [plugins.\"io.containerd.internal.v1.opt\"]")
	w("    path = %s", q(l.opt))
	w("  [plugins.\"io.containerd.grpc.v1.cri\"]")
	w("    disable_tcp_service = true")
	w("    stream_server_address = \"127.0.0.1\"")
	w("    stream_server_port = \"0\"")
	w("    [plugins.\"io.containerd.grpc.v1.cri\".containerd]")
	w("      snapshotter = \"overlayfs\"")
	w("    [plugins.\"io.containerd.grpc.v1.cri\".cni]")
	w("      bin_dir = %s", q(l.cniBin))
	w("      conf_dir = %s", q(l.cniConf))
	w("    [plugins.\"io.containerd.grpc.v1.cri\".registry]")
	w("      config_path = %s", q(certsDir))
	return b.String()
}

// prepare creates the folders and writes both config files.
func (l layout) prepare(certsDir string) error {
	if err := l.prepareDirs(); err != nil {
		return err
	}
	if err := os.WriteFile(l.config, []byte(configTOML(l, certsDir)), 0o600); err != nil {
		return fmt.Errorf("crirun: write containerd config: %w", err)
	}
	return nil
}

// prepareDirs creates the folders and writes crictl's config.
func (l layout) prepareDirs() error {
	for _, d := range []string{l.dir, l.root, l.state, l.opt, l.cniBin, l.cniConf} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("crirun: create %s: %w", d, err)
		}
	}
	// crictl reads /etc/crictl.yaml by default and warns when it is
	// missing; a private, empty-endpoint config keeps the host's out.
	if err := os.WriteFile(l.crictl, []byte("debug: false\npull-image-on-create: false\n"), 0o600); err != nil {
		return fmt.Errorf("crirun: write crictl config: %w", err)
	}
	return nil
}
