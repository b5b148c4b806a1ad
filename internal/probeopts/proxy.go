package probeopts

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// proxyFlags are probe's flags for the runtime's proxy: by default the
// walk follows the proxy settings of the node's running containerd (its
// /proc/PID/environ, else its systemd unit, drop-ins and environment
// files); these replace single values, give the environment by hand, or
// walk direct on purpose.
type proxyFlags struct {
	httpsProxy, httpProxy, noProxy string
	runtimeEnv                     string
	noNodeProxy                    bool
}

func (f *proxyFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.httpsProxy, "https-proxy", "", "the runtime's HTTPS_PROXY, instead of the node's (https://, http:// or HOST:PORT; user:password@ for an authenticating proxy)")
	fs.StringVar(&f.httpProxy, "http-proxy", "", "the runtime's HTTP_PROXY (plain-http registries only), instead of the node's")
	fs.StringVar(&f.noProxy, "no-proxy", "", "the runtime's NO_PROXY, instead of the node's (comma-separated; Go's rules: .domain, domain, IP, CIDR for IP literals only, *)")
	fs.StringVar(&f.runtimeEnv, "runtime-env", "", "the runtime's environment from FILE (a copy of /proc/PID/environ of containerd, or KEY=VALUE lines) instead of reading the node")
	fs.BoolVar(&f.noNodeProxy, "no-node-proxy", false, "walk direct on purpose, ignoring the runtime's proxy settings")
}

// complete finds the runtime's proxy settings (root is the node's
// filesystem, --host-root) and puts them in the probe's options.
func (f *proxyFlags) complete(fs *pflag.FlagSet, o *Options, root string) error {
	changed := func(name string) bool { return fs != nil && fs.Changed(name) }
	if f.noNodeProxy {
		for _, n := range []string{"https-proxy", "http-proxy", "no-proxy", "runtime-env"} {
			if changed(n) {
				return fmt.Errorf("--no-node-proxy walks direct: it cannot go with --%s", n)
			}
		}
	}
	opts := runtimecfg.ProxyDiscoveryOptions{Root: root, RuntimeEnvFile: f.runtimeEnv, NoNodeProxy: f.noNodeProxy}
	if rc := o.Pull.Runtime; rc != nil {
		opts.Runtime = rc.Runtime
	}
	for _, v := range []struct {
		name string
		val  *string
		dst  **string
	}{{"https-proxy", &f.httpsProxy, &opts.HTTPSProxy}, {"http-proxy", &f.httpProxy, &opts.HTTPProxy}} {
		if !changed(v.name) {
			continue
		}
		if err := checkProxyFlag(v.name, *v.val); err != nil {
			return err
		}
		*v.dst = v.val
	}
	if changed("no-proxy") {
		opts.NoProxy = &f.noProxy
	}
	d, err := runtimecfg.DiscoverProxy(opts)
	if err != nil {
		return err
	}
	o.Pull.Proxy = d
	return nil
}

// checkProxyFlag refuses a proxy flag Go would not use as a proxy URL.
func checkProxyFlag(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if u2, err2 := url.Parse("http://" + v); err2 == nil && u2.Host != "" {
			u, err = u2, nil
		}
	}
	if err != nil || u.Host == "" {
		return fmt.Errorf("--%s %s: want a proxy URL like http://proxy.example.com:3128", name, runtimecfg.RedactProxyValue(v))
	}
	switch u.Scheme {
	case "http", "https":
		return nil
	}
	return errors.New("--" + name + ": scheme " + u.Scheme + ": pullpath walks http:// and https:// proxies")
}
