package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Step 0 of the walk: which runtime pulls on this node, which file it
// reads, and how that was found. In order:
//
//  1. Flags: --runtime-config FILE (with --runtime) names the file.
//  2. The running runtime in the probe's network namespace: /proc/PID/
//     cmdline of containerd (its --config/-c; k3s's and rke2's embedded
//     containerd is a containerd process started with -c under
//     /var/lib/rancher) or crio (--config). When it runs in another mount
//     namespace its files are read through /proc/PID/root.
//  3. The layouts on disk (Layouts), in their order: the first whose
//     config file exists.
//  4. None: containerd with its built-in defaults.
//
// Then the runtime's own reader (loaders) reads the file by that runtime's
// rules and answers with a RegistryConfig. --certs-dir replaces the
// registry part on purpose, and the report says so.

// Runtime names.
const (
	RuntimeContainerd = "containerd"
	RuntimeCRIO       = "cri-o"
)

// Layout is one known way a node keeps its runtime's configuration.
type Layout struct {
	Name    string // k3s, rke2, talos, canonical-kubernetes, microk8s, containerd, cri-o
	Runtime string // RuntimeContainerd or RuntimeCRIO
	Config  string // the main config file the runtime reads in this layout
	// ArgsFile holds the runtime's command line in this layout (Canonical
	// Kubernetes' snap args): its --config wins over Config.
	ArgsFile string
	// Folders are the node's folders this layout's configuration lives in,
	// which a Pod mounts to read it (sweep, monitor): the config's, the
	// registry folders', and the files the distribution renders them from.
	Folders []string
	// Under is a path prefix that marks a config file named by a running
	// process as this layout's ("" for none).
	Under string
	// Marks are folders whose presence marks the layout on disk when
	// Config is absent (CRI-O packages since 1.29 ship
	// /etc/crio/crio.conf.d/10-crio.conf and no crio.conf; OpenShift's MCO
	// writes crio.conf.d/00-default).
	Marks []string
}

// layouts are the layouts pullpath knows, in the order they are tried when
// no running runtime names its file. A distribution that renders its own
// config (k3s, rke2, Talos, the snaps) comes before the default file it
// leaves unread.
var layouts = []Layout{
	{Name: "k3s", Runtime: RuntimeContainerd, Config: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
		Folders: []string{"/var/lib/rancher/k3s/agent/etc/containerd", "/etc/rancher/k3s"}, Under: "/var/lib/rancher/k3s/"},
	{Name: "rke2", Runtime: RuntimeContainerd, Config: "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
		Folders: []string{"/var/lib/rancher/rke2/agent/etc/containerd", "/etc/rancher/rke2"}, Under: "/var/lib/rancher/rke2/"},
	{Name: "talos", Runtime: RuntimeContainerd, Config: "/etc/cri/containerd.toml",
		Folders: []string{"/etc/cri"}, Under: "/etc/cri/"},
	{Name: "canonical-kubernetes", Runtime: RuntimeContainerd, Config: "/etc/containerd/config.toml", ArgsFile: "/var/snap/k8s/common/args/containerd",
		Folders: []string{"/etc/containerd", "/var/snap/k8s/common/args"}},
	{Name: "microk8s", Runtime: RuntimeContainerd, Config: "/var/snap/microk8s/current/args/containerd.toml",
		Folders: []string{"/var/snap/microk8s/current/args"}, Under: "/var/snap/microk8s/"},
	{Name: "k0s", Runtime: RuntimeContainerd, Config: "/etc/k0s/containerd.toml",
		Folders: []string{"/etc/k0s"}, Under: "/etc/k0s/"},
	{Name: "containerd", Runtime: RuntimeContainerd, Config: "/etc/containerd/config.toml",
		Folders: []string{"/etc/containerd", "/etc/docker/certs.d"}},
	{Name: "cri-o", Runtime: RuntimeCRIO, Config: "/etc/crio/crio.conf", Marks: []string{"/etc/crio/crio.conf.d"},
		Folders: []string{"/etc/crio", "/etc/containers", "/etc/docker/certs.d"}},
}

// Layouts are the layouts pullpath knows, in the order it tries them.
func Layouts() []Layout { return append([]Layout(nil), layouts...) }

// RuntimeOptions say where to look and what the caller decided.
type RuntimeOptions struct {
	Root      string // the node's filesystem: "/" on the node, "/host" in a Pod
	ProcRoot  string // the node's /proc; default Root/proc
	SelfNetNS string // the probe's network namespace (readlink /proc/self/ns/net); default read here
	SelfMntNS string // the probe's mount namespace; default read here
	// Runtime and ConfigFile: --runtime and --runtime-config (a node path);
	// "" finds them.
	Runtime    string
	ConfigFile string
	// CertsDir and DockerCertsDir: --certs-dir and --docker-certs-dir when
	// given (nil: not given). CertsDir replaces the runtime's registry
	// configuration on purpose.
	CertsDir, DockerCertsDir *string
}

// RuntimeConfig is what step 0 found: the runtime, its file, how it was
// found, and its registry configuration as the runtime reads it.
type RuntimeConfig struct {
	Runtime     string
	Layout      string
	Version     string // "1.6.20", "" when unknown
	VersionFrom string // where the version was read
	Rules       string // whose rules were applied: "containerd 1.6/1.7", "containerd 2.x (config version 3)"
	ConfigFile  string // node path of the main file; "" when none
	// Files are every config file read, node paths, in the runtime's
	// merge order (the main file, then imports or drop-ins).
	Files    []string
	HowFound string
	PID      int      // the running runtime's, 0 when none was read
	Args     []string // its command line (nil when none)
	// Env is its environment (/proc/PID/environ; nil when none was read):
	// for the loaders (CRI-O's CONTAINER_* flags), never reported.
	Env        map[string]string
	Candidates []RuntimeCandidate
	// Override says what a flag replaced ("--certs-dir /x: ..."); "" when
	// the runtime's own configuration is walked.
	Override string
	// Registry is the seam: the walk asks it for each reference's hosts.
	Registry RegistryConfig
	// Sources are where the registry configuration comes from, in the
	// order the runtime reads them.
	Sources  []RegistrySource
	Warnings []ConfigWarning
	Notes    []string
	// Root is where the node's files were read: "/" (or Root of the
	// options), or /proc/PID/root for a runtime in another mount
	// namespace. Paths in the fields above are the node's.
	Root string
	// Limits are the pull's limits from the config (image_pull_progress_timeout).
	Limits *PullLimits

	procRoot string
}

// RuntimeCandidate is one runtime configuration discovery saw.
type RuntimeCandidate struct {
	Runtime    string
	Layout     string
	ConfigFile string // node path
	PID        int    // a running process's, 0 for a file on disk
	Seen       string // how: "running (pid 412)", "on disk", "--runtime-config"
	Chosen     bool
	Why        string // why it was chosen, or why not

	noCRI bool // its config disables the CRI plugin
}

// RegistrySource is one place the runtime's registry configuration comes
// from: a config_path folder, a hosts.toml, inline mirrors or configs, a
// registries.conf and its drop-ins.
type RegistrySource struct {
	Kind     string // config_path, hosts.toml, mirrors, configs, registries.conf, registries.conf.d, certs.d
	Path     string // node path of the file or folder
	Line     int    // 0 when there is none
	Registry string // the registry it is for; "" for all
	Detail   string // what it says, no secret
	Missing  bool   // a folder or file the config names that is not there
}

// ConfigWarning is registry configuration that will bite: a file the
// runtime never reads, a restart pending. Ignored and Read name the file
// ignored and the one read instead.
type ConfigWarning struct {
	Code    verdict.Code
	Message string
	Ignored string
	Read    string
}

// runtimeLoader reads one runtime's configuration once discovery chose its
// file: it sets rc.Registry, and Files, Rules, Sources, Warnings, Notes as
// it reads. The error is a file the runtime itself would refuse.
type runtimeLoader func(o RuntimeOptions, rc *RuntimeConfig) error

// loaders are the runtimes' readers, one line each.
var loaders = map[string]runtimeLoader{
	RuntimeContainerd: loadContainerd,
	RuntimeCRIO:       loadCRIO,
}

// DiscoverRuntime finds the node's runtime and reads its registry
// configuration. The error is for bad input only (a --runtime-config that
// does not exist, a config file the runtime itself would refuse).
func DiscoverRuntime(o RuntimeOptions) (*RuntimeConfig, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.ProcRoot == "" {
		o.ProcRoot = filepath.Join(o.Root, "proc")
	}
	if o.Runtime != "" && loaders[o.Runtime] == nil {
		return nil, fmt.Errorf("--runtime %q: want %s or %s", o.Runtime, RuntimeContainerd, RuntimeCRIO)
	}
	rc := &RuntimeConfig{Root: o.Root, procRoot: o.ProcRoot}
	if err := rc.choose(o); err != nil {
		return nil, err
	}
	if err := loaders[rc.Runtime](o, rc); err != nil {
		return nil, err
	}
	if o.CertsDir != nil {
		rc.override(o)
	}
	return rc, nil
}

// override puts --certs-dir in place of the runtime's registry folders.
func (rc *RuntimeConfig) override(o RuntimeOptions) {
	docker := ""
	if o.DockerCertsDir != nil {
		docker = *o.DockerCertsDir
	}
	was := "the runtime's own registry configuration"
	if len(rc.Sources) > 0 {
		var s []string
		for _, src := range rc.Sources {
			if src.Kind == "config_path" || src.Kind == "mirrors" || src.Kind == "registries.conf" {
				s = append(s, src.Kind+" "+src.Path)
			}
		}
		if len(s) > 0 {
			was += " (" + strings.Join(s, ", ") + ")"
		}
	}
	rc.Override = fmt.Sprintf("--certs-dir %s replaces %s: the walk reads the folder given, not what the runtime reads", *o.CertsDir, was)
	rc.Registry = CertsDirs{Dirs: []string{*o.CertsDir}, DockerDir: docker}
	rc.Sources = []RegistrySource{{Kind: "config_path", Path: *o.CertsDir, Detail: "--certs-dir"}}
}

// choose fills Runtime, Layout, ConfigFile, HowFound and Candidates.
func (rc *RuntimeConfig) choose(o RuntimeOptions) error {
	procs, notes := runtimeProcesses(o)
	rc.Notes = append(rc.Notes, notes...)
	var cands []RuntimeCandidate
	for _, p := range procs {
		cands = append(cands, RuntimeCandidate{Runtime: p.runtime, Layout: layoutOf(p.runtime, p.config), ConfigFile: p.config, PID: p.pid, Seen: p.seen()})
	}
	cands = append(cands, layoutCandidates(o.Root)...)

	pick := -1
	switch {
	case o.ConfigFile != "":
		runtime := o.Runtime
		if runtime == "" {
			runtime = runtimeOfFile(o.ConfigFile)
		}
		if _, err := os.Stat(filepath.Join(o.Root, o.ConfigFile)); err != nil {
			return fmt.Errorf("--runtime-config %s: %v (want the runtime's config file, e.g. /etc/containerd/config.toml)", o.ConfigFile, unwrapPathError(err))
		}
		cands = append([]RuntimeCandidate{{Runtime: runtime, Layout: layoutOf(runtime, o.ConfigFile), ConfigFile: o.ConfigFile, Seen: "--runtime-config"}}, cands...)
		pick = 0
		cands[0].Why = "given by --runtime-config"
	default:
		for i := range cands {
			cands[i].noCRI = criDisabled(filepath.Join(o.Root, cands[i].ConfigFile))
		}
		pick = chooseCandidate(cands, o.Runtime)
	}
	rc.Candidates = cands
	if pick < 0 {
		rc.Runtime = o.Runtime
		if rc.Runtime == "" {
			rc.Runtime = RuntimeContainerd
		}
		rc.Layout = "none"
		rc.HowFound = "no running runtime seen and no known layout on disk: " + rc.Runtime + "'s built-in defaults"
		return nil
	}
	rc.take(&cands[pick], procs, o)
	return nil
}

// layoutCandidates are the known layouts found on disk under root: by
// their config file, or by a mark that stands for it.
func layoutCandidates(root string) []RuntimeCandidate {
	var cands []RuntimeCandidate
	for _, l := range layouts {
		cfg := l.Config
		if l.ArgsFile != "" {
			args, ok := readArgsFile(filepath.Join(root, l.ArgsFile))
			if !ok {
				continue // not this layout: its args file is its mark
			}
			if c := argValue(args, "--config", "-c"); c != "" {
				cfg = c
			}
		}
		seen := "on disk"
		if _, err := os.Stat(filepath.Join(root, cfg)); err != nil {
			seen = ""
			for _, m := range l.Marks {
				if _, err := os.Stat(filepath.Join(root, m)); err == nil {
					seen = "on disk (" + m + ", no " + filepath.Base(cfg) + ")"
					break
				}
			}
			if seen == "" {
				continue
			}
		}
		cands = append(cands, RuntimeCandidate{Runtime: l.Runtime, Layout: l.Name, ConfigFile: cfg, Seen: seen})
	}
	return cands
}

// take makes c the runtime in use and says how it was found: given, the
// running process (its arguments, environment and mount namespace), or
// the layout on disk.
func (rc *RuntimeConfig) take(c *RuntimeCandidate, procs []runtimeProc, o RuntimeOptions) {
	c.Chosen = true
	rc.Runtime, rc.Layout, rc.ConfigFile, rc.PID = c.Runtime, c.Layout, c.ConfigFile, c.PID
	switch {
	case c.Seen == "--runtime-config":
		rc.HowFound = "--runtime-config " + c.ConfigFile
	case c.PID > 0:
		p := procByPID(procs, c.PID)
		rc.Args = p.args
		rc.Env = readEnviron(filepath.Join(o.ProcRoot, strconv.Itoa(p.pid), "environ"))
		rc.HowFound = fmt.Sprintf("the running %s (pid %d): %s", p.comm, p.pid, p.configFrom)
		if p.root != "" {
			rc.Root = p.root
			rc.HowFound += fmt.Sprintf("; it runs in another mount namespace, so its files are read through %s", p.root)
		}
	default:
		// the file, or the mark that stood for it: "crio.conf.d, no crio.conf"
		where := strings.TrimSuffix(strings.TrimPrefix(c.Seen, "on disk ("), ")")
		if where == "on disk" {
			where = c.ConfigFile
		}
		rc.HowFound = fmt.Sprintf("no running runtime seen; the %s layout on disk (%s)", c.Layout, where)
	}
	if c.Why == "" {
		c.Why = rc.HowFound
	}
}

// chooseCandidate picks the candidate the node's kubelet most likely
// uses: a running process over files on disk; among processes the one
// whose config belongs to a known Kubernetes layout, then the oldest;
// among files the first layout. Every other candidate says why not.
func chooseCandidate(cands []RuntimeCandidate, runtime string) int {
	pick := -1
	for i, c := range cands {
		if runtime != "" && c.Runtime != runtime {
			cands[i].Why = "not the runtime asked for (--runtime " + runtime + ")"
			continue
		}
		if pick < 0 {
			pick = i
			continue
		}
		p := cands[pick]
		switch {
		case c.noCRI:
			cands[i].Why = "its config disables the CRI plugin: it serves no kubelet (Talos's system containerd is one)"
		case p.noCRI:
			cands[pick].Why = "its config disables the CRI plugin: it serves no kubelet (Talos's system containerd is one)"
			pick = i
		case p.PID > 0 && c.PID == 0:
			cands[i].Why = fmt.Sprintf("a file on disk; the running %s (pid %d) reads %s", p.Runtime, p.PID, p.ConfigFile)
		case p.PID > 0 && c.PID > 0 && p.Layout == "containerd" && c.Layout != "containerd":
			cands[pick].Why = fmt.Sprintf("another %s process (pid %d) reads the %s layout's %s", c.Runtime, c.PID, c.Layout, c.ConfigFile)
			pick = i
		case p.PID > 0 && c.PID > 0:
			cands[i].Why = fmt.Sprintf("pid %d (%s) came first; pass --runtime-config to choose", p.PID, p.ConfigFile)
		case p.ConfigFile == c.ConfigFile:
			cands[i].Why = "the same file"
		default:
			cands[i].Why = fmt.Sprintf("the %s layout (%s) comes first: %s", p.Layout, p.ConfigFile, layoutReason(p.Layout))
		}
	}
	return pick
}

// criDisabled reports whether a containerd config's disabled_plugins
// turn the CRI off.
func criDisabled(file string) bool {
	b, err := readBounded(file, 4<<20)
	if err != nil {
		return false
	}
	var c struct {
		Disabled []string `toml:"disabled_plugins"`
	}
	if toml.Unmarshal(b, &c) != nil {
		return false
	}
	for _, d := range c.Disabled {
		switch d {
		case "cri", criV2Section, criImagesSection:
			return true
		}
	}
	return false
}

// layoutReason says why a layout wins over the ones after it.
func layoutReason(name string) string {
	switch name {
	case "k3s", "rke2":
		return name + " renders its config at every start and runs its own containerd on it"
	case "talos":
		return "Talos runs the CRI's containerd on it"
	case "containerd":
		return "the default file of a containerd started without --config"
	}
	return "it is earlier in pullpath's list of layouts"
}

// layoutOf names the layout a config file belongs to.
func layoutOf(runtime, file string) string {
	for _, l := range layouts {
		if l.Runtime != runtime {
			continue
		}
		if file == l.Config || (l.Under != "" && strings.HasPrefix(file, l.Under)) {
			return l.Name
		}
	}
	return runtime
}

// runtimeOfFile guesses the runtime from a config file's name.
func runtimeOfFile(file string) string {
	if strings.Contains(filepath.Base(file), "crio") || strings.HasPrefix(file, "/etc/crio/") {
		return RuntimeCRIO
	}
	return RuntimeContainerd
}

// runtimeProc is one running runtime process.
type runtimeProc struct {
	pid        int
	comm       string
	runtime    string
	args       []string
	config     string // node path of its config file
	configFrom string // "--config /x" or "no --config: the default /etc/containerd/config.toml"
	root       string // /proc/PID/root when it runs in another mount namespace, else ""
}

func (p runtimeProc) seen() string { return fmt.Sprintf("running (pid %d)", p.pid) }

func procByPID(ps []runtimeProc, pid int) runtimeProc {
	for _, p := range ps {
		if p.pid == pid {
			return p
		}
	}
	return runtimeProc{}
}

// runtimeComms are the process names of the runtimes, with their config
// flags and default config file.
var runtimeComms = map[string]struct {
	runtime string
	flags   []string
	def     string
}{
	"containerd": {RuntimeContainerd, []string{"--config", "-c"}, "/etc/containerd/config.toml"},
	"crio":       {RuntimeCRIO, []string{"--config", "-c"}, "/etc/crio/crio.conf"},
}

// runtimeProcesses lists the runtime processes in the probe's network
// namespace, oldest first; notes say what was skipped.
func runtimeProcesses(o RuntimeOptions) ([]runtimeProc, []string) {
	selfNet, selfMnt := o.SelfNetNS, o.SelfMntNS
	if selfNet == "" {
		selfNet, _ = os.Readlink("/proc/self/ns/net")
	}
	if selfMnt == "" {
		selfMnt, _ = os.Readlink("/proc/self/ns/mnt")
	}
	ents, err := os.ReadDir(o.ProcRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []string{fmt.Sprintf("no %s: running runtimes cannot be seen here, the layouts on disk decide", o.ProcRoot)}
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("cannot list %s: %v", o.ProcRoot, unwrapPathError(err))}
	}
	var out []runtimeProc
	var notes []string
	otherNS := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(o.ProcRoot, e.Name())
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue
		}
		rt, ok := runtimeComms[strings.TrimSpace(string(comm))]
		if !ok {
			continue
		}
		if same, gone, note := sameNetNS(dir, selfNet, strings.TrimSpace(string(comm)), pid); gone {
			continue
		} else if note != "" {
			notes = append(notes, note)
			continue
		} else if !same {
			otherNS++
			continue
		}
		raw, err := readBounded(filepath.Join(dir, "cmdline"), 64<<10)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s pid %d: cannot read its command line (%v)", strings.TrimSpace(string(comm)), pid, err))
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		p := runtimeProc{pid: pid, comm: strings.TrimSpace(string(comm)), runtime: rt.runtime, args: args}
		if c, flag := argFlag(args[1:], rt.flags...); c != "" {
			p.config, p.configFrom = c, flag+" "+c
		} else {
			p.config, p.configFrom = rt.def, "no --config: the default "+rt.def
		}
		if !filepath.IsAbs(p.config) {
			if cwd, err := os.Readlink(filepath.Join(dir, "cwd")); err == nil {
				p.config = filepath.Join(cwd, p.config)
			}
		}
		if mnt, err := os.Readlink(filepath.Join(dir, "ns", "mnt")); err == nil && selfMnt != "" && mnt != selfMnt {
			if _, err := os.Stat(filepath.Join(dir, "root", "/")); err == nil {
				p.root = filepath.Join(dir, "root")
			}
		}
		out = append(out, p)
	}
	if otherNS > 0 {
		notes = append(notes, fmt.Sprintf("%d runtime process(es) in other network namespaces were not considered", otherNS))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out, notes
}

// sameNetNS reports whether the process of /proc folder dir is in network
// namespace self (always, when self is ""); gone, that it has none any
// more: it exited since /proc was listed, or it is a zombie waiting for
// its parent (its ns links are gone), and pulls nothing; note says why it
// could not tell (not root).
func sameNetNS(dir, self, comm string, pid int) (same, gone bool, note string) {
	if self == "" {
		return true, false, ""
	}
	ns, err := os.Readlink(filepath.Join(dir, "ns", "net"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, true, ""
	}
	if err != nil {
		return false, false, fmt.Sprintf("%s pid %d: cannot read its network namespace (%v): run as root", comm, pid, unwrapPathError(err))
	}
	return ns == self, false, ""
}

// argValue is the value of the first of names in args ("--config X",
// "--config=X", "-c X"), "" when absent.
func argValue(args []string, names ...string) string {
	v, _ := argFlag(args, names...)
	return v
}

// argFlag is argValue and the flag that gave it.
func argFlag(args []string, names ...string) (value, flag string) {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], n
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v, n
			}
		}
	}
	return "", ""
}

// readEnviron reads a /proc/PID/environ; nil when it cannot.
func readEnviron(path string) map[string]string {
	b, err := readBounded(path, 1<<20)
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// readArgsFile reads a snap's args file (one flag per line, shell words).
func readArgsFile(path string) ([]string, bool) {
	b, err := readBounded(path, 64<<10)
	if err != nil {
		return nil, false
	}
	var args []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, w := range strings.Fields(line) {
			args = append(args, strings.Trim(w, `"'`))
		}
	}
	return args, true
}

// ReadPath is where a node path is read from here (under Root).
func (rc *RuntimeConfig) ReadPath(p string) string { return underRoot(rc.Root, p) }

// readNodeFile reads a node file under rc.Root, bounded; a missing file is
// (nil, fs.ErrNotExist).
func (rc *RuntimeConfig) readNodeFile(p string) ([]byte, error) {
	b, err := readBounded(underRoot(rc.Root, p), 4<<20)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	return b, err
}
