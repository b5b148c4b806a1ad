package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// Options configure the agent. RegisterFlags binds them to a flag set; the
// zero value is not ready: call Defaults first (RegisterFlags does).
type Options struct {
	// Targets.
	Images      []string // --image, repeatable
	ConfigFile  string   // --config: a MonitorConfig file (a ConfigMap key)
	FromCluster bool     // --from-cluster: images of workloads that could land on this node
	MaxTargets  int      // bound on the target list (default 10)
	Refresh     time.Duration

	// Schedule.
	Interval     time.Duration // quick walk of every target (default 5m)
	FullInterval time.Duration // verified pull of one target (default 24h); 0 disables
	Jitter       float64       // fraction of the interval to spread runs over (default 0.1)
	ProbeTimeout time.Duration // budget of one quick walk (default 2m)
	FullTimeout  time.Duration // budget of one verified pull (default 30m)
	Once         bool          // one round of quick walks, then exit (tests, benchmarks)

	// What the probe reads: the node's own files.
	Node           string
	Pool           string // override of the Node's labels (outside Kubernetes)
	Zone           string
	Subnet         string
	Platform       string
	ResolvConf     string
	HostsFile      string
	Nameservers    []string
	CertsDir       string
	DockerCertsDir string
	ExtraCAs       []string
	DockerConfig   string
	DockerOptional bool
	ProviderConfig string // the kubelet's CredentialProviderConfig (file or directory)
	ProviderBinDir string
	CredentialTTL  time.Duration
	ExpectPrivate  bool
	Net            netcheck.Config
	// HostRoot is where the node's filesystem is (the DaemonSet mounts
	// the node's /etc, /usr and /var/lib read-only under /host): the
	// runtime's configuration and its proxy settings are read there
	// before each walk. CertsDir (with DockerCertsDir), when set, replaces
	// the runtime's registry configuration.
	HostRoot    string
	NoNodeProxy bool // walk direct on purpose

	// Outputs.
	Listen string // metrics and /status (default :9090)
	Events bool   // a Kubernetes Event on the Node when the verdict changes

	// The Kubernetes API (in-cluster defaults).
	KubeAPI       string
	KubeTokenFile string
	KubeCAFile    string
	EventNS       string
}

// Service-account files every Pod gets.
const (
	saDir       = "/var/run/secrets/kubernetes.io/serviceaccount"
	saTokenFile = saDir + "/token"
	saCAFile    = saDir + "/ca.crt"
)

// Defaults sets every default.
func (o *Options) Defaults() {
	*o = Options{
		MaxTargets:    10,
		Refresh:       time.Hour,
		Interval:      5 * time.Minute,
		FullInterval:  24 * time.Hour,
		Jitter:        0.1,
		ProbeTimeout:  2 * time.Minute,
		FullTimeout:   30 * time.Minute,
		ResolvConf:    "/etc/resolv.conf",
		HostsFile:     "/etc/hosts",
		CredentialTTL: time.Hour,
		Listen:        ":9090",
		Events:        true,
		KubeTokenFile: saTokenFile,
		KubeCAFile:    saCAFile,
		EventNS:       "default",
		Net:           netcheck.Config{DNSTimeout: 2 * time.Second, ConnectTimeout: 5 * time.Second, TLSTimeout: 5 * time.Second},
	}
	o.Node = os.Getenv("NODE_NAME")
	if h, p := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"); h != "" && p != "" {
		o.KubeAPI = "https://" + net.JoinHostPort(h, p)
	}
}

type stringList struct{ p *[]string }

func (s stringList) String() string {
	if s.p == nil {
		return ""
	}
	return strings.Join(*s.p, ",")
}
func (s stringList) Set(v string) error { *s.p = append(*s.p, v); return nil }

// RegisterFlags sets the defaults and binds every option to fs. The same
// flags serve `pullpath monitor` and the pullpath-agent binary.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	o.Defaults()
	fs.Var(stringList{&o.Images}, "image", "image to walk from this node; repeatable")
	fs.StringVar(&o.ConfigFile, "config", "", "a MonitorConfig JSON file (images, interval, fullInterval), e.g. a mounted ConfigMap key")
	fs.BoolVar(&o.FromCluster, "from-cluster", false, "also walk the distinct images of the workloads that could land on this node (Deployments, StatefulSets, DaemonSets)")
	fs.IntVar(&o.MaxTargets, "max-targets", o.MaxTargets, "at most this many images (the most used first)")
	fs.DurationVar(&o.Refresh, "refresh", o.Refresh, "how often --from-cluster re-reads the workloads and the Node's labels")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "quick walk of every image (every endpoint, the first bytes of each blob) this often")
	fs.DurationVar(&o.FullInterval, "full-interval", o.FullInterval, "verified pull of one image (every byte, every digest) this often; 0 disables")
	fs.Float64Var(&o.Jitter, "jitter", o.Jitter, "spread each run over this fraction of its interval, so a fleet does not hit the registry at once (0 to 1)")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", o.ProbeTimeout, "budget of one quick walk")
	fs.DurationVar(&o.FullTimeout, "full-timeout", o.FullTimeout, "budget of one verified pull")
	fs.BoolVar(&o.Once, "once", false, "walk every image once, print the metrics to stdout and exit")
	fs.StringVar(&o.Node, "node", o.Node, "this node's name (default: $NODE_NAME, else the hostname)")
	fs.StringVar(&o.Pool, "pool", "", "node pool for pullpath_node_info (default: from the Node's labels, as explain reads them)")
	fs.StringVar(&o.Zone, "zone", "", "zone for pullpath_node_info (default: from the Node's labels)")
	fs.StringVar(&o.Subnet, "subnet", "", "subnet for pullpath_node_info (default: from the Node's labels, else its InternalIP /24)")
	fs.StringVar(&o.Platform, "platform", "", "platform to select from an image index, os/arch[/variant] (default: this node's)")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf, "the node's resolv.conf (in a Pod: the host's, mounted read-only)")
	fs.StringVar(&o.HostsFile, "hosts-file", o.HostsFile, "the node's hosts file (in a Pod: the host's, mounted read-only)")
	fs.Var(stringList{&o.Nameservers}, "nameserver", "query this nameserver (HOST or HOST:PORT) instead of resolv.conf's; repeatable")
	fs.StringVar(&o.CertsDir, "certs-dir", o.CertsDir, "a registry folder (HOST/hosts.toml, CAs) to walk with instead of the runtime's own configuration (default: the node's runtime config, found under --host-root before every walk)")
	fs.StringVar(&o.DockerCertsDir, "docker-certs-dir", o.DockerCertsDir, "docker certs.d (HOST/ca.crt), read with --certs-dir")
	fs.Var(stringList{&o.ExtraCAs}, "registry-ca", "extra CA file to trust for every host; repeatable")
	fs.StringVar(&o.DockerConfig, "docker-config", "", "docker config.json with the node's registry credentials (e.g. mounted from a Secret); default anonymous")
	fs.BoolVar(&o.DockerOptional, "docker-config-optional", false, "a missing --docker-config file means anonymous (an optional Secret that was not created), not an error")
	fs.StringVar(&o.ProviderConfig, "image-credential-provider-config", "", "the kubelet's CredentialProviderConfig (the node's file, mounted read-only): run its plugins as the kubelet does; answers are kept for their cacheDuration")
	fs.StringVar(&o.ProviderBinDir, "image-credential-provider-bin-dir", "", "the directory of the credential provider plugins (the kubelet's flag)")
	fs.DurationVar(&o.CredentialTTL, "credential-ttl", o.CredentialTTL, "keep credentials this long before asking their source again (a credential helper, a token service); 0 asks every walk")
	fs.BoolVar(&o.ExpectPrivate, "expect-private", false, "every host must resolve to a private address")
	fs.StringVar(&o.HostRoot, "host-root", "/", "where the node's filesystem is (the DaemonSet mounts the node's /etc, /usr and /var/lib read-only under /host: --host-root=/host): every walk follows the node's runtime as it is configured there (its config file and registry folders: containerd's config_path, k3s's under /var/lib/rancher, CRI-O's registries.conf) and the proxy settings of its process or unit files")
	fs.BoolVar(&o.NoNodeProxy, "no-node-proxy", false, "walk direct on purpose, ignoring the proxy settings of the node's containerd")
	fs.DurationVar(&o.Net.DNSTimeout, "dns-timeout", o.Net.DNSTimeout, "budget of each DNS query")
	fs.DurationVar(&o.Net.ConnectTimeout, "connect-timeout", o.Net.ConnectTimeout, "budget of each TCP connect, per address")
	fs.DurationVar(&o.Net.TLSTimeout, "tls-timeout", o.Net.TLSTimeout, "budget of each TLS handshake")
	fs.StringVar(&o.Listen, "listen", o.Listen, "address of /metrics, /status and /healthz")
	fs.BoolVar(&o.Events, "events", o.Events, "post a Kubernetes Event on this Node when its verdict changes (needs the API)")
	fs.StringVar(&o.KubeAPI, "kube-api", o.KubeAPI, "Kubernetes API URL (default: in-cluster, from $KUBERNETES_SERVICE_HOST); empty: no API")
	fs.StringVar(&o.KubeTokenFile, "kube-token-file", o.KubeTokenFile, "bearer token file for the API (re-read as it rotates)")
	fs.StringVar(&o.KubeCAFile, "kube-ca-file", o.KubeCAFile, "CA bundle of the API")
}

// FileConfig is the --config file: a ConfigMap key mounted into the Pod.
// It is JSON (which is also YAML, so it sits in a ConfigMap as it is): the
// agent links no YAML parser, one less thing on every node.
//
//	{"apiVersion": "pullpath/v1", "kind": "MonitorConfig",
//	 "images": ["registry.example.com/team/app:1.0"],
//	 "interval": "5m", "fullInterval": "24h"}
type FileConfig struct {
	APIVersion   string   `json:"apiVersion"`
	Kind         string   `json:"kind"`
	Images       []string `json:"images"`
	Interval     string   `json:"interval,omitempty"`
	FullInterval string   `json:"fullInterval,omitempty"`
}

// LoadConfigFile reads a MonitorConfig into o: its images are added to
// --image's; its intervals apply where the flags kept their defaults
// (setFlags names the flags given on the command line).
func (o *Options) LoadConfigFile(path string, setFlags map[string]bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config %s: %v", path, pathErr(err))
	}
	var c FileConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("--config %s: not a MonitorConfig (JSON with apiVersion, kind, images, interval, fullInterval): %v", path, firstLine(err.Error()))
	}
	if c.Kind != "" && c.Kind != "MonitorConfig" {
		return fmt.Errorf("--config %s: kind %q, want MonitorConfig", path, c.Kind)
	}
	if c.APIVersion != "" && c.APIVersion != "pullpath/v1" {
		return fmt.Errorf("--config %s: apiVersion %q, want pullpath/v1", path, c.APIVersion)
	}
	for i, img := range c.Images {
		if strings.TrimSpace(img) == "" {
			return fmt.Errorf("--config %s: images[%d] is empty, want an image reference", path, i)
		}
	}
	o.Images = append(o.Images, c.Images...)
	for _, f := range []struct {
		name, flag, v string
		p             *time.Duration
	}{{"interval", "interval", c.Interval, &o.Interval}, {"fullInterval", "full-interval", c.FullInterval, &o.FullInterval}} {
		if f.v == "" || setFlags[f.flag] {
			continue
		}
		d, err := time.ParseDuration(f.v)
		if err != nil {
			return fmt.Errorf("--config %s: %s %q: want a duration like 5m", path, f.name, f.v)
		}
		*f.p = d
	}
	return nil
}

// Validate checks every option and returns a one-line error naming the
// first bad one. It also parses every image, so a bad reference in the
// list stops the agent at start, not at its first walk.
func (o *Options) Validate() error {
	if len(o.Images) == 0 && !o.FromCluster {
		return errors.New("no image to walk: give --image IMAGE (repeatable), a --config file with images, or --from-cluster")
	}
	seen := map[string]bool{}
	for _, img := range o.Images {
		if _, err := runtimecfg.ParseReference(img); err != nil {
			return err
		}
		if seen[img] {
			return fmt.Errorf("image %q is listed twice", img)
		}
		seen[img] = true
	}
	if o.MaxTargets < 1 || o.MaxTargets > 100 {
		return fmt.Errorf("--max-targets %d: want 1 to 100 (every image is walked every interval)", o.MaxTargets)
	}
	if len(o.Images) > o.MaxTargets {
		return fmt.Errorf("%d images listed, more than --max-targets %d", len(o.Images), o.MaxTargets)
	}
	for name, d := range map[string]time.Duration{"--interval": o.Interval, "--probe-timeout": o.ProbeTimeout, "--full-timeout": o.FullTimeout,
		"--dns-timeout": o.Net.DNSTimeout, "--connect-timeout": o.Net.ConnectTimeout, "--tls-timeout": o.Net.TLSTimeout} {
		if d <= 0 {
			return fmt.Errorf("%s %s: want a positive duration like 5m", name, d)
		}
	}
	if o.FullInterval < 0 {
		return fmt.Errorf("--full-interval %s: want a duration like 24h, or 0 to disable", o.FullInterval)
	}
	if o.FullInterval > 0 && o.FullInterval < o.Interval {
		return fmt.Errorf("--full-interval %s is shorter than --interval %s: the verified pull is the slow schedule", o.FullInterval, o.Interval)
	}
	if o.FromCluster && o.Refresh < time.Minute {
		return fmt.Errorf("--refresh %s: want at least 1m (every node lists the workloads)", o.Refresh)
	}
	if o.CredentialTTL < 0 {
		return fmt.Errorf("--credential-ttl %s: want a duration, or 0", o.CredentialTTL)
	}
	if o.ProviderBinDir != "" && o.ProviderConfig == "" {
		return errors.New("--image-credential-provider-bin-dir needs --image-credential-provider-config")
	}
	if o.ProviderConfig != "" && o.DockerConfig != "" {
		return errors.New("--image-credential-provider-config is the kubelet's identity and replaces --docker-config: give one or the other")
	}
	if o.Jitter < 0 || o.Jitter > 1 {
		return fmt.Errorf("--jitter %v: want 0 to 1", o.Jitter)
	}
	if o.ProbeTimeout > o.Interval {
		return fmt.Errorf("--probe-timeout %s is longer than --interval %s", o.ProbeTimeout, o.Interval)
	}
	if !o.Once {
		if _, _, err := net.SplitHostPort(o.Listen); err != nil {
			return fmt.Errorf("--listen %q: want HOST:PORT or :PORT", o.Listen)
		}
	}
	if o.FromCluster && o.KubeAPI == "" {
		return errors.New("--from-cluster needs the Kubernetes API: run in a Pod (in-cluster) or give --kube-api")
	}
	if o.Platform != "" && strings.Count(o.Platform, "/") < 1 {
		return fmt.Errorf("--platform %q: want os/arch[/variant], like linux/amd64", o.Platform)
	}
	if o.Node == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return errors.New("--node is empty and the hostname is unknown: give --node or set NODE_NAME from spec.nodeName")
		}
		o.Node = h
	}
	return nil
}

func pathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
